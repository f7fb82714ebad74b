// plrank._core: pybind11 bindings over the core library the CLIs use. The
// Python side (python/plrank/__init__.py) wraps these into plrank.train,
// plrank.load_model and plrank.Model. Every absl::Status error becomes a
// Python exception carrying its message (StatusToException).
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <Python.h>
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/data/dataset.h"
#include "core/data/letor_reader.h"
#include "core/explain/ensemble_explainer.h"
#include "core/metrics/evaluation.h"
#include "core/model/model_json.h"
#include "core/model/feature_importance.h"
#include "core/scoring/forest_scorer.h"
#include "core/model/model_io.h"
#include "core/data/side_files.h"
#include "core/pipeline/train_job.h"
#include "core/pipeline/training_history.h"
#include "trainer/train_options.h"

namespace py = pybind11;

namespace plrank::python {
namespace {

// InvalidArgument, OutOfRange, FailedPrecondition, DataLoss -> ValueError, NotFound -> FileNotFoundError,
// PermissionDenied -> PermissionError, ResourceExhausted -> MemoryError,
// anything else -> RuntimeError; the message is the status message.
[[noreturn]] void ThrowStatus(const absl::Status& status) {
  PyObject* type = PyExc_RuntimeError;
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kDataLoss:  // a corrupt model or data file
      type = PyExc_ValueError;
      break;
    case absl::StatusCode::kNotFound:
      type = PyExc_FileNotFoundError;
      break;
    case absl::StatusCode::kPermissionDenied:
      type = PyExc_PermissionError;
      break;
    case absl::StatusCode::kResourceExhausted:
      type = PyExc_MemoryError;
      break;
    default:
      break;
  }
  const std::string message(status.message());
  PyErr_SetString(type, message.c_str());
  throw py::error_already_set();
}

template <typename T>
T ValueOrThrow(absl::StatusOr<T> value) {
  if (!value.ok()) ThrowStatus(value.status());
  return *std::move(value);
}

void OkOrThrow(const absl::Status& status) {
  if (!status.ok()) ThrowStatus(status);
}

using FloatMatrix =
    py::array_t<float, py::array::c_style | py::array::forcecast>;
using DoubleVector =
    py::array_t<double, py::array::c_style | py::array::forcecast>;
using Int64Vector =
    py::array_t<int64_t, py::array::c_style | py::array::forcecast>;

// A Dataset from X (documents x features, NaN = missing), integer labels y
// and the documents per query, in order.
Dataset DatasetFromArrays(const std::string& what, const FloatMatrix& x,
                          const DoubleVector& y, const Int64Vector& groups) {
  auto fail = [&what](const std::string& message) {
    ThrowStatus(absl::InvalidArgumentError(absl::StrCat(what, ": ", message)));
  };
  if (x.ndim() != 2) fail(absl::StrCat("X must be 2-D, not ", x.ndim(), "-D"));
  if (y.ndim() != 1) fail("y must be 1-D");
  if (groups.ndim() != 1) fail("group_sizes must be 1-D");
  const size_t n = static_cast<size_t>(x.shape(0));
  const size_t width = static_cast<size_t>(x.shape(1));
  if (static_cast<size_t>(y.shape(0)) != n) {
    fail(absl::StrFormat("X has %d rows but y has %d labels", n, y.shape(0)));
  }
  if (width == 0) fail("X has no feature columns");
  if (width > static_cast<size_t>(kMaxModelFeatures)) {
    fail(absl::StrFormat("%d features is above the limit of %d", width,
                         kMaxModelFeatures));
  }
  Dataset data;
  data.num_features = static_cast<int32_t>(width);
  data.labels.resize(n);
  const double* labels = y.data();
  for (size_t i = 0; i < n; ++i) {
    const double label = labels[i];
    if (!(label >= 0 && label <= kMaxLabel) || label != std::floor(label)) {
      fail(absl::StrFormat("y[%d] = %g is not an integer grade in 0..%d", i,
                           label, kMaxLabel));
    }
    data.labels[i] = static_cast<int32_t>(label);
  }
  data.query_offsets.push_back(0);
  const int64_t* sizes = groups.data();
  uint64_t total = 0;
  for (py::ssize_t q = 0; q < groups.shape(0); ++q) {
    if (sizes[q] <= 0) {
      fail(absl::StrFormat("group_sizes[%d] = %d is not positive", q,
                           sizes[q]));
    }
    total += static_cast<uint64_t>(sizes[q]);
    if (total > n) break;
    data.query_offsets.push_back(static_cast<uint32_t>(total));
    data.query_ids.push_back(absl::StrCat(q + 1));
  }
  if (total != n) {
    fail(absl::StrFormat("group_sizes add up to %d%s documents, X has %d",
                         total, total > n ? " or more" : "", n));
  }
  // Column-major, as the reader stores it.
  data.features.resize(n * width);
  const float* rows = x.data();
  for (size_t i = 0; i < n; ++i) {
    for (size_t f = 0; f < width; ++f) {
      data.features[f * n + i] = rows[i * width + f];
    }
  }
  return data;
}

// Labels, X (row-major float32) and group sizes of a dataset.
py::tuple DatasetToArrays(const Dataset& data) {
  const size_t n = data.num_documents();
  const size_t width = static_cast<size_t>(data.num_features);
  py::array_t<float> x({n, width});
  float* rows = x.mutable_data();
  for (size_t i = 0; i < n; ++i) {
    for (size_t f = 0; f < width; ++f) {
      rows[i * width + f] = data.features[f * n + i];
    }
  }
  py::array_t<int32_t> y(n);
  std::copy(data.labels.begin(), data.labels.end(), y.mutable_data());
  py::array_t<int64_t> groups(data.num_queries());
  for (size_t q = 0; q < data.num_queries(); ++q) {
    groups.mutable_data()[q] = data.query_end(q) - data.query_begin(q);
  }
  return py::make_tuple(std::move(x), std::move(y), std::move(groups));
}

// A trained or loaded model, with its scorer built on first use.
class Model {
 public:
  explicit Model(Ensemble ensemble, std::string history_json = "")
      : ensemble_(std::move(ensemble)),
        history_json_(std::move(history_json)) {}

