"""The Open Inference Protocol (KServe v2) and the HTTP port, end to end.

Clients written from the protocol's specification, not from the server's
code: Python grpcio with messages protoc generates from
proto/inference/grpc_predict_v2.proto (generic method paths, no server
stubs), plain HTTP (http.client) and curl. A real plrank-server on loopback
serves two trained versions; scores must equal plrank-eval's bit for bit.

Run: python3 -m pytest test_open_inference.py --bin_dir=BUILD/bin
     --protoc=PROTOC --proto_root=SOURCE/proto
"""

import http.client
import json
import math
import os
import re
import struct
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest

NUM_FEATURES = 6


def run(argv, **kwargs):
    return subprocess.run(argv, check=True, capture_output=True, text=True,
                          **kwargs)


class Server:
    def __init__(self, bin_dir: Path, base: Path, config: Path, log: Path):
        out = log.with_suffix(".out")
        self.process = subprocess.Popen(
            [str(bin_dir / "plrank-server"), "--host=127.0.0.1", "--port=0",
             "--metrics_port=0", "--http_port=0", "--poll_interval_seconds=0",
             "--max_documents_per_request=50", "--max_batch_queries=3",
             f"--model_base_path={base}", f"--model_config_file={config}"],
            stdout=open(out, "w"), stderr=open(log, "w"), text=True)
        ports = {}
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and len(ports) < 3:
            if self.process.poll() is not None:
                break
            for line in out.read_text().splitlines():
                match = re.match(r"(listening|metrics|http) on \S+:(\d+)$", line)
                if match:
                    ports[match.group(1)] = int(match.group(2))
            time.sleep(0.05)
        if len(ports) < 3:
            self.stop()
            raise AssertionError("server did not start: " + log.read_text())
        self.grpc_port = ports["listening"]
        self.metrics_port = ports["metrics"]
        self.http_port = ports["http"]

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=15)


@pytest.fixture(scope="module")
def env(request, tmp_path_factory):
    bin_dir = Path(request.config.getoption("--bin_dir")).resolve()
    protoc = request.config.getoption("--protoc")
    proto_root = Path(request.config.getoption("--proto_root")).resolve()
    work = tmp_path_factory.mktemp("oip")
    # Messages of the protocol, generated from its .proto.
    gen = work / "gen"
    gen.mkdir()
    run([protoc, f"--python_out={gen}", f"-I{proto_root}",
         str(proto_root / "inference" / "grpc_predict_v2.proto")])
    run([protoc, f"--python_out={gen}", f"-I{proto_root}",
         str(proto_root / "plrank" / "v1" / "ranker.proto")])
    # Under another path: a Python module grpc.reflection.v1 would clash
    # with grpcio's own package (the proto package is unchanged).
    copy = work / "proto_copy" / "reflection_v1"
    copy.mkdir(parents=True)
    (copy / "reflection.proto").write_text(
        (proto_root / "grpc" / "reflection" / "v1" / "reflection.proto")
        .read_text())
    run([protoc, f"--python_out={gen}", f"-I{work / 'proto_copy'}",
         str(copy / "reflection.proto")])
    sys.path.insert(0, str(gen))
    from inference import grpc_predict_v2_pb2 as pb  # noqa: E402
    from plrank.v1 import ranker_pb2  # noqa: E402

    data = work / "data.txt"
    run([str(bin_dir / "plrank-datagen"), "--queries=12", "--mean_docs=8",
         f"--features={NUM_FEATURES}", "--seed=5", f"--out={data}"])
    base = work / "models"
    for version, trees in ((1, 4), (2, 7)):
        model = base / "web" / str(version) / "model.pb"
        model.parent.mkdir(parents=True)
        run([str(bin_dir / "plrank-train"), f"--train={data}",
             f"--trees={trees}", "--leaves=4", "--min_data_in_leaf=3",
             "--quiet", f"--model_out={model}"])
    eval_scores = {}
    for version in (1, 2):
        out = work / f"v{version}.scores"
        run([str(bin_dir / "plrank-eval"),
             f"--model={base / 'web' / str(version) / 'model.pb'}",
             f"--data={data}", f"--scores_out={out}"])
        eval_scores[version] = [float(line) for line in
                                out.read_text().split()]
    rows, qids = [], []
    for line in data.read_text().splitlines():
        parts = line.split("#")[0].split()
        values = [0.0] * NUM_FEATURES
        for item in parts[2:]:
            index, value = item.split(":")
            values[int(index) - 1] = float(value)
        rows.append(values)
        qids.append(parts[1])
    offsets = [i for i in range(len(qids)) if i == 0 or qids[i] != qids[i - 1]]
    config = work / "models.config"
    config.write_text('models { name: "web" version_policy { all {} } '
                      'version_labels { key: "stable" value: 1 } }\n')
    server = Server(bin_dir, base, config, work / "server.log")
    channel = grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}")
    # The first scan runs after the server listens: wait for the model.
    ready = channel.unary_unary(
        "/inference.GRPCInferenceService/ModelReady",
        request_serializer=pb.ModelReadyRequest.SerializeToString,
        response_deserializer=pb.ModelReadyResponse.FromString)
    deadline = time.monotonic() + 15
    while not ready(pb.ModelReadyRequest(name="web", version="2"),
                    timeout=5).ready:
        assert time.monotonic() < deadline, "model never became ready"
        time.sleep(0.05)
    yield dict(pb=pb, ranker_pb2=ranker_pb2, server=server, channel=channel,
               rows=rows, qids=qids, offsets=offsets, eval=eval_scores,
               work=work)
    channel.close()
    server.stop()


