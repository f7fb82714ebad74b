"""PLRank from Python: train, score, save and load ranking models.

Bindings over the same core library as ``plrank-train`` and ``plrank-eval``:
the same params train the same model, scored the same::

    import plrank
    model = plrank.train({"trees": 50, "leaves": 15}, "data.train", valid="data.vali")
    scores = model.predict("data.test")
    model.save("model.pb")

Errors from the core library raise ``ValueError`` (bad params or data),
``FileNotFoundError``, ``PermissionError``, ``MemoryError`` or
``RuntimeError`` with the library's message.
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

# The serving client's generated protobuf/gRPC stubs are the namespace
# portion plrank.v1 (clients/python); keep it importable when it lives in
# another sys.path entry than this package.
def _add_stub_portions() -> None:
    for entry in sys.path:
        portion = os.path.join(entry or os.curdir, "plrank")
        if portion not in __path__ and os.path.isdir(os.path.join(portion, "v1")):
            __path__.append(portion)


_add_stub_portions()

from plrank import _core  # noqa: E402

__all__ = ["Model", "PLRanker", "load_model", "read_letor", "train", "param_names",
           "param_table"]


def __getattr__(name: str) -> Any:
    # plrank.PLRanker needs scikit-learn; plain plrank does not.
    if name == "PLRanker":
        from plrank.sklearn import PLRanker
        return PLRanker
    raise AttributeError(f"module 'plrank' has no attribute {name!r}")
__version__ = "0.1.0"

PathLike = Union[str, "os.PathLike[str]"]
ArraySet = Tuple[npt.ArrayLike, npt.ArrayLike, npt.ArrayLike]
Data = Union[PathLike, ArraySet]
ParamValue = Union[bool, int, float, str, Sequence[int]]

# plrank-train flags that are arguments or methods here.
_NOT_PARAMS = {
    "train": "pass the training data as train",
    "valid": "pass the validation data as valid",
    "model_out": "save the model with Model.save(path)",
    "history_out": "read the learning curves from Model.history",
    "estimate_propensities": "run plrank-train --estimate_propensities=FILE",
}


def param_names() -> List[str]:
    """Every name plrank.train accepts: plrank-train's flags."""
    return [n for n in _core.train_param_names() if n not in _NOT_PARAMS]


def param_table() -> List[Dict[str, str]]:
    """The training parameters as plrank-train declares them, one dict per
    parameter: name, type ("int32", "uint64", "double", "bool", "string"),
    default (in flag syntax), range (accepted values in words, "" = any of
    the type), lightgbm (LightGBM's name of it, "" = none) and help. Only
    the names of param_names() are params of train()."""
    return [row for row in _core.train_param_table()
            if row["name"] not in _NOT_PARAMS]


def _flag_value(name: str, value: Any) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return repr(float(value))  # round-trips exactly
    if isinstance(value, (str, os.PathLike)):
        return os.fspath(value)
    if isinstance(value, (list, tuple)) and all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value):
        return ",".join(str(int(v)) for v in value)  # eval_at=[1, 3, 10]
    if isinstance(value, (list, tuple)) and all(
            isinstance(v, (int, float, np.integer, np.floating)) and
            not isinstance(v, bool) for v in value):
        return ",".join(repr(float(v)) for v in value)  # position_propensities
    raise TypeError(f"parameter {name}: {type(value).__name__} is not a bool, "
                    "number, string or list of numbers")


def _data_arg(what: str, data: Data) -> Union[str, tuple]:
    if isinstance(data, (str, os.PathLike)):
        return os.fspath(data)
    if isinstance(data, tuple) and len(data) == 3:
        x, y, groups = data
        return (np.asarray(x, dtype=np.float32), np.asarray(y, dtype=np.float64),
                np.asarray(groups, dtype=np.int64))
    raise TypeError(f"{what}: expected a file path or a tuple (X, y, group_sizes), "
                    f"not {type(data).__name__}")


