"""RankerClient: a synchronous client of the plrank.v1.Ranker gRPC API."""

from __future__ import annotations

import operator
from typing import Any, Iterable, Iterator, List, Optional, Sequence

import grpc

from ._stubs import ranker_pb2, ranker_pb2_grpc
from .documents import fill_documents
from .errors import FailedPreconditionError, error_for_code, from_rpc_error
from .types import (BatchEntry, EvaluateResult, ExplainResult, LabelledQuery,
                    ModelStatus, Sampling,
                    RankResult, ReloadResult, evaluate_result, explain_result,
                    model_status, rank_result, reload_result)

# Evaluate sends one unary request up to this many queries and bytes, and
# otherwise streams messages of about EVALUATE_MESSAGE_BYTES (whole queries
# each), like the C++ client: half of gRPC's default 4 MiB message limit.
EVALUATE_UNARY_MAX_QUERIES = 256
EVALUATE_MESSAGE_BYTES = 2 << 20


def _read(path: str) -> bytes:
    with open(path, "rb") as file:
        data = file.read()
    if not data:
        raise ValueError(f"{path}: the PEM file is empty")
    return data


def _positive(name: str, value: float) -> float:
    if not (value > 0):  # also rejects NaN
        raise ValueError(f"{name} must be positive seconds, got {value!r}")
    return float(value)