def rpc(env, method, request, response_type):
    call = env["channel"].unary_unary(
        f"/inference.GRPCInferenceService/{method}",
        request_serializer=type(request).SerializeToString,
        response_deserializer=response_type.FromString)
    return call(request, timeout=10)


def infer_request(env, rows, offsets=None, version="", outputs=(), raw=False):
    pb = env["pb"]
    request = pb.ModelInferRequest(model_name="web", model_version=version,
                                   id="req-1")
    features = request.inputs.add(name="features", datatype="FP32",
                                  shape=[len(rows), NUM_FEATURES])
    flat = [v for row in rows for v in row]
    if raw:
        request.raw_input_contents.append(struct.pack(f"<{len(flat)}f", *flat))
    else:
        features.contents.fp32_contents.extend(flat)
    if offsets is not None:
        tensor = request.inputs.add(name="query_offsets", datatype="INT64",
                                    shape=[len(offsets)])
        if raw:
            request.raw_input_contents.append(
                struct.pack(f"<{len(offsets)}q", *offsets))
        else:
            tensor.contents.int64_contents.extend(offsets)
    for name in outputs:
        request.outputs.add(name=name)
    return request


def expected_order(scores, bounds):
    order = []
    for q in range(len(bounds) - 1):
        rows = list(range(bounds[q], bounds[q + 1]))
        rows.sort(key=lambda i: (-scores[i], i))
        order.extend(rows)
    return order


def json_rows(rows, nan):
    """Rows for JSON, which has no NaN: KServe's data takes null for a
    missing value, protobuf's JSON mapping the string "NaN"."""
    return [[nan if math.isnan(v) else v for v in row] for row in rows]


def http_call(env, method, path, body=None, headers=None):
    connection = http.client.HTTPConnection("127.0.0.1",
                                            env["server"].http_port, timeout=10)
    payload = None if body is None else (
        body if isinstance(body, (bytes, str)) else json.dumps(body))
    connection.request(method, path, body=payload, headers=headers or {})
    response = connection.getresponse()
    text = response.read().decode()
    connection.close()
    return response.status, (json.loads(text) if text else None)


# -- gRPC -------------------------------------------------------------------

def test_grpc_health_and_metadata(env):
    pb = env["pb"]
    assert rpc(env, "ServerLive", pb.ServerLiveRequest(),
               pb.ServerLiveResponse).live
    assert rpc(env, "ServerReady", pb.ServerReadyRequest(),
               pb.ServerReadyResponse).ready
    for version, ready in (("", True), ("1", True), ("stable", True),
                           ("9", False), ("beta", False)):
        assert rpc(env, "ModelReady", pb.ModelReadyRequest(name="web",
                                                           version=version),
                   pb.ModelReadyResponse).ready == ready, version
    assert not rpc(env, "ModelReady", pb.ModelReadyRequest(name="nope"),
                   pb.ModelReadyResponse).ready
    server = rpc(env, "ServerMetadata", pb.ServerMetadataRequest(),
                 pb.ServerMetadataResponse)
    assert server.name == "plrank-server" and server.version
    meta = rpc(env, "ModelMetadata", pb.ModelMetadataRequest(name="web"),
               pb.ModelMetadataResponse)
    assert meta.name == "web" and list(meta.versions) == ["1", "2"]
    inputs = {t.name: (t.datatype, list(t.shape)) for t in meta.inputs}
    assert inputs["features"] == ("FP32", [-1, NUM_FEATURES])
    assert inputs["query_offsets"] == ("INT64", [-1])
    assert {t.name for t in meta.outputs} == {"scores", "scores_fp64",
                                              "ranks", "order"}
    with pytest.raises(grpc.RpcError) as error:
        rpc(env, "ModelMetadata", pb.ModelMetadataRequest(name="nope"),
            pb.ModelMetadataResponse)
    assert error.value.code() == grpc.StatusCode.NOT_FOUND


