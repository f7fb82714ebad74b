#ifndef PLRANK_BENCH_TRAIN_FLAG_H_
#define PLRANK_BENCH_TRAIN_FLAG_H_

// A benchmark's flag for one of plrank-train's training parameters
// (trainer/params/train_params.inc): the parameter table's type, so that a
// value means the same in every program (a seed is a uint64 wherever it is
// a flag), and its help after the benchmark's own note. The default is the
// benchmark's: a benchmark may run two threads on a shared machine, or
// read 0 as "pick by the data".
//
//   PLRANK_BENCH_TRAIN_FLAG(num_threads, 2, "threads of every training run");

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "trainer/params/train_params.h"

#define PLRANK_BENCH_TRAIN_FLAG(name, default_value, note)              \
  ABSL_FLAG(plrank::cli::train_param_type::name, name, default_value,   \
            absl::StrCat(note, " (plrank-train --" #name ": ",          \
                         plrank::cli::FindTrainParam(#name)->help, ")"))

#endif  // PLRANK_BENCH_TRAIN_FLAG_H_
