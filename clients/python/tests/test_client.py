"""RankerClient against the live server of the session fixture."""

from __future__ import annotations

import math
import os
import socket
import subprocess
import time

import grpc
import pytest

import plrank_client
from plrank_client import (DeadlineExceededError, FailedPreconditionError,
                           InvalidArgumentError, LabelledQuery, NotFoundError,
                           PlrankError, RankerClient, ResourceExhaustedError,
                           UnavailableError)
from plrank_client import client as client_module
from plrank_client._stubs import ranker_pb2
from plrank_client.letor import read_letor

from conftest import MAX_DOCUMENTS, NUM_FEATURES, start_server, stop_server


@pytest.fixture(scope="module")
def data(env):
    return read_letor(str(env.data), NUM_FEATURES)


def biggest_query(data):
    return max(data.queries, key=lambda q: len(q.rows))


def ranked_scores(client, data, **model):
    """Every document's score in file order, one Rank call per query."""
    scores = []
    for query in data.queries:
        result = client.rank("demo", query.query_id, query.rows, **model)
        scores.extend(result.scores_in_request_order(len(query.rows)))
    return scores


def read_scores(path):
    return [float(line) for line in open(path)]


def test_rank_returns_sorted_documents_with_ranks(client, data):
    query = biggest_query(data)
    result = client.rank("demo", query.query_id, query.rows, ids=query.ids)
    assert result.model_name == "demo"
    assert result.model_version == 2  # default = highest available
    assert result.query_id == query.query_id
    assert len(result.documents) == len(query.rows)
    assert [d.rank for d in result.documents] == list(range(1, len(query.rows) + 1))
    assert sorted(d.request_index for d in result.documents) == list(range(len(query.rows)))
    scores = [d.score for d in result.documents]
    assert scores == sorted(scores, reverse=True)
    assert len(set(scores)) > 1, "test data should give distinct scores"
    for document in result.documents:
        assert document.id == query.ids[document.request_index]
    # Ties keep request order.
    for a, b in zip(result.documents, result.documents[1:]):
        if a.score == b.score:
            assert a.request_index < b.request_index
    assert result.raw.documents[0].id == result.documents[0].id


def test_sampled_rank_is_reproducible_and_reports_probabilities(client, data):
    from plrank_client import Sampling
    query = biggest_query(data)
    plain = client.rank("demo", query.query_id, query.rows)
    assert not plain.sampled and plain.documents[0].pick_probability == 0.0
    # Temperature 0: the deterministic ranking, every pick certain.
    cold = client.rank("demo", query.query_id, query.rows,
                       sampling=Sampling(temperature=0))
    assert [d.request_index for d in cold.documents] == \
        [d.request_index for d in plain.documents]
    assert all(d.pick_probability == 1.0 for d in cold.documents)
    spec = Sampling(temperature=1.0, seed=42, top_k=3, marginal_samples=200)
    first = client.rank("demo", query.query_id, query.rows, sampling=spec,
                        request_id="req-1")
    again = client.rank("demo", query.query_id, query.rows, sampling=spec)
    assert first.sampled and first.sampling_seed == 42
    assert first.request_id == "req-1"
    assert len(first.documents) == 3
    assert [d.request_index for d in first.documents] == \
        [d.request_index for d in again.documents]
    log_p = sum(math.log(d.pick_probability) for d in first.documents)
    assert abs(first.log_probability - log_p) < 1e-9
    for d in first.documents:
        assert 0 < d.pick_probability <= 1
        assert len(d.position_probabilities) == 3
    batch = client.rank_batch("demo", [(query.query_id, query.rows)],
                              sampling=spec)
    assert batch[0].result.sampled
    assert [d.request_index for d in batch[0].result.documents] == \
        [d.request_index for d in first.documents]


def test_top_k_returns_the_best_documents(client, data):
    query = biggest_query(data)
    full = client.rank("demo", query.query_id, query.rows)
    top = client.rank("demo", query.query_id, query.rows, top_k=3)
    assert top.documents == full.documents[:3]


def test_version_pin_and_label_resolve(client, data):
    query = biggest_query(data)
    pinned = client.rank("demo", query.query_id, query.rows, version=1)
    labelled = client.rank("demo", query.query_id, query.rows, label="stable")
    latest = client.rank("demo", query.query_id, query.rows, version=2)
    assert pinned.model_version == 1
    assert labelled.model_version == 1
    assert labelled.documents == pinned.documents
    assert latest.model_version == 2
    assert [d.score for d in latest.documents] != [d.score for d in pinned.documents]
    # A pinned version wins over a label.
    assert client.rank("demo", "q", query.rows[:1], version=2,
                       label="stable").model_version == 2