  const Ensemble& ensemble() const { return ensemble_; }
  const std::string& history_json() const { return history_json_; }
  // Names do not change scores: the scorer (if built) stays valid.
  void set_feature_names(std::vector<std::string> names) {
    ensemble_.feature_names = std::move(names);
  }

  const EnsembleExplainer& explainer() {
    if (!explainer_) {
      explainer_ = std::make_unique<EnsembleExplainer>(
          ValueOrThrow(EnsembleExplainer::Create(ensemble_)));
    }
    return *explainer_;
  }

  const ForestScorer& scorer() {
    if (!scorer_) {
      scorer_ = std::make_unique<ForestScorer>(
          ValueOrThrow(ForestScorer::Create(ensemble_)));
    }
    return *scorer_;
  }

 private:
  Ensemble ensemble_;
  std::string history_json_;
  std::unique_ptr<ForestScorer> scorer_;
  std::unique_ptr<EnsembleExplainer> explainer_;
};

py::array_t<double> ToArray(const std::vector<double>& values) {
  py::array_t<double> out(values.size());
  std::copy(values.begin(), values.end(), out.mutable_data());
  return out;
}

// Scores of a LETOR / LightGBM-form file, one per data line in input order:
// the file is read as plrank-eval reads it (the model's feature count caps
// the indices).
py::array_t<double> PredictFile(Model& model, const std::string& path) {
  const ForestScorer& scorer = model.scorer();
  std::vector<double> ordered;
  {
    py::gil_scoped_release release;
    ReadOptions options;
    options.num_features = model.ensemble().num_features;
    options.num_features_origin = "the feature count of the model";
    absl::StatusOr<Dataset> data = ReadLetorFile(path, options);
    if (!data.ok()) {
      py::gil_scoped_acquire acquire;
      ThrowStatus(data.status());
    }
    const std::vector<double> scores = scorer.ScoreDataset(*data);
    ordered = scores;
    if (!data->input_line_order.empty()) {
      for (size_t i = 0; i < scores.size(); ++i) {
        ordered[data->input_line_order[i]] = scores[i];
      }
    }
  }
  return ToArray(ordered);
}

// Scores of the rows of X (documents x the model's features).
py::array_t<double> PredictArray(Model& model, const FloatMatrix& x) {
  const int32_t width = model.ensemble().num_features;
  if (x.ndim() != 2) {
    ThrowStatus(absl::InvalidArgumentError(
        absl::StrCat("X must be 2-D, not ", x.ndim(), "-D")));
  }
  if (x.shape(1) != width) {
    ThrowStatus(absl::InvalidArgumentError(absl::StrFormat(
        "X has %d feature columns, the model has %d features", x.shape(1),
        width)));
  }
  const ForestScorer& scorer = model.scorer();
  const size_t n = static_cast<size_t>(x.shape(0));
  py::array_t<double> out(n);
  if (n == 0) return out;
  absl::Span<const float> rows(x.data(), n * static_cast<size_t>(width));
  absl::Span<double> scores(out.mutable_data(), n);
  {
    py::gil_scoped_release release;
    scorer.Score(rows, n, scores);
  }
  return out;
}

// Contributions (TreeSHAP, as the server's Explain) of the rows of X:
// documents x (model features + 1), the last column the bias.
py::array_t<double> ExplainArray(Model& model, const FloatMatrix& x) {
  const int32_t width = model.ensemble().num_features;
  if (x.ndim() != 2 || x.shape(1) != width) {
    ThrowStatus(absl::InvalidArgumentError(absl::StrFormat(
        "X must be 2-D with %d feature columns (the model's features)",
        width)));
  }
  const EnsembleExplainer& explainer = model.explainer();
  const size_t n = static_cast<size_t>(x.shape(0));
  std::vector<double> values;
  {
    py::gil_scoped_release release;
    values = explainer.ExplainRows(
        absl::Span<const float>(x.data(), n * static_cast<size_t>(width)), n,
        static_cast<size_t>(width));
  }
  const size_t columns = static_cast<size_t>(width) + 1;
  py::array_t<double> out({n, columns});
  std::copy(values.begin(), values.end(), out.mutable_data());
  return out;
}

// Mean NDCG@k of scores over the queries of (y, group_sizes), as
// plrank-eval computes it (empty_query_ndcg one).
double MeanNdcg(const DoubleVector& y, const Int64Vector& groups,
                const DoubleVector& scores, int32_t k) {
  if (k <= 0) {
    ThrowStatus(absl::InvalidArgumentError(
        absl::StrCat("k=", k, " is not a positive cut-off")));
  }
  const size_t n = static_cast<size_t>(y.shape(0));
  if (static_cast<size_t>(scores.shape(0)) != n) {
    ThrowStatus(absl::InvalidArgumentError(absl::StrFormat(
        "%d scores for %d labels", scores.shape(0), n)));
  }
  FloatMatrix none(std::vector<py::ssize_t>{static_cast<py::ssize_t>(n), 1});
  std::fill_n(none.mutable_data(), n, 0.0f);
  const Dataset data = DatasetFromArrays("y", none, y, groups);
  const std::vector<MetricSpec> specs = {{MetricSpec::Kind::kNdcg, k}};
  return Evaluate(data, absl::Span<const double>(scores.data(), n), specs,
                  MetricOptions())
      .means.front();
}

// What plrank.train returns to the Python wrapper.
struct TrainResult {
  std::shared_ptr<Model> model;
  std::vector<std::string> ignored;  // params the objective does not read
};

// A training set or validation set: a file path or (X, y, group_sizes).
using DataArg = std::variant<std::string, py::tuple>;

// params: (plrank-train flag name, value in the flag's syntax). `log`
// receives the progress lines (none with quiet=true).
// `callback` (optional): (iteration, {"train_loss": ..., "train": {...},
// "valid": {...}}) after every iteration; a true result stops training.
// `side`: the training set's sample_weight / group_weight / position /
// propensity arrays (docs/clicks-training.md), replacing side files; and
// "marginals" (documents x k, row by row) with "marginal_positions" = {k}.
using SideArrays = std::map<std::string, std::vector<double>>;

absl::Status AttachSideArrays(const SideArrays& side, Dataset* data) {
  struct Kind {
    const char* name;
    SideKind kind;
    bool query_level;
  };
  for (const Kind& k : {Kind{"sample_weight", SideKind::kWeight, false},
                        Kind{"group_weight", SideKind::kWeight, true},
                        Kind{"position", SideKind::kPosition, false},
                        Kind{"propensity", SideKind::kPropensity, false}}) {
    auto it = side.find(k.name);
    if (it == side.end() || it->second.empty()) continue;
    if (k.query_level && it->second.size() != data->num_queries()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "group_weight: %d values, but the training set has %d queries",
          it->second.size(), data->num_queries()));
    }
    if (k.query_level) {
      data->query_weights.assign(it->second.begin(), it->second.end());
      for (size_t q = 0; q < it->second.size(); ++q) {
        if (!(it->second[q] >= 0.0 && std::isfinite(it->second[q]))) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "group_weight[%d] = %g; expected a finite number >= 0", q,
              it->second[q]));
        }
      }
      continue;
    }
    if (absl::Status s = AttachSideValues(it->second, k.name, k.kind,
                                          /*allow_query_level=*/false, data);
        !s.ok()) {
      return s;
    }
  }
  // marginals: documents x k values row by row, k in "marginal_positions".
  if (auto it = side.find("marginals"); it != side.end()) {
    auto width = side.find("marginal_positions");
    const size_t k = width == side.end() || width->second.empty()
                         ? 0
                         : static_cast<size_t>(width->second[0]);
    if (k == 0 || it->second.size() % k != 0) {
      return absl::InvalidArgumentError(
          "marginals: expected a documents x positions array");
    }
    std::vector<std::vector<double>> rows(it->second.size() / k);
    for (size_t i = 0; i < rows.size(); ++i) {
      rows[i].assign(it->second.begin() + i * k,
                     it->second.begin() + (i + 1) * k);
    }
    if (absl::Status s = AttachMarginals(rows, "marginals", data); !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

TrainResult Train(const std::vector<std::pair<std::string, std::string>>& params,
                  const DataArg& train, const std::optional<DataArg>& valid,
                  const std::function<void(const std::string&)>& log,
                  const py::object& callback, const SideArrays& side) {
  std::vector<std::pair<std::string, std::string>> all = params;
  // The artifact records --train / --valid as plrank-train does.
  if (const auto* path = std::get_if<std::string>(&train)) {
    all.emplace_back("train", *path);
  }
  if (valid) {
    if (const auto* path = std::get_if<std::string>(&*valid)) {
      all.emplace_back("valid", *path);
    } else {
      // Arrays: the job still has a validation set (early stopping checks
      // for one); the name only appears in log lines and the artifact.
      all.emplace_back("valid", "(arrays)");
    }
  }
  TrainResult result;
  TrainJob job =
      ValueOrThrow(cli::TrainJobFromParams(all, &result.ignored));
  auto arrays = [](const std::string& what, const py::tuple& tuple) {
    if (tuple.size() != 3) {
      ThrowStatus(absl::InvalidArgumentError(absl::StrCat(
          what, ": expected a path or (X, y, group_sizes), got a tuple of ",
          tuple.size())));
    }
    return DatasetFromArrays(what, tuple[0].cast<FloatMatrix>(),
                             tuple[1].cast<DoubleVector>(),
                             tuple[2].cast<Int64Vector>());
  };
  std::optional<Dataset> train_arrays;
  std::optional<Dataset> valid_arrays;
  if (const auto* tuple = std::get_if<py::tuple>(&train)) {
    train_arrays = arrays("train", *tuple);
  }
  if (valid) {
    if (const auto* tuple = std::get_if<py::tuple>(&*valid)) {
      valid_arrays = arrays("valid", *tuple);
    }
  }
  if (job.booster.early_stopping_rounds > 0 && !valid) {
    ThrowStatus(absl::InvalidArgumentError(
        "early_stopping_rounds needs a validation set (valid=)"));
  }

  // Log lines come from this thread while the GIL is released; a Python
  // exception in `log` stops further logging and is raised afterwards.
  std::optional<py::error_already_set> log_error;
  const std::function<void(const std::string&)> log_line =
      [&log, &log_error](const std::string& line) {
        if (!log) return;
        py::gil_scoped_acquire acquire;
        if (log_error) return;
        try {
          log(line);
        } catch (py::error_already_set& error) {
          log_error = std::move(error);
        }
      };
  std::optional<py::error_already_set> callback_error;
  if (!callback.is_none()) {
    job.on_iteration = [&callback, &callback_error](
                           const IterationMetrics& metrics) {
      py::gil_scoped_acquire acquire;
      if (callback_error) return true;
      try {
        py::dict train_metrics;
        for (const auto& [name, value] : metrics.train) train_metrics[py::str(name)] = value;
        py::dict valid_metrics;
        for (const auto& [name, value] : metrics.valid) valid_metrics[py::str(name)] = value;
        py::dict info;
        info["train_loss"] = metrics.train_loss;
        info["train"] = train_metrics;
        info["valid"] = valid_metrics;
        return py::bool_(callback(metrics.iteration, info)).cast<bool>();
      } catch (py::error_already_set& error) {
        callback_error = std::move(error);
        return true;  // stop; the exception is raised afterwards
      }
    };
  }
  absl::StatusOr<TrainSummary> summary;
  {
    py::gil_scoped_release release;
    summary = [&]() -> absl::StatusOr<TrainSummary> {
      std::optional<Dataset> train_set = std::move(train_arrays);
      std::optional<Dataset> valid_set = std::move(valid_arrays);
      if (!train_set) {
        // Files are read as plrank-train reads them.
        TrainJob files = job;
        if (valid_set) files.valid_path.clear();
        absl::StatusOr<TrainData> data = LoadTrainData(files, log_line);
        if (!data.ok()) return data.status();
        train_set = std::move(data->train);
        if (data->valid) valid_set = std::move(data->valid);
      } else if (!job.valid_path.empty() && !valid_set) {
        ReadOptions options = job.read_options;
        options.num_features = train_set->num_features;
        absl::StatusOr<Dataset> read = ReadLetorFile(job.valid_path, options);
        if (!read.ok()) return read.status();
        valid_set = *std::move(read);
        if (absl::Status s = ReadSideFiles(job.valid_path, SideFileOptions{},
                                           &*valid_set, nullptr);
            !s.ok()) {
          return s;
        }
      }
      if (absl::Status s = AttachSideArrays(side, &*train_set); !s.ok()) {
        return s;
      }
      return TrainOnData(job, *train_set, valid_set ? &*valid_set : nullptr,
                         /*record_history=*/true, log_line);
    }();
  }
  if (callback_error) throw std::move(*callback_error);
  if (log_error) throw std::move(*log_error);
  if (!summary.ok()) ThrowStatus(summary.status());
  std::string history = TrainingHistoryJson(summary->model, summary->history);
  result.model = std::make_shared<Model>(std::move(summary->model),
                                         std::move(history));
  return result;
}

}  // namespace
}  // namespace plrank::python