@pytest.mark.parametrize("raw", [False, True])
def test_grpc_infer_matches_plrank_eval(env, raw):
    pb = env["pb"]
    rows, offsets = env["rows"], env["offsets"]
    bounds = offsets[:]  # starts only: the server adds N
    # More queries than --max_batch_queries=3 would be refused: take three.
    n = offsets[3]
    request = infer_request(env, rows[:n], offsets[:3], version="2",
                            outputs=("scores", "scores_fp64", "ranks",
                                     "order"), raw=raw)
    response = rpc(env, "ModelInfer", request, pb.ModelInferResponse)
    assert response.model_name == "web" and response.model_version == "2"
    assert response.id == "req-1"
    names = [t.name for t in response.outputs]
    assert names == ["scores", "scores_fp64", "ranks", "order"]
    if raw:
        blobs = list(response.raw_output_contents)
        fp32 = list(struct.unpack(f"<{n}f", blobs[0]))
        fp64 = list(struct.unpack(f"<{n}d", blobs[1]))
        ranks = list(struct.unpack(f"<{n}q", blobs[2]))
        order = list(struct.unpack(f"<{n}q", blobs[3]))
    else:
        fp32 = list(response.outputs[0].contents.fp32_contents)
        fp64 = list(response.outputs[1].contents.fp64_contents)
        ranks = list(response.outputs[2].contents.int64_contents)
        order = list(response.outputs[3].contents.int64_contents)
    expected = env["eval"][2][:n]
    assert fp64 == expected  # bit for bit (plrank-eval writes round-trip text)
    assert fp32 == [struct.unpack("<f", struct.pack("<f", s))[0]
                    for s in expected]
    bounds = offsets[:3] + [n]
    assert order == expected_order(expected, bounds)
    for q in range(3):
        for position, row in enumerate(order[bounds[q]:bounds[q + 1]]):
            assert ranks[row] == position + 1


def test_grpc_infer_default_outputs_and_label(env):
    pb = env["pb"]
    rows = env["rows"][:env["offsets"][1]]
    response = rpc(env, "ModelInfer", infer_request(env, rows, version="stable"),
                   pb.ModelInferResponse)
    assert response.model_version == "1"
    assert [t.name for t in response.outputs] == ["scores", "ranks", "order"]
    assert list(response.outputs[0].shape) == [len(rows)]


@pytest.mark.parametrize("mutate, code, text", [
    (lambda r: r.inputs[0].shape.__setitem__(1, NUM_FEATURES + 1),
     grpc.StatusCode.INVALID_ARGUMENT, "columns"),
    (lambda r: setattr(r, "model_name", "nope"),
     grpc.StatusCode.NOT_FOUND, "nope"),
    (lambda r: setattr(r, "model_version", "9"),
     grpc.StatusCode.NOT_FOUND, "9"),
    (lambda r: setattr(r.inputs[0], "datatype", "FP64"),
     grpc.StatusCode.INVALID_ARGUMENT, "FP32"),
    (lambda r: r.inputs.add(name="extra", datatype="FP32", shape=[1]),
     grpc.StatusCode.INVALID_ARGUMENT, "unknown input 'extra'"),
    (lambda r: r.outputs.add(name="probabilities"),
     grpc.StatusCode.INVALID_ARGUMENT, "unknown output"),
    (lambda r: r.inputs[0].contents.fp32_contents.append(1.0),
     grpc.StatusCode.INVALID_ARGUMENT, "contents hold"),
    (lambda r: r.inputs[0].contents.fp32_contents.__setitem__(0, math.inf),
     grpc.StatusCode.INVALID_ARGUMENT, "infinite"),
])
def test_grpc_infer_errors(env, mutate, code, text):
    pb = env["pb"]
    request = infer_request(env, env["rows"][:4])
    mutate(request)
    with pytest.raises(grpc.RpcError) as error:
        rpc(env, "ModelInfer", request, pb.ModelInferResponse)
    assert error.value.code() == code
    assert text in error.value.details()