@pytest.mark.parametrize("version", [1, 2])
def test_scores_equal_plrank_eval(client, data, env, version):
    expected = read_scores(env.eval_scores[version])
    got = ranked_scores(client, data, version=version)
    assert len(got) == len(expected) == data.num_documents
    assert got == expected  # exactly: same float32 inputs, same scorer


def test_sparse_documents_score_like_dense(client, data):
    query = biggest_query(data)
    sparse = [{i: v for i, v in enumerate(row) if v != 0.0} for row in query.rows]
    assert any(len(s) < NUM_FEATURES for s in sparse), "want real zeros"
    assert any(math.isnan(v) for row in query.rows for v in row), "want NaNs"
    dense = client.rank("demo", query.query_id, query.rows)
    assert client.rank("demo", query.query_id, sparse).documents == dense.documents


def test_evaluate_matches_plrank_eval(client, data, env):
    queries = [LabelledQuery(q.query_id, q.rows, q.labels) for q in data.queries]
    for version in (1, 2):
        result = client.evaluate("demo", queries, version=version)
        assert result.model_version == version
        assert result.query_count == len(data.queries)
        assert result.document_count == data.num_documents
        expected = env.eval_metrics[version]
        assert list(result.metrics) == list(expected)  # ndcg@1,3,5,10 err map
        for name, value in expected.items():
            # plrank-eval prints 6 decimals.
            assert result.metrics[name] == pytest.approx(value, abs=5.1e-7), name


def test_evaluate_cutoffs_and_per_query(client, data):
    queries = [(q.query_id, q.rows, q.labels) for q in data.queries]
    result = client.evaluate("demo", queries, ks=[2, 4], per_query=True)
    assert list(result.metrics) == ["ndcg@2", "ndcg@4", "err", "map"]
    assert [q.query_id for q in result.per_query] == [q.query_id for q in data.queries]
    mean = sum(q.metrics["ndcg@2"] for q in result.per_query) / len(queries)
    assert result.metrics["ndcg@2"] == pytest.approx(mean, rel=1e-12)


def test_evaluate_stream_equals_unary(client, data, monkeypatch):
    queries = [(q.query_id, q.rows, q.labels) for q in data.queries]
    unary = client.evaluate("demo", queries, per_query=True)
    calls = []
    real_call = RankerClient._call

    def spy(self, method, request, timeout):
        calls.append(method)
        return real_call(self, method, request, timeout)

    monkeypatch.setattr(RankerClient, "_call", spy)
    monkeypatch.setattr(client_module, "EVALUATE_MESSAGE_BYTES", 3000)
    streamed = client.evaluate("demo", queries, per_query=True)
    assert calls == ["EvaluateStream"]
    assert streamed == unary


def test_status_shadow(client):
    shadow = client.status("demo").shadow
    assert shadow is not None
    assert (shadow.configured_label, shadow.configured_version) == ("stable", 0)
    assert shadow.fraction == 0.0
    assert shadow.shadow_version == 1 and shadow.error == ""
    assert shadow.comparisons == []
    # ListModels carries no shadow summary.
    assert all(m.shadow is None for m in client.list_models())


def test_status_fields(client, env):
    status = client.status("demo")
    assert status.name == "demo"
    assert status.default_version == 2
    by_version = {v.version: v for v in status.versions}
    assert sorted(by_version) == [1, 2, 3]
    assert by_version[1].state == by_version[2].state == "AVAILABLE"
    assert by_version[1].labels == ["stable"] and by_version[2].labels == []
    assert by_version[3].state == "FAILED" and by_version[3].error
    for version, trees in ((1, 5), (2, 8)):
        meta = by_version[version].metadata
        assert meta.objective == "plrank"
        assert meta.num_trees == trees
        assert meta.num_features == NUM_FEATURES
        assert meta.num_outputs == 1
        assert len(meta.checksum) == 16 and int(meta.checksum, 16) >= 0
        path = env.model_base / "demo" / str(version) / "model.pb"
        assert meta.file_bytes == os.path.getsize(path)
        assert meta.created_unix_seconds > 0
        assert by_version[version].loaded_unix_seconds > 0
    assert status.resolve().version == 2
    assert status.resolve(label="stable").version == 1
    assert status.resolve(version=1, label="nope").version == 1
    with pytest.raises(NotFoundError):
        status.resolve(label="nope")


def test_list_models_and_reload(client):
    models = client.list_models()
    assert [m.name for m in models] == ["demo"]
    assert models[0].default_version == 2
    reloaded = client.reload()
    assert (reloaded.loaded, reloaded.unloaded) == (0, 0)
    assert [m.name for m in reloaded.models] == ["demo"]


