"""plrank.PLRanker with scikit-learn and pandas; Model.explain against
plrank-eval --contributions_out; per-iteration callbacks; errors naming
Python parameters (docs/python-sklearn.md)."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

import plrank

sklearn = pytest.importorskip("sklearn", reason="python3-sklearn (scripts/setup.sh)")
pd = pytest.importorskip("pandas", reason="python3-pandas (scripts/setup.sh)")

from sklearn.base import clone  # noqa: E402
from sklearn.model_selection import GridSearchCV, GroupKFold  # noqa: E402


@pytest.fixture(scope="module")
def arrays(data):
    x, y, groups = plrank.read_letor(data / "d.train")
    vx, vy, vgroups = plrank.read_letor(data / "d.vali", num_features=x.shape[1])
    return x, y, groups, vx, vy, vgroups


def qids_of(groups):
    return np.repeat(np.arange(len(groups)), groups)


def test_same_model_as_plrank_train_with_lightgbm_names(arrays):
    x, y, groups, *_ = arrays
    ranker = plrank.PLRanker(n_estimators=12, num_leaves=7, learning_rate=0.2,
                             min_child_samples=5, random_state=3, n_jobs=2)
    ranker.fit(x, y, group=groups)
    model = plrank.train({"trees": 12, "leaves": 7, "learning_rate": 0.2,
                          "min_data_in_leaf": 5, "seed": 3, "num_threads": 2,
                          "quiet": True}, (x, y, groups))
    np.testing.assert_array_equal(ranker.predict(x), model.predict(x))
    assert ranker.n_features_in_ == x.shape[1]
    importances = ranker.feature_importances_
    assert importances.shape == (x.shape[1],) and importances.sum() > 0


def test_params_clone_and_plrank_own_params():
    ranker = plrank.PLRanker(n_estimators=5, pl_topk=3)
    params = ranker.get_params()
    assert params["n_estimators"] == 5 and params["pl_topk"] == 3
    copy = clone(ranker)
    assert copy.get_params() == params
    copy.set_params(num_leaves=9, pl_ties="breslow")
    assert copy.num_leaves == 9 and copy.get_params()["pl_ties"] == "breslow"
    with pytest.raises(TypeError, match="PLRanker calls it 'num_leaves'"):
        plrank.PLRanker(leaves=7)
    with pytest.raises(TypeError, match="unknown parameter 'pl_topkk'"):
        plrank.PLRanker().set_params(pl_topkk=1)


def test_errors_name_python_parameters(arrays):
    x, y, groups, *_ = arrays
    with pytest.raises(ValueError) as error:
        plrank.PLRanker(n_estimators=0).fit(x, y, group=groups)
    assert "n_estimators" in str(error.value) and "--" not in str(error.value)
    with pytest.raises(ValueError) as error:
        plrank.train({"eval_at": "x"}, (x, y, groups))
    assert str(error.value).startswith("eval_at: 'x'"), str(error.value)
    with pytest.raises(ValueError, match="LightGBM's boosting: plrank-train grows"):
        plrank.train({"boosting": "dart"}, (x, y, groups))
    with pytest.raises(ValueError, match="pass group="):
        plrank.PLRanker().fit(x, y)


def test_dataframe_feature_names_reach_the_model(arrays):
    x, y, groups, *_ = arrays
    columns = [f"f_{i}" for i in range(x.shape[1])]
    frame = pd.DataFrame(x, columns=columns)
    ranker = plrank.PLRanker(n_estimators=5, num_leaves=4, min_child_samples=5)
    ranker.fit(frame, y, group=groups)
    assert list(ranker.feature_names_in_) == columns
    assert ranker.booster_.feature_names == columns
    # Columns are matched by name, whatever their order.
    shuffled = frame[columns[::-1]]
    np.testing.assert_array_equal(ranker.predict(shuffled), ranker.predict(frame))
    with pytest.raises(ValueError, match="lacks the feature columns"):
        ranker.predict(frame.drop(columns=[columns[0]]))


def test_eval_set_early_stopping_and_callbacks(arrays):
    x, y, groups, vx, vy, vgroups = arrays
    seen = []

    def record(iteration, info):
        seen.append((iteration, info["valid"].get("ndcg@3")))

    ranker = plrank.PLRanker(n_estimators=40, num_leaves=7, min_child_samples=5)
    ranker.fit(x, y, group=groups, eval_set=[(vx, vy)], eval_group=[vgroups],
               eval_at=[3], early_stopping_rounds=5, callbacks=[record])
    assert [i for i, _ in seen] == list(range(1, len(seen) + 1))
    assert all(v is not None for _, v in seen)
    assert ranker.best_iteration_ <= len(seen)

    # A callback returning True stops training after that iteration.
    stopped = plrank.train({"trees": 30, "quiet": True}, (x, y, groups),
                           callbacks=[lambda i, info: i == 4])
    assert stopped.num_trees == 4

    def fail(iteration, info):
        raise KeyError("boom")

    with pytest.raises(KeyError, match="boom"):
        plrank.train({"trees": 5, "quiet": True}, (x, y, groups), callbacks=[fail])


def test_grid_search_with_a_group_aware_splitter(arrays):
    x, y, groups, *_ = arrays
    qid = qids_of(groups)
    frame = pd.DataFrame(x, columns=[f"c{i}" for i in range(x.shape[1])])
    frame.insert(0, "qid", qid)
    search = GridSearchCV(
        plrank.PLRanker(n_estimators=5, min_child_samples=5, qid_column="qid"),
        {"num_leaves": [3, 7]}, cv=GroupKFold(n_splits=3))
    search.fit(frame, y, groups=qid)
    assert search.best_params_["num_leaves"] in (3, 7)
    assert 0.0 < search.best_score_ <= 1.0
    # score() is plrank-eval's NDCG@10.
    best = search.best_estimator_
    assert best.n_features_in_ == x.shape[1]
    assert best.score(frame, y) == pytest.approx(
        plrank._core.mean_ndcg(y.astype(float), groups, best.predict(frame), 10))


def test_explain_matches_plrank_eval_contributions(bin_dir, data, tmp_path):
    model = plrank.train({"trees": 8, "leaves": 7, "min_data_in_leaf": 5,
                          "quiet": True}, data / "d.train")
    model.save(tmp_path / "m.pb")
    out = tmp_path / "contrib.txt"
    subprocess.run([str(bin_dir / "plrank-eval"), f"--model={tmp_path / 'm.pb'}",
                    f"--data={data / 'd.test'}", f"--contributions_out={out}"],
                   check=True, capture_output=True, timeout=120)
    offline = np.loadtxt(out, dtype=np.float64)
    ours = model.explain(data / "d.test")
    np.testing.assert_array_equal(ours, offline)
    np.testing.assert_allclose(ours.sum(axis=1), model.predict(data / "d.test"),
                               rtol=0, atol=1e-9)
    x, _, _ = plrank.read_letor(data / "d.test", num_features=model.num_features)
    np.testing.assert_array_equal(model.explain(x), ours)
    dump = model.dump_json()
    assert dump["schema"] == "plrank.model" and len(dump["trees"]) == 8