class RankerClient:
    """Client of one plrank-server.

    RankerClient(target, *, timeout=10.0, evaluate_timeout=600.0,
                 tls_root_cert_file=None, tls_cert_file=None, tls_key_file=None,
                 credentials=None, channel_options=(),
                 max_receive_message_bytes=64 MiB)

    `target` is "host:port" (any gRPC target). Plaintext unless
    `tls_root_cert_file` (PEM roots: TLS) or `credentials` (any
    grpc.ChannelCredentials) is given; `tls_cert_file` + `tls_key_file` add
    a client certificate for servers started with --tls_ca_file (mTLS).
    `timeout` is the default deadline of each call in seconds,
    `evaluate_timeout` that of a whole evaluate(); every method takes
    `timeout=` to override it. The connection is made lazily; calls are
    thread-safe. Failed calls raise a PlrankError subclass (errors.py).
    Use as a context manager, or call close().
    """

    def __init__(self, target: str, *, timeout: float = 10.0,
                 evaluate_timeout: float = 600.0,
                 tls_root_cert_file: Optional[str] = None,
                 tls_cert_file: Optional[str] = None,
                 tls_key_file: Optional[str] = None,
                 credentials: Optional[grpc.ChannelCredentials] = None,
                 channel_options: Sequence[tuple] = (),
                 max_receive_message_bytes: int = 64 << 20):
        if not target:
            raise ValueError("the server target (host:port) is empty")
        self.target = target
        self.timeout = _positive("timeout", timeout)
        self.evaluate_timeout = _positive("evaluate_timeout", evaluate_timeout)
        if bool(tls_cert_file) != bool(tls_key_file):
            raise ValueError("a TLS client certificate and key go together "
                             "(set both or neither)")
        if tls_cert_file and not tls_root_cert_file and credentials is None:
            raise ValueError("a TLS client certificate needs the TLS root "
                             "certificates too")
        if credentials is None and tls_root_cert_file:
            credentials = grpc.ssl_channel_credentials(
                root_certificates=_read(tls_root_cert_file),
                private_key=_read(tls_key_file) if tls_key_file else None,
                certificate_chain=_read(tls_cert_file) if tls_cert_file else None)
        options = [("grpc.max_receive_message_length", max_receive_message_bytes),
                   *channel_options]
        if credentials is None:
            self._channel = grpc.insecure_channel(target, options=options)
        else:
            self._channel = grpc.secure_channel(target, credentials, options=options)
        self._stub = ranker_pb2_grpc.RankerStub(self._channel)

    # -- lifecycle ---------------------------------------------------------
    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> "RankerClient":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    @property
    def stub(self) -> ranker_pb2_grpc.RankerStub:
        """The generated stub, for raw protobuf calls."""
        return self._stub

    # -- helpers -----------------------------------------------------------
    def _call(self, method: str, request: Any, timeout: Optional[float]):
        deadline = self.timeout if timeout is None else _positive("timeout", timeout)
        try:
            return getattr(self._stub, method)(request, timeout=deadline)
        except grpc.RpcError as error:
            raise from_rpc_error(error, method=method, target=self.target) from None

    @staticmethod
    def model_spec(model: str, version: Optional[int] = None,
                   label: Optional[str] = None):
        """plrank.v1.ModelSpec: version pins (wins over label); neither = default."""
        if not model:
            raise ValueError("the model name is empty")
        if version is not None and (isinstance(version, bool) or
                                    not isinstance(version, int) or version <= 0):
            raise ValueError(f"version must be a positive integer, got {version!r}")
        return ranker_pb2.ModelSpec(name=model, version=version or 0,
                                    version_label=label or "")

    # -- calls -------------------------------------------------------------
    def rank(self, model: str, query_id: str, documents: Iterable[Any], *,
             version: Optional[int] = None, label: Optional[str] = None,
             top_k: Optional[int] = None, ids: Optional[Sequence[str]] = None,
             sampling: Optional[Sampling] = None,
             request_id: Optional[str] = None,
             timeout: Optional[float] = None) -> RankResult:
        """Scores one query's documents; result sorted best first.

        documents: see documents.py (dense sequences, sparse dicts or
        Document messages); ids default to "0", "1", ... . top_k: return
        only the best k (None or 0 = all). sampling: draw the ranking from
        the model's Plackett-Luce policy instead (see Sampling);
        request_id: the id the impression log records (echoed back).
        """
        if top_k is not None and (isinstance(top_k, bool) or top_k < 0):
            raise ValueError(f"top_k must be >= 0, got {top_k!r}")
        request = ranker_pb2.RankRequest(
            model_spec=self.model_spec(model, version, label),
            query_id=str(query_id), top_k=top_k or 0,
            request_id=request_id or "")
        if sampling is not None:
            request.sampling.CopyFrom(sampling.to_proto())
        fill_documents(documents, request.documents, ids)
        return rank_result(self._call("Rank", request, timeout))

    def rank_batch(self, model: str, queries: Iterable[Any], *,
                   version: Optional[int] = None, label: Optional[str] = None,
                   top_k: Optional[int] = None,
                   sampling: Optional[Sampling] = None,
                   timeout: Optional[float] = None) -> List[BatchEntry]:
        """Ranks several queries in one RankBatch call (one round trip).

        queries: (query_id, documents) or (query_id, documents, ids) tuples,
        each ranked as rank() would with the model, version, label and top_k
        given here, or prepared plrank.v1.RankRequest messages (sent as they
        are, e.g. for other models). sampling applies to each query built
        here (a nonzero seed becomes seed + the query's position, so queries
        get independent, replayable draws). Returns one BatchEntry per query, in
        order: `.result` (a RankResult) or `.error` (the PlrankError that
        query failed with; the others are unaffected). A failure of the call
        itself (no queries, over the server's --max_batch_queries or
        --max_batch_documents, unreachable server) raises.
        """
        if top_k is not None and (isinstance(top_k, bool) or top_k < 0):
            raise ValueError(f"top_k must be >= 0, got {top_k!r}")
        request = ranker_pb2.RankBatchRequest()
        spec = None
        for position, query in enumerate(queries):
            if isinstance(query, ranker_pb2.RankRequest):
                request.requests.append(query)
                continue
            try:
                query_id, documents, *rest = query
            except (TypeError, ValueError):
                raise TypeError(f"query {position}: expected (query_id, "
                                "documents[, ids]) or a RankRequest") from None
            if len(rest) > 1:
                raise TypeError(f"query {position}: expected (query_id, "
                                "documents[, ids])")
            if spec is None:
                spec = self.model_spec(model, version, label)
            message = request.requests.add(model_spec=spec,
                                           query_id=str(query_id),
                                           top_k=top_k or 0)
            if sampling is not None:
                message.sampling.CopyFrom(sampling.to_proto())
                if sampling.seed:
                    message.sampling.seed = sampling.seed + position
            fill_documents(documents, message.documents,
                           rest[0] if rest else None)
        response = self._call("RankBatch", request, timeout)
        entries = []
        for result in response.results:
            if result.status.code == 0:
                entries.append(BatchEntry(rank_result(result.response), None))
            else:
                entries.append(BatchEntry(None, error_for_code(
                    _status_code(result.status.code), result.status.message,
                    method="RankBatch", target=self.target)))
        return entries

    def explain(self, model: str, query_id: str, documents: Iterable[Any], *,
                version: Optional[int] = None, label: Optional[str] = None,
                top_k: Optional[int] = None, ids: Optional[Sequence[str]] = None,
                timeout: Optional[float] = None) -> ExplainResult:
        """Feature contributions (exact TreeSHAP) to each document's score.

        Same arguments as rank(); top_k keeps the k features of largest
        |contribution| per document (None or 0 = every non-zero one).
        bias + the sum of a document's contributions is its served score.
        """
        if top_k is not None and (isinstance(top_k, bool) or top_k < 0):
            raise ValueError(f"top_k must be >= 0, got {top_k!r}")
        request = ranker_pb2.ExplainRequest(
            model_spec=self.model_spec(model, version, label),
            query_id=str(query_id), top_k=top_k or 0)
        fill_documents(documents, request.documents, ids)
        return explain_result(self._call("Explain", request, timeout))

    def rank_request(self, request, *, timeout: Optional[float] = None):
        """Sends a prepared plrank.v1.RankRequest; returns the raw response."""
        return self._call("Rank", request, timeout)

    def evaluate(self, model: str, queries: Iterable[Any], *,
                 ks: Optional[Sequence[int]] = None, per_query: bool = False,
                 skip_empty_queries: bool = False,
                 empty_query_ndcg: Optional[str] = None,
                 version: Optional[int] = None, label: Optional[str] = None,
                 timeout: Optional[float] = None) -> EvaluateResult:
        """Ranking metrics of the model on labelled queries.

        queries: LabelledQuery(query_id, documents, labels), equivalent
        (query_id, documents, labels) tuples, or plrank.v1.LabelledQuery
        messages. ks: NDCG cut-offs (None = the server's 1, 3, 5, 10).
        skip_empty_queries: leave queries without relevant documents out of
        the means (default: their NDCG/MAP count as 1). empty_query_ndcg:
        "one", "zero" or "skip", the same choice with 0 too (None: follow
        skip_empty_queries); "zero" raises FailedPreconditionError from a
        server that predates it rather than return its NDCG = 1. Small sets go in one
        Evaluate request, large ones as an EvaluateStream of ~2 MiB messages.
        """
        conventions = {"one": ranker_pb2.EMPTY_QUERY_NDCG_ONE,
                       "zero": ranker_pb2.EMPTY_QUERY_NDCG_ZERO,
                       "skip": ranker_pb2.EMPTY_QUERY_NDCG_SKIP}
        if empty_query_ndcg is not None and empty_query_ndcg not in conventions:
            raise ValueError("empty_query_ndcg must be one of one, zero, skip, "
                             f"got {empty_query_ndcg!r}")
        if skip_empty_queries and empty_query_ndcg in ("one", "zero"):
            raise ValueError("skip_empty_queries contradicts "
                             f"empty_query_ndcg={empty_query_ndcg!r}")
        if empty_query_ndcg == "skip":
            skip_empty_queries = True  # what older servers read
        header = ranker_pb2.EvaluateRequest(
            model_spec=self.model_spec(model, version, label),
            ndcg_at=list(ks or []), per_query=bool(per_query),
            skip_empty_queries=bool(skip_empty_queries))
        if empty_query_ndcg in ("zero", "skip"):
            header.empty_query_ndcg = conventions[empty_query_ndcg]
        messages = [_labelled_query(q, i) for i, q in enumerate(queries)]
        if not messages:
            raise ValueError("evaluate needs at least one query")
        sizes = [m.ByteSize() for m in messages]
        deadline = self.evaluate_timeout if timeout is None else timeout
        if (len(messages) <= EVALUATE_UNARY_MAX_QUERIES and
                sum(sizes) <= EVALUATE_MESSAGE_BYTES):
            header.queries.extend(messages)
            response = self._call("Evaluate", header, deadline)
        else:
            stream = _evaluate_stream(header, messages, sizes)
            response = self._call("EvaluateStream", stream, deadline)
        if (empty_query_ndcg == "zero" and
                response.empty_query_ndcg != ranker_pb2.EMPTY_QUERY_NDCG_ZERO):
            raise FailedPreconditionError(
                "the server does not support empty_query_ndcg=zero (it "
                "predates it); use one or skip, or upgrade the server",
                method="Evaluate", target=self.target)
        return evaluate_result(response)

    def status(self, model: str, *, timeout: Optional[float] = None) -> ModelStatus:
        """Versions of `model` with their state, labels and metadata, and
        its shadow scoring summary (`shadow`) when one is configured."""
        response = self._call("GetModelStatus",
                              ranker_pb2.GetModelStatusRequest(name=model), timeout)
        return model_status(
            response.status,
            response.shadow if response.HasField("shadow") else None)

    def list_models(self, *, timeout: Optional[float] = None) -> List[ModelStatus]:
        response = self._call("ListModels", ranker_pb2.ListModelsRequest(), timeout)
        return [model_status(m) for m in response.models]

    def reload(self, *, timeout: Optional[float] = None) -> ReloadResult:
        """Rescans the model repository now; returns when the scan is done."""
        response = self._call("ReloadModels", ranker_pb2.ReloadModelsRequest(),
                              timeout)
        return reload_result(response)