# -- errors -----------------------------------------------------------------

def expect_error(cls, call, *needles):
    with pytest.raises(cls) as caught:
        call()
    error = caught.value
    assert isinstance(error, PlrankError)
    assert error.code == cls.code
    for needle in needles:
        assert needle in error.details, error.details
    return error


def test_unknown_model_label_or_version_is_not_found(client, data):
    rows = data.queries[0].rows
    error = expect_error(NotFoundError, lambda: client.rank("nope", "q", rows), "nope")
    assert str(error).startswith("NOT_FOUND: ") and error.method == "Rank"
    expect_error(NotFoundError, lambda: client.rank("demo", "q", rows, label="gone"), "gone")
    expect_error(NotFoundError, lambda: client.rank("demo", "q", rows, version=7))
    expect_error(NotFoundError, lambda: client.status("nope"), "nope")


def test_malformed_documents_are_invalid_argument(client, data):
    row = data.queries[0].rows[0]
    expect_error(InvalidArgumentError, lambda: client.rank("demo", "q", [row[:-1]]),
                 str(NUM_FEATURES - 1))
    bad = list(row)
    bad[2] = math.inf
    expect_error(InvalidArgumentError, lambda: client.rank("demo", "q", [bad]), "infinite")
    expect_error(InvalidArgumentError, lambda: client.rank("demo", "q", []))
    expect_error(InvalidArgumentError,
                 lambda: client.rank("demo", "q", [{NUM_FEATURES: 1.0}]))
    expect_error(InvalidArgumentError,
                 lambda: client.evaluate("demo", [("q", [row], [-1])]))
    expect_error(InvalidArgumentError,
                 lambda: client.evaluate("demo", [("q", [], [])]))
    # NaN is a missing value in the API (not an error): it scores.
    missing = [math.nan] * NUM_FEATURES
    assert math.isfinite(client.rank("demo", "q", [missing]).documents[0].score)


def test_too_many_documents_is_resource_exhausted(client, data):
    rows = [data.queries[0].rows[0]] * (MAX_DOCUMENTS + 1)
    expect_error(ResourceExhaustedError, lambda: client.rank("demo", "q", rows),
                 str(MAX_DOCUMENTS))
    assert len(client.rank("demo", "q", rows[:MAX_DOCUMENTS]).documents) == MAX_DOCUMENTS


def test_failed_version_is_failed_precondition(client, data):
    expect_error(FailedPreconditionError,
                 lambda: client.rank("demo", "q", data.queries[0].rows, version=3))


def test_tiny_deadline_is_deadline_exceeded(client, data):
    # On loopback a call can beat even a 1 ns deadline, so try a few times:
    # every failure must be DEADLINE_EXCEEDED, and some call must fail.
    outcomes = []
    for _ in range(50):
        try:
            client.rank("demo", "q", data.queries[0].rows, timeout=1e-9)
            outcomes.append("ok")
        except DeadlineExceededError:
            outcomes.append("deadline")
    assert "deadline" in outcomes
    # Deterministic: a TCP listener that never answers the HTTP/2 handshake.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        with RankerClient(f"127.0.0.1:{port}", timeout=0.2) as stuck:
            expect_error(DeadlineExceededError, lambda: stuck.status("demo"))


def test_unreachable_server_is_unavailable():
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with RankerClient(f"127.0.0.1:{port}", timeout=5) as nowhere:
        expect_error(UnavailableError, nowhere.list_models)


def test_bad_python_arguments_fail_before_the_call(client):
    with pytest.raises(ValueError):
        client.rank("demo", "q", [[0.0] * NUM_FEATURES], version=0)
    with pytest.raises(ValueError):
        client.rank("demo", "q", [[0.0] * NUM_FEATURES], timeout=0)
    with pytest.raises(TypeError):
        client.rank("demo", "q", ["1 2 3"])
    with pytest.raises(TypeError):
        client.rank("demo", "q", [[0.0, "x"]])
    with pytest.raises(ValueError):
        RankerClient("127.0.0.1:1", tls_cert_file="a.pem")


def test_every_grpc_code_maps_to_its_class():
    for code in grpc.StatusCode:
        if code == grpc.StatusCode.OK:
            continue
        error = plrank_client.error_for_code(code, "message")
        assert error.code == code and error.details == "message"
        name = "".join(p.capitalize() for p in code.name.split("_")) + "Error"
        assert type(error).__name__ == name
        assert getattr(plrank_client, name) is type(error)