def test_grpc_infer_limits(env):
    pb = env["pb"]
    rows = (env["rows"] * 10)[:51]
    with pytest.raises(grpc.RpcError) as error:
        rpc(env, "ModelInfer", infer_request(env, rows), pb.ModelInferResponse)
    assert error.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    offsets = [0, 1, 2, 3]  # four queries, --max_batch_queries=3
    with pytest.raises(grpc.RpcError) as error:
        rpc(env, "ModelInfer", infer_request(env, env["rows"][:5], offsets),
            pb.ModelInferResponse)
    assert error.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    with pytest.raises(grpc.RpcError) as error:
        rpc(env, "ModelInfer", infer_request(env, env["rows"][:5], [0, 3, 2]),
            pb.ModelInferResponse)
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_grpc_reflection_v1(env):
    from reflection_v1 import reflection_pb2 as reflection
    from google.protobuf import descriptor_pb2
    call = env["channel"].stream_stream(
        "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
        request_serializer=reflection.ServerReflectionRequest.SerializeToString,
        response_deserializer=reflection.ServerReflectionResponse.FromString)
    requests = [
        reflection.ServerReflectionRequest(list_services=""),
        reflection.ServerReflectionRequest(
            file_containing_symbol="inference.GRPCInferenceService"),
        reflection.ServerReflectionRequest(file_containing_symbol="no.Such"),
    ]
    listed, found, missing = list(call(iter(requests), timeout=10))
    names = {s.name for s in listed.list_services_response.service}
    assert {"plrank.v1.Ranker", "inference.GRPCInferenceService",
            "grpc.reflection.v1.ServerReflection",
            "grpc.reflection.v1alpha.ServerReflection"} <= names
    file = descriptor_pb2.FileDescriptorProto.FromString(
        found.file_descriptor_response.file_descriptor_proto[0])
    assert file.package == "inference"
    assert "ModelInfer" in [m.name for m in file.service[0].method]
    assert missing.error_response.error_code == grpc.StatusCode.NOT_FOUND.value[0]


# -- HTTP -------------------------------------------------------------------

def test_http_health_and_metadata(env):
    assert http_call(env, "GET", "/v2/health/live") == (200, {"live": True})
    assert http_call(env, "GET", "/v2/health/ready") == (200, {"ready": True})
    status, body = http_call(env, "GET", "/v2")
    assert status == 200 and body["name"] == "plrank-server"
    assert http_call(env, "GET", "/v2/models/web/ready") == (
        200, {"name": "web", "ready": True})
    assert http_call(env, "GET", "/v2/models/web/versions/9/ready")[0] == 400
    status, body = http_call(env, "GET", "/v2/models/web/versions/1")
    assert status == 200 and body["versions"] == ["1", "2"]
    assert {"name": "features", "datatype": "FP32",
            "shape": [-1, NUM_FEATURES]} in body["inputs"]
    status, body = http_call(env, "GET", "/v2/models/nope")
    assert status == 404 and "nope" in body["error"]
    status, body = http_call(env, "GET", "/v3/anything")
    assert status == 404 and "error" in body
    status, body = http_call(env, "POST", "/v2/health/live", "{}")
    assert status == 405


def test_http_infer_matches_grpc_and_eval(env):
    rows, offsets = env["rows"], env["offsets"]
    n = offsets[2]
    body = {"id": "h1",
            "inputs": [{"name": "features", "datatype": "FP32",
                        "shape": [n, NUM_FEATURES],
                        "data": json_rows(rows[:n], None)},
                       {"name": "query_offsets", "datatype": "INT64",
                        "shape": [3], "data": [0, offsets[1], n]}],
            "outputs": [{"name": "scores_fp64"}, {"name": "order"}]}
    status, answer = http_call(env, "POST", "/v2/models/web/versions/2/infer",
                               body, {"Content-Type": "application/json"})
    assert status == 200, answer
    assert answer["model_name"] == "web" and answer["model_version"] == "2"
    assert answer["id"] == "h1"
    scores = answer["outputs"][0]["data"]
    assert answer["outputs"][0]["datatype"] == "FP64"
    assert scores == env["eval"][2][:n]
    assert answer["outputs"][1]["data"] == expected_order(
        scores, [0, offsets[1], n])


@pytest.mark.parametrize("body, status, text", [
    ("not json", 400, "not valid JSON"),
    ({"inputs": "x"}, 400, "inputs"),
    ({"inputs": [{"name": "features", "datatype": "FP32", "shape": [1, 2],
                  "data": [1, 2]}]}, 400, "columns"),
    ({"inputs": [{"name": "features", "datatype": "FP32",
                  "shape": [1, NUM_FEATURES], "data": ["a"] * NUM_FEATURES}]},
     400, "non-number"),
    ("[" * 100 + "]" * 100, 400, "deeper"),
])
def test_http_infer_errors(env, body, status, text):
    got, answer = http_call(env, "POST", "/v2/models/web/infer", body)
    assert got == status and text in answer["error"], answer


