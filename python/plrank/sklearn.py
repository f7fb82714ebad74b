"""plrank.PLRanker: a scikit-learn estimator over plrank.train.

Parameter names are LightGBM's LGBMRanker names where the meaning is the
same (n_estimators, num_leaves, learning_rate, min_child_samples, ...);
PLRank's own parameters (pl_topk, pl_ties, split_gain, ...: see
plrank.param_names()) are keyword arguments too. See docs/python-sklearn.md.
"""

from __future__ import annotations

import inspect
import re
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
from sklearn.base import BaseEstimator

import plrank

# PLRanker parameter -> plrank.train parameter (plrank-train flag).
_LIGHTGBM_NAMES = {
    "n_estimators": "trees",
    "num_leaves": "leaves",
    "learning_rate": "learning_rate",
    "max_depth": "max_depth",
    "min_child_samples": "min_data_in_leaf",
    "min_child_weight": "min_sum_hessian_in_leaf",
    "min_split_gain": "min_gain_to_split",
    "subsample": "bagging_fraction",
    "subsample_freq": "bagging_freq",
    "colsample_bytree": "feature_fraction",
    "reg_lambda": "lambda_l2",
    "max_bin": "max_bin",
    "random_state": "seed",
    "n_jobs": "num_threads",
    "objective": "objective",
}
# LightGBM objective names with a PLRank equivalent.
_OBJECTIVES = {"lambdarank": "lambdamart", "rank_xendcg": "xendcg"}
# plrank.train parameters that are fit()'s business here.
_FIT_ONLY = {"early_stopping_rounds", "eval_at", "quiet", "log_period"}


def _python_message(message: str) -> str:
    """A plrank.train error in PLRanker's parameter names."""
    for ours, theirs in _LIGHTGBM_NAMES.items():
        if ours != theirs:
            message = re.sub(rf"\b{theirs}\b", ours, message)
    return message