class Model:
    """A trained or loaded PLRank model (the protobuf artifact of the CLIs)."""

    def __init__(self, core: _core.Model) -> None:
        self._core = core

    def predict(self, data: Union[PathLike, npt.ArrayLike]) -> np.ndarray:
        """Scores, one per document: of a LETOR / LightGBM-form file (read as
        plrank-eval reads it; in the file's line order), or of the rows of a
        2-D array with one column per model feature (NaN = missing)."""
        if isinstance(data, (str, os.PathLike)):
            return self._core.predict_file(os.fspath(data))
        x = np.ascontiguousarray(data, dtype=np.float32)
        if x.ndim != 2:
            raise ValueError(f"X must be 2-D (documents x features), not {x.ndim}-D")
        return self._core.predict_array(x)

    def explain(self, data: Union[PathLike, npt.ArrayLike]) -> np.ndarray:
        """Feature contributions (path-dependent TreeSHAP, exactly what the
        server's Explain returns), one row per document: columns 0..F-1 are
        features 1..F (LETOR numbering), the last column the bias (expected
        score); each row adds up to the document's score, as LightGBM's
        predict(pred_contrib=True). data: a 2-D array (documents x model
        features, NaN = missing) or a LETOR file (rows in its line order, as
        plrank-eval --contributions_out writes them)."""
        if isinstance(data, (str, os.PathLike)):
            x, _, _ = read_letor(data, self.num_features)
        else:
            x = np.ascontiguousarray(data, dtype=np.float32)
            if x.ndim != 2:
                raise ValueError(f"X must be 2-D (documents x features), not {x.ndim}-D")
        return self._core.explain_array(np.ascontiguousarray(x, dtype=np.float32))

    def dump_json(self) -> Dict[str, Any]:
        """The model as plrank-eval --dump_format=json writes it (schema in
        docs/lightgbm-habits.md)."""
        return json.loads(self._core.dump_json())

    @property
    def feature_names(self) -> List[str]:
        """Feature names (index f names LETOR feature f + 1; may be empty)."""
        return list(self._core.feature_names)

    def save(self, path: PathLike) -> None:
        """Writes the model file plrank-train writes, atomically (temp file,
        fsync, rename); a path that exists and is not a regular file is
        refused."""
        self._core.save(os.fspath(path))

    def feature_importance(self, kind: str = "gain") -> np.ndarray:
        """Per feature (index f = LETOR feature f + 1): summed split gain
        (kind="gain") or number of splits (kind="split"), as plrank-eval
        --importance reports them."""
        if kind not in ("gain", "split"):
            raise ValueError(f"kind={kind!r}: use 'gain' or 'split'")
        return self._core.feature_importance(kind == "gain")

    @property
    def history(self) -> Optional[Dict[str, Any]]:
        """The learning curves of the training run, the document
        plrank-train --history_out writes (every iteration's train and valid
        loss and NDCG at every eval_at cut-off, best iteration); None for a
        model read with load_model."""
        text = self._core.history_json
        return json.loads(text) if text else None

    @property
    def num_features(self) -> int:
        return self._core.num_features

    @property
    def num_trees(self) -> int:
        return self._core.num_trees

    @property
    def objective(self) -> str:
        return self._core.objective

    @property
    def best_iteration(self) -> int:
        """Iterations kept (0 = all)."""
        return self._core.best_iteration

    @property
    def parameters(self) -> Dict[str, str]:
        """The training flags recorded in the artifact (name -> value)."""
        return self._core.parameters

    def dump(self) -> str:
        """Human-readable dump (plrank-eval --dump)."""
        return self._core.dump()

    def __repr__(self) -> str:
        return (f"plrank.Model(objective={self.objective!r}, trees={self.num_trees}, "
                f"features={self.num_features})")


Callback = Callable[[int, Dict[str, Any]], Optional[bool]]