def _status_code(value: int) -> grpc.StatusCode:
    for code in grpc.StatusCode:
        if code.value[0] == value:
            return code
    return grpc.StatusCode.UNKNOWN


def _labelled_query(query: Any, position: int):
    if isinstance(query, ranker_pb2.LabelledQuery):
        return query
    if isinstance(query, LabelledQuery):
        query_id, documents, labels = query.query_id, query.documents, query.labels
    else:
        try:
            query_id, documents, labels = query
        except (TypeError, ValueError):
            raise TypeError(f"query {position}: expected LabelledQuery or "
                            "(query_id, documents, labels)") from None
    message = ranker_pb2.LabelledQuery(query_id=str(query_id))
    fill_documents(documents, message.documents)
    try:
        message.labels.extend(operator.index(label) for label in labels)
    except TypeError:
        raise TypeError(f"query {query_id}: labels must be integers") from None
    return message


def _evaluate_stream(header, messages, sizes) -> Iterator[Any]:
    """Header options in the first message only; whole queries per message."""
    request, request_bytes = header, 0
    for message, size in zip(messages, sizes):
        if request.queries and request_bytes + size > EVALUATE_MESSAGE_BYTES:
            yield request
            request, request_bytes = ranker_pb2.EvaluateRequest(), 0
        request.queries.append(message)
        request_bytes += size
    if request.queries:
        yield request