class PLRanker(BaseEstimator):
    """A gradient-boosted ranker (PLRank's Plackett-Luce loss by default)
    with scikit-learn's estimator API: get_params/set_params, clone,
    GridSearchCV.

    Queries come as LightGBM's ``group`` (documents per query, in order) or
    XGBoost's ``qid`` (a query id per document, queries contiguous) to fit;
    with ``qid_column`` the query ids travel inside X (a DataFrame column
    name or an array column index, not a feature), so cross-validation with
    a group-aware splitter (GroupKFold over the query ids) and scoring work
    unchanged.
    """

    def __init__(self, objective: str = "plrank", n_estimators: int = 100,
                 num_leaves: int = 31, learning_rate: Optional[float] = None,
                 max_depth: int = -1, min_child_samples: int = 20,
                 min_child_weight: float = 1e-3, min_split_gain: float = 0.0,
                 subsample: float = 1.0, subsample_freq: int = 0,
                 colsample_bytree: float = 1.0, reg_lambda: float = 0.0,
                 max_bin: int = 255, random_state: Optional[int] = None,
                 n_jobs: Optional[int] = None, importance_type: str = "split",
                 qid_column: Any = None, **kwargs: Any) -> None:
        self.objective = objective
        self.n_estimators = n_estimators
        self.num_leaves = num_leaves
        self.learning_rate = learning_rate
        self.max_depth = max_depth
        self.min_child_samples = min_child_samples
        self.min_child_weight = min_child_weight
        self.min_split_gain = min_split_gain
        self.subsample = subsample
        self.subsample_freq = subsample_freq
        self.colsample_bytree = colsample_bytree
        self.reg_lambda = reg_lambda
        self.max_bin = max_bin
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.importance_type = importance_type
        self.qid_column = qid_column
        self._check_extra(kwargs)
        self._other_params: Dict[str, Any] = dict(kwargs)

    # --- scikit-learn parameter protocol (PLRank's own params as kwargs) ---

    @staticmethod
    def _check_extra(params: Dict[str, Any]) -> None:
        known = set(plrank.param_names()) - set(_LIGHTGBM_NAMES.values()) - _FIT_ONLY
        for name in params:
            if name in known:
                continue
            hint = ""
            if name in _LIGHTGBM_NAMES.values():
                ours = [k for k, v in _LIGHTGBM_NAMES.items() if v == name][0]
                hint = f"; PLRanker calls it {ours!r}"
            elif name in _FIT_ONLY:
                hint = f"; pass {name} to fit()"
            raise TypeError(f"PLRanker got an unknown parameter {name!r}{hint} "
                            "(see plrank.param_names() for PLRank's own)")

    def get_params(self, deep: bool = True) -> Dict[str, Any]:
        params = super().get_params(deep=deep)
        params.update(getattr(self, "_other_params", {}))
        return params

    def set_params(self, **params: Any) -> "PLRanker":
        own = set(inspect.signature(type(self).__init__).parameters) - {"self", "kwargs"}
        extra = {k: v for k, v in params.items() if k not in own}
        self._check_extra(extra)
        for name, value in params.items():
            setattr(self, name, value)
            if name in extra:
                self._other_params[name] = value
        return self

    # --- data ---

    def _split_x(self, X: Any, fitting: bool) -> Tuple[np.ndarray, Optional[np.ndarray]]:
        """(features float32, query ids or None), with DataFrame columns
        checked against (or recorded as) the feature names."""
        qids = None
        names = None
        if hasattr(X, "columns") and hasattr(X, "to_numpy"):  # a DataFrame
            columns = [str(c) for c in X.columns]
            if self.qid_column is not None:
                if self.qid_column not in X.columns:
                    raise ValueError(f"qid_column={self.qid_column!r} is not a column of X")
                qids = X[self.qid_column].to_numpy()
                X = X.drop(columns=[self.qid_column])
                columns = [str(c) for c in X.columns]
            names = columns
            if not fitting and getattr(self, "feature_names_in_", None) is not None:
                expected = list(self.feature_names_in_)
                if columns != expected:
                    missing = [c for c in expected if c not in columns]
                    if missing:
                        raise ValueError(f"X lacks the feature columns {missing} the "
                                         "ranker was fitted with")
                    X = X[expected]  # the fitted order
            x = X.to_numpy(dtype=np.float32, na_value=np.nan)
        else:
            x = np.asarray(X, dtype=np.float32)
            if x.ndim != 2:
                raise ValueError(f"X must be 2-D (documents x features), not {x.ndim}-D")
            if self.qid_column is not None:
                qids = x[:, int(self.qid_column)].astype(np.int64)
                x = np.delete(x, int(self.qid_column), axis=1)
        if fitting:
            self.n_features_in_ = x.shape[1]
            if names is not None:
                self.feature_names_in_ = np.asarray(names, dtype=object)
            elif hasattr(self, "feature_names_in_"):
                del self.feature_names_in_
        elif x.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {x.shape[1]} features, the ranker was fitted "
                             f"with {self.n_features_in_}")
        return np.ascontiguousarray(x), qids

    @staticmethod
    def _group_sizes(n: int, group: Any, qid: Any, what: str) -> np.ndarray:
        if group is not None and qid is not None:
            raise ValueError(f"{what}: give group (documents per query) or qid "
                             "(a query id per document), not both")
        if group is not None:
            sizes = np.asarray(group, dtype=np.int64).ravel()
        elif qid is not None:
            ids = np.asarray(qid).ravel()
            if len(ids) != n:
                raise ValueError(f"{what}: qid has {len(ids)} entries for {n} documents")
            if n == 0:
                return np.zeros(0, dtype=np.int64)
            starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
            if len(np.unique(ids)) != len(starts):
                raise ValueError(f"{what}: qid is not contiguous (a query's documents "
                                 "must be adjacent; sort by qid first)")
            sizes = np.diff(np.r_[starts, n])
        else:
            raise ValueError(f"{what}: the queries are needed: pass group= "
                             "(documents per query) or qid=, or set qid_column")
        if sizes.sum() != n:
            raise ValueError(f"{what}: group sizes add up to {sizes.sum()}, X has {n} rows")
        return sizes

    def _train_params(self, eval_at: Any, early_stopping_rounds: Any) -> Dict[str, Any]:
        params: Dict[str, Any] = {"quiet": True}
        defaults = inspect.signature(type(self).__init__).parameters
        for ours, theirs in _LIGHTGBM_NAMES.items():
            value = getattr(self, ours)
            # None is PLRank's default (auto learning rate, seed 1, all
            # cores); a default is left unsaid, as on the command line.
            if value is None or value == defaults[ours].default:
                continue
            if ours == "objective":
                value = _OBJECTIVES.get(value, value)
            if ours == "n_jobs" and value < 0:
                value = 0
            params[theirs] = value
        params.update(self._other_params)
        if eval_at is not None:
            params["eval_at"] = [int(k) for k in np.atleast_1d(eval_at)]
        if early_stopping_rounds is not None:
            params["early_stopping_rounds"] = int(early_stopping_rounds)
        return params

    # --- estimator API ---

    def fit(self, X: Any, y: Any, group: Any = None, *, qid: Any = None,
            sample_weight: Any = None, eval_set: Optional[Sequence[Tuple[Any, Any]]] = None,
            eval_group: Optional[Sequence[Any]] = None, eval_qid: Optional[Sequence[Any]] = None,
            eval_at: Any = None, early_stopping_rounds: Optional[int] = None,
            callbacks: Optional[Sequence[plrank.Callback]] = None) -> "PLRanker":
        """Trains on X (documents x features; a DataFrame's columns are the
        feature names), y (integer grades 0..31) and the queries (group or
        qid, or qid_column). eval_set: [(X_valid, y_valid)] with eval_group
        (or eval_qid), one set: early_stopping_rounds watches its NDCG at the
        first eval_at cut-off. callbacks: as plrank.train's."""
        x, qids_in_x = self._split_x(X, fitting=True)
        labels = np.asarray(y, dtype=np.float64).ravel()
        sizes = self._group_sizes(len(x), group, qid if qid is not None else qids_in_x, "fit")
        train_kwargs: Dict[str, Any] = {}
        if sample_weight is not None:
            if "sample_weight" not in inspect.signature(plrank.train).parameters:
                raise NotImplementedError(
                    "sample_weight: per-document weights are not supported by this "
                    "build of plrank.train yet")
            train_kwargs["sample_weight"] = np.asarray(sample_weight, dtype=np.float64)
        valid = None
        if eval_set:
            if len(eval_set) != 1:
                raise ValueError(f"eval_set: PLRank validates on one set, got {len(eval_set)}")
            vx, vy = eval_set[0]
            vx, vqids = self._split_x(vx, fitting=False)
            vgroup = eval_group[0] if eval_group else None
            vqid = eval_qid[0] if eval_qid else vqids
            valid = (vx, np.asarray(vy, dtype=np.float64).ravel(),
                     self._group_sizes(len(vx), vgroup, vqid, "eval_set"))
        elif early_stopping_rounds:
            raise ValueError("early_stopping_rounds needs eval_set (and eval_group)")
        params = self._train_params(eval_at, early_stopping_rounds)
        try:
            model = plrank.train(params, (x, labels, sizes), valid=valid,
                                 callbacks=callbacks, **train_kwargs)
        except ValueError as error:
            raise ValueError(_python_message(str(error))) from None
        if getattr(self, "feature_names_in_", None) is not None:
            model._core.set_feature_names([str(n) for n in self.feature_names_in_])
        self.booster_ = model
        history = model.history or {}
        self.best_iteration_ = model.best_iteration or model.num_trees
        self.evals_result_ = history
        self._eval_at = params.get("eval_at", [10])
        return self

    def _fitted(self) -> plrank.Model:
        model = getattr(self, "booster_", None)
        if model is None:
            from sklearn.exceptions import NotFittedError
            raise NotFittedError("this PLRanker is not fitted yet; call fit first")
        return model

    def predict(self, X: Any, pred_contrib: bool = False) -> np.ndarray:
        """Scores, one per document (higher ranks first); with pred_contrib,
        the TreeSHAP contributions (Model.explain: features then the bias)."""
        model = self._fitted()
        x, _ = self._split_x(X, fitting=False)
        return model.explain(x) if pred_contrib else model.predict(x)

    def score(self, X: Any, y: Any, group: Any = None, qid: Any = None) -> float:
        """Mean NDCG at the first eval_at cut-off (10 by default), as
        plrank-eval computes it; the queries as for fit."""
        model = self._fitted()
        x, qids_in_x = self._split_x(X, fitting=False)
        sizes = self._group_sizes(len(x), group, qid if qid is not None else qids_in_x,
                                  "score")
        scores = model.predict(x)
        return plrank._core.mean_ndcg(np.asarray(y, dtype=np.float64).ravel(), sizes,
                                      scores, int(self._eval_at[0]))

    @property
    def feature_importances_(self) -> np.ndarray:
        """Per feature (column order of X): split counts
        (importance_type="split", LightGBM's default) or summed gains
        ("gain")."""
        return self._fitted().feature_importance(self.importance_type)

    @property
    def n_estimators_(self) -> int:
        return self._fitted().num_trees