PYBIND11_MODULE(_core, m) {
  using plrank::python::Model;
  namespace pp = plrank::python;
  m.doc() = "PLRank core library bindings (use the plrank package instead)";

  py::class_<Model, std::shared_ptr<Model>>(m, "Model")
      .def_property_readonly(
          "num_features",
          [](const Model& model) { return model.ensemble().num_features; })
      .def_property_readonly(
          "num_trees",
          [](const Model& model) { return model.ensemble().trees.size(); })
      .def_property_readonly(
          "objective",
          [](const Model& model) { return model.ensemble().objective; })
      .def_property_readonly(
          "best_iteration",
          [](const Model& model) { return model.ensemble().best_iteration; })
      .def_property_readonly(
          "parameters",
          [](const Model& model) { return model.ensemble().parameters; })
      .def_property_readonly(
          "feature_names",
          [](const Model& model) { return model.ensemble().feature_names; })
      .def_property_readonly("history_json", &Model::history_json)
      .def("predict_file", &pp::PredictFile, py::arg("path"))
      .def("predict_array", &pp::PredictArray, py::arg("x"))
      .def("explain_array", &pp::ExplainArray, py::arg("x"))
      .def("set_feature_names", &Model::set_feature_names, py::arg("names"))
      .def("dump_json",
           [](const Model& model) { return plrank::DumpModelJson(model.ensemble()); })
      .def(
          "feature_importance",
          [](const Model& model, bool by_gain) {
            if (by_gain && !plrank::HasSplitGains(model.ensemble())) {
              pp::ThrowStatus(absl::FailedPreconditionError(
                  "the model does not record split gains (e.g. an XGBoost "
                  "import without loss_changes); use kind='split'"));
            }
            return pp::ToArray(
                plrank::FeatureImportance(model.ensemble(), by_gain));
          },
          py::arg("by_gain"))
      .def(
          "save",
          [](const Model& model, const std::string& path) {
            absl::Status status;
            {
              py::gil_scoped_release release;
              status = plrank::WriteModelFile(model.ensemble(), path);
            }
            pp::OkOrThrow(status);
          },
          py::arg("path"))
      .def("dump",
           [](const Model& model) { return plrank::DumpModel(model.ensemble()); });

  m.def(
      "load_model",
      [](const std::string& path) {
        absl::StatusOr<plrank::Ensemble> model;
        {
          py::gil_scoped_release release;
          model = plrank::ReadModelFile(path);
        }
        return std::make_shared<Model>(pp::ValueOrThrow(std::move(model)));
      },
      py::arg("path"));

  m.def(
      "read_letor",
      [](const std::string& path, int32_t num_features) {
        plrank::ReadOptions options;
        options.num_features = num_features;
        absl::StatusOr<plrank::Dataset> data;
        {
          py::gil_scoped_release release;
          data = plrank::ReadLetorFile(path, options);
        }
        return pp::DatasetToArrays(pp::ValueOrThrow(std::move(data)));
      },
      py::arg("path"), py::arg("num_features") = 0);

  m.def(
      "train",
      [](const std::vector<std::pair<std::string, std::string>>& params,
         const pp::DataArg& train, const std::optional<pp::DataArg>& valid,
         const std::function<void(const std::string&)>& log,
         const py::object& callback, const pp::SideArrays& side) {
        pp::TrainResult result =
            pp::Train(params, train, valid, log, callback, side);
        return py::make_tuple(result.model, result.ignored);
      },
      py::arg("params"), py::arg("train"), py::arg("valid"), py::arg("log"),
      py::arg("callback") = py::none(), py::arg("side") = pp::SideArrays{});

  m.def("mean_ndcg", &pp::MeanNdcg, py::arg("y"), py::arg("group_sizes"),
        py::arg("scores"), py::arg("k"));

  m.def("train_param_names", &plrank::cli::TrainFlagNames);

  // The parameter table (trainer/params/train_params.inc), one dict per
  // parameter in the table's order: what plrank.param_table() returns.
  m.def("train_param_table", [] {
    py::list table;
    for (const plrank::cli::TrainParam& param : plrank::cli::TrainParams()) {
      py::dict row;
      row["name"] = param.name;
      row["type"] = plrank::cli::TrainParamTypeName(param.type);
      row["default"] = param.default_value;
      row["range"] = param.range;
      row["lightgbm"] = param.lightgbm;
      row["help"] = param.help;
      table.append(row);
    }
    return table;
  });
}