def test_http_json_forms_of_ranker_rpcs(env):
    rows = env["rows"][:env["offsets"][1]]
    documents = [{"id": f"d{i}", "dense": {"values": row}}
                 for i, row in enumerate(json_rows(rows, "NaN"))]
    status, ranked = http_call(env, "POST", "/v1/rank", {
        "model_spec": {"name": "web", "version": 2}, "query_id": "q",
        "documents": documents})
    assert status == 200, ranked
    assert ranked["model_version"] == "2"  # int64 is a string in JSON
    by_id = {d["id"]: d["score"] for d in ranked["documents"]}
    assert [by_id[f"d{i}"] for i in range(len(rows))] == \
        env["eval"][2][:len(rows)]
    status, explained = http_call(env, "POST", "/v1/explain", {
        "model_spec": {"name": "web"}, "documents": documents[:2]})
    assert status == 200 and len(explained["documents"]) == 2
    status, evaluated = http_call(env, "POST", "/v1/evaluate", {
        "model_spec": {"name": "web"},
        "queries": [{"query_id": "q", "documents": documents,
                     "labels": [1] + [0] * (len(rows) - 1)}]})
    assert status == 200 and evaluated["query_count"] == 1
    status, metadata = http_call(env, "GET", "/v1/models/web/labels/stable/metadata")
    assert status == 200 and metadata["model_version"] == "1"
    assert metadata["num_features"] == NUM_FEATURES
    assert metadata["labels"] == {"stable": "1"}
    status, metadata = http_call(env, "POST", "/v1/metadata",
                                 {"model_spec": {"name": "web"}})
    assert status == 200 and metadata["available_versions"] == ["1", "2"]
    # Errors: gRPC code and message as google.rpc.Status.
    status, error = http_call(env, "POST", "/v1/rank", {
        "model_spec": {"name": "web"}, "documents": [{"dense": {"values": [1]}}]})
    assert status == 400 and error["code"] == 3 and error["message"]
    status, error = http_call(env, "POST", "/v1/rank", {"modelSpec": 5})
    assert status == 400 and "RankRequest" in error["message"]
    status, error = http_call(env, "POST", "/v1/rank", {
        "model_spec": {"name": "web"},
        "documents": [{"dense": {"values": json_rows(rows, "NaN")[0]}}] * 51})
    assert status == 429 and error["code"] == 8
    status, error = http_call(env, "GET", "/v1/rank")
    assert status == 405


def test_curl(env):
    base = f"http://127.0.0.1:{env['server'].http_port}"
    out = run(["curl", "-sS", "-w", " %{http_code}", f"{base}/v2/health/ready"])
    assert out.stdout == '{"ready":true} 200'
    row = json_rows(env["rows"], None)[0]
    body = json.dumps({"inputs": [{"name": "features", "datatype": "FP32",
                                   "shape": [1, NUM_FEATURES], "data": row}],
                       "outputs": [{"name": "scores_fp64"}]})
    out = run(["curl", "-sS", "-H", "Content-Type: application/json",
               "-d", body, f"{base}/v2/models/web/versions/1/infer"])
    assert json.loads(out.stdout)["outputs"][0]["data"] == [env["eval"][1][0]]
    out = run(["curl", "-sS", "-w", " %{http_code}", "-d", "{",
               f"{base}/v2/models/web/infer"])
    assert out.stdout.endswith(" 400") and "error" in out.stdout


def test_metrics_by_method_and_protocol(env):
    connection = http.client.HTTPConnection(
        "127.0.0.1", env["server"].metrics_port, timeout=10)
    connection.request("GET", "/metrics")
    text = connection.getresponse().read().decode()
    for protocol, method in (("grpc", "ModelInfer"), ("http", "ModelInfer"),
                             ("http", "Rank"), ("grpc", "ModelReady"),
                             ("http", "ServerReady")):
        pattern = (r'plrank_protocol_requests_total\{[^}]*method="%s"[^}]*'
                   r'protocol="%s"[^}]*\} [1-9]' % (method, protocol))
        assert re.search(pattern, text), (protocol, method)
    assert re.search(r'plrank_requests_total\{code="OK",method="ModelInfer",'
                     r'model="web",version="2"\} [1-9]', text)