def test_tls_server(env, tmp_path, data):
    if subprocess.run(["which", "openssl"], capture_output=True).returncode:
        pytest.skip("openssl not installed")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                    "-days", "1", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                    "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    process, target = start_server(
        env.bin_dir, tmp_path, [f"--model_base_path={env.model_base}",
                                f"--tls_cert_file={cert}", f"--tls_key_file={key}"],
        "tls_server")
    try:
        with RankerClient(target, tls_root_cert_file=str(cert), timeout=10) as secure:
            # No config file: every model directory, default policy.
            deadline = time.monotonic() + 10
            while not secure.list_models() and time.monotonic() < deadline:
                time.sleep(0.05)
            assert [m.name for m in secure.list_models()] == ["demo"]
        with RankerClient(target, timeout=3) as plain:
            with pytest.raises((UnavailableError, PlrankError)):
                plain.list_models()
    finally:
        stop_server(process)


def test_explain_contributions_add_up_to_the_served_score(client, data):
    for query in data.queries[:6]:
        ranked = client.rank("demo", query.query_id, query.rows, version=1)
        served = ranked.scores_in_request_order(len(query.rows))
        result = client.explain("demo", query.query_id, query.rows,
                                version=1, ids=query.ids)
        assert result.model_name == "demo"
        assert result.model_version == 1
        assert result.query_id == query.query_id
        assert len(result.documents) == len(query.rows)
        for index, document in enumerate(result.documents):
            assert document.request_index == index
            assert document.id == query.ids[index]
            assert document.score == served[index]  # bit for bit
            magnitudes = [abs(c.contribution) for c in document.contributions]
            assert magnitudes == sorted(magnitudes, reverse=True)
            assert all(0 <= c.feature < NUM_FEATURES and c.contribution != 0
                       for c in document.contributions)
            total = result.bias + sum(document.as_dict().values())
            assert math.isclose(total, document.score, rel_tol=0, abs_tol=1e-9)
        top = client.explain("demo", query.query_id, query.rows, version=1,
                             top_k=2)
        assert top.bias == result.bias
        for full, cut in zip(result.documents, top.documents):
            assert cut.contributions == full.contributions[:2]


def test_explain_errors_are_typed(client, data):
    row = data.queries[0].rows[0]
    expect_error(NotFoundError, lambda: client.explain("nope", "q", [row]),
                 "unknown model 'nope'")
    expect_error(InvalidArgumentError,
                 lambda: client.explain("demo", "q", [list(row) + [1.0]]),
                 "dense features")
    expect_error(InvalidArgumentError, lambda: client.explain("demo", "q", []),
                 "no documents")
    expect_error(ResourceExhaustedError,
                 lambda: client.explain("demo", "q", [row] * (MAX_DOCUMENTS + 1)),
                 str(MAX_DOCUMENTS))
    with pytest.raises(ValueError):
        client.explain("demo", "q", [row], top_k=-1)


def test_rank_batch_answers_each_query_on_its_own(client, data):
    queries = data.queries[:4]
    entries = client.rank_batch(
        "demo", [(q.query_id, q.rows, q.ids) for q in queries], version=1)
    assert len(entries) == len(queries)
    for query, entry in zip(queries, entries):
        assert entry.ok and entry.error is None
        single = client.rank("demo", query.query_id, query.rows, version=1,
                             ids=query.ids)
        assert entry.result.documents == single.documents
        assert entry.result.model_version == 1
        assert entry.result.query_id == query.query_id
    # One bad query (wrong width) and one unknown model do not fail the rest.
    row = queries[0].rows[0]
    # A prepared RankRequest (here for another model) is sent as it is.
    unknown = ranker_pb2.RankRequest(
        model_spec=ranker_pb2.ModelSpec(name="nope"), query_id="u")
    unknown.documents.add().dense.values.extend(row)
    entries = client.rank_batch(
        "demo", [(queries[0].query_id, queries[0].rows),
                 ("bad", [list(row) + [1.0]]), unknown,
                 (queries[1].query_id, queries[1].rows)], top_k=2)
    assert [e.ok for e in entries] == [True, False, False, True]
    assert isinstance(entries[1].error, InvalidArgumentError)
    assert "dense features" in entries[1].error.details
    assert isinstance(entries[2].error, NotFoundError)
    assert "unknown model 'nope'" in entries[2].error.details
    assert len(entries[0].result.documents) == 2
    assert entries[3].result.query_id == queries[1].query_id


def test_rank_batch_call_errors_raise(client, data):
    expect_error(InvalidArgumentError, lambda: client.rank_batch("demo", []),
                 "no queries")
    with pytest.raises(ValueError):
        client.rank_batch("demo", [("q", [data.queries[0].rows[0]])], top_k=-1)
    with pytest.raises(TypeError):
        client.rank_batch("demo", [42])
