"""The plrank package against the CLIs of the same build: the same params give
the same model, scores, history and importance as plrank-train + plrank-eval."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import plrank

PARAMS = {"objective": "plrank", "trees": 25, "leaves": 7, "learning_rate": 0.15,
          "min_data_in_leaf": 5, "num_threads": 2, "seed": 7, "eval_at": [1, 3, 10],
          "feature_fraction": 0.8, "bagging_fraction": 0.9, "bagging_freq": 2,
          "quiet": True}


def cli_flags(params):
    flags = []
    for name, value in params.items():
        if isinstance(value, bool):
            value = "true" if value else "false"
        elif isinstance(value, list):
            value = ",".join(map(str, value))
        flags.append(f"--{name}={value}")
    return flags


def run(args, **kwargs):
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True,
                            timeout=300, **kwargs)
    assert result.returncode == 0, result.stderr
    return result


def cli_scores(bin_dir, model, data_file, out):
    run([bin_dir / "plrank-eval", f"--model={model}", f"--data={data_file}",
         f"--scores_out={out}"])
    return np.loadtxt(out, dtype=np.float64)


@pytest.fixture(scope="module")
def cli_run(bin_dir, data, tmp_path_factory):
    """plrank-train + plrank-eval with PARAMS: (model path, test scores, history)."""
    out = tmp_path_factory.mktemp("cli")
    run([bin_dir / "plrank-train", f"--train={data / 'd.train'}",
         f"--valid={data / 'd.vali'}", f"--model_out={out / 'model.pb'}",
         f"--history_out={out / 'history.json'}", *cli_flags(PARAMS)])
    scores = cli_scores(bin_dir, out / "model.pb", data / "d.test", out / "scores.txt")
    history = json.loads((out / "history.json").read_text())
    return out / "model.pb", scores, history


@pytest.fixture(scope="module")
def model(data):
    return plrank.train(PARAMS, data / "d.train", valid=str(data / "d.vali"))


def test_installed_package_is_imported():
    # The ctest runs this from the venv pip installed into, never the source tree.
    source = Path(__file__).resolve().parent.parent
    assert source not in Path(plrank.__file__).resolve().parents, plrank.__file__
    assert Path(plrank._core.__file__).suffix == ".so"
    assert (Path(plrank.__file__).parent / "py.typed").is_file()
    assert (Path(plrank.__file__).parent / "_core.pyi").is_file()


def test_same_scores_as_the_clis(model, cli_run, data):
    _, cli_test_scores, _ = cli_run
    scores = model.predict(data / "d.test")
    assert scores.dtype == np.float64 and scores.shape == cli_test_scores.shape
    assert len(np.unique(scores)) > 10  # a real model, not a constant
    np.testing.assert_allclose(scores, cli_test_scores, rtol=0, atol=1e-6)
    # In fact bit for bit (the scores file holds shortest round-trip text).
    np.testing.assert_array_equal(scores, cli_test_scores)


def test_history_is_the_history_out_document(model, cli_run):
    _, _, cli_history = cli_run
    assert model.history == cli_history
    assert len(model.history["history"]) == PARAMS["trees"]
    assert model.history["metrics"] == ["ndcg@1", "ndcg@3", "ndcg@10"]
    assert model.history["history"][-1]["valid"]["ndcg@10"] is not None


def test_saved_model_is_the_cli_artifact(model, cli_run, data, bin_dir, tmp_path):
    cli_model, cli_test_scores, _ = cli_run
    path = tmp_path / "versions" / "py.pb"
    path.parent.mkdir()
    model.save(path)
    assert not [p for p in path.parent.iterdir() if p != path]  # no temp file left
    # plrank-eval reads it and scores as the CLI-trained model.
    np.testing.assert_array_equal(
        cli_scores(bin_dir, path, data / "d.test", tmp_path / "s.txt"), cli_test_scores)
    loaded = plrank.load_model(path)
    assert loaded.history is None
    np.testing.assert_array_equal(loaded.predict(data / "d.test"), cli_test_scores)
    assert loaded.parameters["trees"] == "25" and loaded.parameters["leaves"] == "7"
    assert loaded.parameters["train"] == str(data / "d.train")
    # And the CLI's own file loads and scores the same.
    np.testing.assert_array_equal(plrank.load_model(cli_model).predict(data / "d.test"),
                                  cli_test_scores)


def test_feature_importance_matches_plrank_eval(model, cli_run, bin_dir):
    cli_model, _, _ = cli_run
    text = run([bin_dir / "plrank-eval", f"--model={cli_model}", "--importance"]).stdout
    rows = [line.split("\t") for line in text.splitlines()
            if line and not line.startswith("#") and not line.startswith("feature")]
    gain = model.feature_importance("gain")
    splits = model.feature_importance(kind="split")
    assert gain.shape == splits.shape == (model.num_features,)
    assert len(rows) == model.num_features
    for feature, cli_gain, cli_splits, _ in rows:
        f = int(feature) - 1
        assert splits[f] == int(cli_splits)
        assert gain[f] == pytest.approx(float(cli_gain), rel=1e-5)
    assert splits.sum() > 0
    with pytest.raises(ValueError, match="kind"):
        model.feature_importance("cover")


def test_arrays_train_and_score_as_files(model, data):
    train = plrank.read_letor(data / "d.train")
    valid = plrank.read_letor(data / "d.vali", num_features=train[0].shape[1])
    x_test, _, _ = plrank.read_letor(data / "d.test", num_features=model.num_features)
    from_arrays = plrank.train(PARAMS, train, valid)
    file_scores = model.predict(data / "d.test")
    np.testing.assert_array_equal(from_arrays.predict(x_test), file_scores)
    np.testing.assert_array_equal(model.predict(x_test.astype(np.float64)), file_scores)
    # Same content as the file-trained run, but for where the data came from.
    assert from_arrays.history == model.history
    with pytest.raises(ValueError, match="feature columns"):
        model.predict(x_test[:, :-1])


def test_group_sizes_and_labels_are_checked(data):
    x, y, groups = plrank.read_letor(data / "d.train")
    with pytest.raises(ValueError, match="group_sizes add up to"):
        plrank.train({"quiet": True}, (x, y, groups[:-1]))
    bad = y.astype(np.float64)
    bad[3] = 1.5
    with pytest.raises(ValueError, match=r"y\[3\] = 1.5"):
        plrank.train({"quiet": True}, (x, bad, groups))


def test_unknown_and_malformed_params():
    with pytest.raises(ValueError, match="unknown parameter 'learning_rat'; did you mean 'learning_rate'"):
        plrank.train({"learning_rat": 0.1}, "unused.txt")
    with pytest.raises(ValueError, match="LightGBM's num_leaves is 'leaves'"):
        plrank.train({"num_leaves": 31}, "unused.txt")
    with pytest.raises(ValueError, match="trees='many'"):
        plrank.train({"trees": "many"}, "unused.txt")
    # Errors name parameters, not plrank-train's flags.
    with pytest.raises(ValueError, match="^trees must be > 0"):
        plrank.train({"trees": 0}, "unused.txt")
    with pytest.raises(ValueError, match="objective"):
        plrank.train({"objective": "plrnk"}, "unused.txt")
    with pytest.raises(ValueError, match="Model.save"):
        plrank.train({"model_out": "m.pb"}, "unused.txt")
    assert "min_data_in_leaf" in plrank.param_names()
    assert "model_out" not in plrank.param_names()


def test_param_table_is_plrank_trains():
    table = {row["name"]: row for row in plrank.param_table()}
    assert sorted(table) == sorted(plrank.param_names())
    assert table["seed"]["type"] == "uint64"
    assert table["seed"]["default"] == "1"
    assert table["leaves"] == {
        "name": "leaves", "type": "int32", "default": "31", "range": ">= 2",
        "lightgbm": "num_leaves", "help": "Leaves per tree (leaf-wise growth)."}
    assert table["min_sum_hessian_in_leaf"]["default"] == "0.001"


def test_paper_model_records_the_papers_settings(data):
    model = plrank.train({"pl_paper": True, "trees": 2, "leaves": 4, "quiet": True},
                         data / "d.train")
    assert model.parameters["pl_max_leaf_step"] == "100"
    assert model.parameters["pl_newton_damping"] == "1e-06"
    assert model.parameters["pl_stop_at_lowest_label"] == "false"
    assert model.parameters["pl_ties"] == "permutation"


def test_core_errors_carry_the_message(tmp_path, data, model):
    missing = tmp_path / "missing.txt"
    with pytest.raises(OSError, match="missing.txt"):
        plrank.train({"quiet": True}, missing)
    broken = tmp_path / "broken.txt"
    broken.write_text("1 qid:1 1:0.5\nnot a line\n")
    with pytest.raises(ValueError, match="broken.txt"):
        plrank.train({"quiet": True}, broken)
    garbage = tmp_path / "garbage.pb"
    garbage.write_bytes(b"\x00not a model")
    with pytest.raises(ValueError, match="garbage.pb"):
        plrank.load_model(garbage)
    with pytest.raises(Exception, match="not a regular file"):
        model.save(tmp_path)  # a directory


def test_log_lines_and_ignored_params(data):
    lines = []
    params = {"objective": "ca", "ca_restarts": 1, "ca_max_rounds": 2, "leaves": 5}
    with pytest.warns(UserWarning, match="ignores leaves"):
        model = plrank.train(params, data / "d.train", log=lines.append)
    assert any(line.startswith("train: ") for line in lines), lines
    assert model.objective == "ca" and model.num_trees == 0


def test_learning_rate_is_auto_unless_given():
    # 600 queries x 100 documents: past the 50,000 documents from which
    # PLRank's auto rate is 20 / trees within [0.1, 0.2], as in plrank-train.
    rng = np.random.default_rng(5)
    x = rng.normal(size=(60_000, 4)).astype(np.float32)
    y = (x[:, 0] + rng.normal(size=60_000) > 0.5).astype(np.int32)
    groups = np.full(600, 100, dtype=np.int64)
    lines = []
    params = {"trees": 2, "leaves": 4, "num_threads": 1}
    auto = plrank.train(params, (x, y, groups), log=lines.append)
    assert auto.parameters["learning_rate"] == "0.2"
    assert any(line.startswith("learning rate 0.2 (auto from 60000 training documents and 2 trees")
               for line in lines), lines
    lines.clear()
    given = plrank.train({**params, "learning_rate": 0.05}, (x, y, groups), log=lines.append)
    assert given.parameters["learning_rate"] == "0.05"
    assert not any("(auto from" in line for line in lines), lines


def test_serving_client_still_imports(tmp_path):
    gen = os.environ.get("PLRANK_PY_GEN")
    client = os.environ.get("PLRANK_CLIENT_SOURCE")
    if not gen or not client:
        pytest.skip("PLRANK_PY_GEN / PLRANK_CLIENT_SOURCE not set (no server build)")
    # The client's stubs (gen/plrank/v1) first on the path, this package after.
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([gen, client]))
    probe = run([sys.executable, "-c",
                 "import plrank, plrank_client, plrank.v1.ranker_pb2 as r; "
                 "print(plrank.__file__); print(callable(plrank.train)); "
                 "print(r.__file__); print(plrank_client.__file__)"],
                env=env, cwd=tmp_path)
    package, has_train, stubs, client_file = probe.stdout.split()
    assert package == plrank.__file__ and has_train == "True"
    assert stubs.startswith(gen) and client_file.startswith(client)


def test_unit_sample_weights_change_nothing_and_match_a_weight_file(model, data, tmp_path):
    x, y, groups = plrank.read_letor(data / "d.train")
    valid = plrank.read_letor(data / "d.vali", num_features=x.shape[1])
    x_test, _, _ = plrank.read_letor(data / "d.test", num_features=model.num_features)
    plain = plrank.train(PARAMS, (x, y, groups), valid)
    ones = plrank.train(PARAMS, (x, y, groups), valid, sample_weight=np.ones(len(y)))
    np.testing.assert_array_equal(ones.predict(x_test), plain.predict(x_test))
    # Uneven weights change the model; the same weights beside the file (a
    # LightGBM-style .weight) give the same model as sample_weight=.
    weights = 0.5 + (np.arange(len(y)) % 3)
    weighted = plrank.train(PARAMS, (x, y, groups), valid, sample_weight=weights)
    assert not np.array_equal(weighted.predict(x_test), plain.predict(x_test))
    train_copy = tmp_path / "w.train"
    train_copy.write_text((data / "d.train").read_text())
    (tmp_path / "w.train.weight").write_text("".join(f"{w}\n" for w in weights))
    from_file = plrank.train(PARAMS, train_copy, str(data / "d.vali"))
    np.testing.assert_array_equal(from_file.predict(x_test), weighted.predict(x_test))
    with pytest.raises(ValueError, match="w.train.weight:2: 2 weight values"):
        (tmp_path / "w.train.weight").write_text("1\n1\n")
        plrank.train(PARAMS, train_copy)


def test_group_weight_position_and_gam(data):
    x, y, groups = plrank.read_letor(data / "d.train")
    position = np.concatenate([np.arange(1, g + 1) for g in groups])
    params = dict(PARAMS, position_debias="gam")
    gam = plrank.train(params, (x, y, groups), position=position,
                       group_weight=np.linspace(0.5, 2.0, len(groups)))
    curve = [float(v) for v in gam.parameters["position_bias_curve"].split(",")]
    assert curve[0] == 0.0 and len(curve) == int(position.max())
    ips = plrank.train(dict(PARAMS, position_debias="ips",
                            position_propensities=[1.0, 0.5, 0.25]),
                       (x, y, groups), position=position)
    assert ips.parameters["ips_propensity_curve"] == "1,0.5,0.25"
    with pytest.raises(ValueError, match="needs a display position"):
        plrank.train(params, (x, y, groups))


def test_marginals_match_a_marginals_file(data, tmp_path):
    # The policy-aware propensity sum_j mu(d, j) theta_j from marginals= gives
    # the model a .marginals file beside the data gives; a bad row is named.
    x, y, groups = plrank.read_letor(data / "d.train")
    rng = np.random.default_rng(3)
    mu = rng.uniform(0.05, 0.3, size=(len(y), 3))
    params = dict(PARAMS, position_debias="ips",
                  position_propensities=[1.0, 0.5, 0.25])
    from_array = plrank.train(params, (x, y, groups), marginals=mu)
    assert from_array.parameters["ips_propensity_curve"] == "1,0.5,0.25"
    plain = plrank.train(params, (x, y, groups),
                         position=np.ones(len(y)))
    train_copy = tmp_path / "m.train"
    train_copy.write_text((data / "d.train").read_text())
    (tmp_path / "m.train.marginals").write_text(
        "".join(" ".join(repr(float(v)) for v in row) + "\n" for row in mu))
    from_file = plrank.train(params, train_copy)
    x_test, _, _ = plrank.read_letor(data / "d.test", num_features=x.shape[1])
    np.testing.assert_array_equal(from_file.predict(x_test),
                                  from_array.predict(x_test))
    assert not np.array_equal(plain.predict(x_test), from_array.predict(x_test))
    bad = mu.copy()
    bad[4, 1] = 0.9
    with pytest.raises(ValueError, match=r"marginals\[4\]: the marginals sum to"):
        plrank.train(params, (x, y, groups), marginals=bad)
    with pytest.raises(ValueError, match="2-D documents x positions"):
        plrank.train(params, (x, y, groups), marginals=mu[:, 0])
