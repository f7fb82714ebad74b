"""The generated protobuf / gRPC modules (package `plrank.v1`).

They are generated at build time by protoc into <build>/clients/python/gen
(see README.md) and imported under their own package name, `plrank.v1`,
exactly as protoc's generated imports expect; that directory must be on
sys.path (PYTHONPATH, the plrank-client-py wrapper, or `pip install` of it).
"""

try:
    from plrank.v1 import ranker_pb2 as ranker_pb2
    from plrank.v1 import ranker_pb2_grpc as ranker_pb2_grpc
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError(
        "plrank_client needs the generated stubs (package plrank.v1): build "
        "the CMake target plrank_python_stubs and put "
        "<build>/clients/python/gen on PYTHONPATH, or use the "
        "<build>/bin/plrank-client-py wrapper (see clients/python/README.md)"
    ) from error

__all__ = ["ranker_pb2", "ranker_pb2_grpc"]