def train(params: Optional[Mapping[str, ParamValue]], train: Data,
          valid: Optional[Data] = None, *,
          log: Optional[Callable[[str], None]] = None,
          callbacks: Optional[Sequence[Callback]] = None,
          sample_weight: Optional[npt.ArrayLike] = None,
          group_weight: Optional[npt.ArrayLike] = None,
          position: Optional[npt.ArrayLike] = None,
          propensity: Optional[npt.ArrayLike] = None,
          marginals: Optional[npt.ArrayLike] = None) -> Model:
    """Trains a model as plrank-train does.

    params: plrank-train's flags by name, with its defaults (objective,
      trees, leaves, learning_rate, min_data_in_leaf, num_threads, seed,
      eval_at, early_stopping_rounds, pl_*, ...; see param_names()). Values
      are bools, numbers, strings or, for eval_at, a list of cut-offs. An
      unknown name raises ValueError naming the nearest one.
    train, valid: a LETOR / LightGBM-form file, or (X, y, group_sizes): X
      documents x features (NaN = missing), y integer grades, group_sizes the
      documents per query in order.
    log: receives the progress lines (default: print them); quiet=True
      silences them.
    callbacks: functions called after every boosting iteration as
      f(iteration, info), iteration 1-based, info {"train_loss": float,
      "train": {"ndcg@10": ...}, "valid": {...}}; one returning True stops
      training after that iteration (the model keeps the iterations run). An
      exception in a callback stops training and is raised. Tree objectives
      only.
    sample_weight, group_weight, position, propensity: of the training set
      (docs/clicks-training.md), replacing its side files: one weight >= 0
      per document / one per query, the 1-based display position and the
      propensity in (0, 1] of each document, in the documents' order (a
      file's line order). position and propensity are what
      position_debias="gam" / "ips" use.
    marginals: the logging policy's position marginals of the training set
      (its .marginals side file, plrank-logs join's D.all.marginals): a
      documents x k array, row i = mu(d_i, j) for j = 1..k, each in [0, 1]
      and a row's sum <= 1; position_debias="ips" then divides a click by
      sum_j mu(d, j) theta_j (the policy-aware propensity).
    """
    values: List[Tuple[str, str]] = []
    for name, value in (params or {}).items():
        if name in _NOT_PARAMS:
            raise ValueError(f"'{name}' is not a parameter here: {_NOT_PARAMS[name]}")
        values.append((name, _flag_value(name, value)))
    quiet = any(n == "quiet" and v == "true" for n, v in values)
    sink = None if quiet else (log if log is not None else print)
    callback = None
    if callbacks:
        funcs = list(callbacks)

        def callback(iteration: int, info: Dict[str, Any]) -> bool:
            stop = False
            for f in funcs:
                stop = bool(f(iteration, info)) or stop
            return stop
    side: Dict[str, List[float]] = {}
    for name, value in (("sample_weight", sample_weight),
                        ("group_weight", group_weight), ("position", position),
                        ("propensity", propensity)):
        if value is not None:
            array = np.asarray(value, dtype=np.float64)
            if array.ndim != 1:
                raise ValueError(f"{name} must be 1-D, not {array.ndim}-D")
            side[name] = array.tolist()
    if marginals is not None:
        array = np.asarray(marginals, dtype=np.float64)
        if array.ndim != 2 or array.shape[1] == 0:
            raise ValueError("marginals must be a 2-D documents x positions "
                             f"array, not of shape {array.shape}")
        side["marginals"] = array.ravel().tolist()
        side["marginal_positions"] = [float(array.shape[1])]
    core, ignored = _core.train(values, _data_arg("train", train),
                                None if valid is None else _data_arg("valid", valid),
                                sink, callback, side)
    if ignored:
        names = ", ".join(name.lstrip("-") for name in ignored)
        warnings.warn(f"objective {core.objective!r} ignores {names}",
                      stacklevel=2)
    return Model(core)


def load_model(path: PathLike) -> Model:
    """Reads a model file (plrank-train's, Model.save's or plrank-convert's)."""
    return Model(_core.load_model(os.fspath(path)))


def read_letor(path: PathLike, num_features: int = 0
               ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(X, y, group_sizes) of a LETOR / LightGBM-form file, read as the CLIs
    read it (float32 features, NaN = missing). num_features: 0 infers it."""
    return _core.read_letor(os.fspath(path), num_features)
