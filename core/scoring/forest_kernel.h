#ifndef PLRANK_CORE_SCORING_FOREST_KERNEL_H_
#define PLRANK_CORE_SCORING_FOREST_KERNEL_H_

// The one interface every scoring kernel implements (internal to
// core/scoring). A kernel is built once for a forest, owns its own tables
// and is immutable and thread-safe afterwards; ForestScorer holds its plan as
// a list of kernels and hands each in turn the documents the ones before it
// left (kernel_plan.h builds the list).

#include <cstddef>
#include <cstdint>

#include "core/scoring/flat_forest.h"
#include "core/scoring/scoring_kernel.h"

namespace plrank::internal {

// Documents [begin, end) of a batch.
struct DocRange {
  size_t begin = 0;
  size_t end = 0;
  size_t size() const { return end - begin; }
  bool empty() const { return begin == end; }
};

// One call's documents as every kernel sees them: at most
// ForestScorer::kBlockDocs documents.
struct KernelBatch {
  // Doubled rows of num_docs documents, interleaved in groups of kLanes
  // (doubled_rows.h), with room for row_capacity documents (a multiple of
  // kLanes, at least num_docs): a kernel scoring whole groups may pad the
  // group after the last one with copies of a document
  // (PadWithLastDocument) when the padded group fits.
  uint32_t* rows;
  size_t num_slots;  // slots per document
  size_t num_docs;
  size_t row_capacity;
  // Scores to add to: out[k * out_stride + i] for output k of document i.
  double* out;
  size_t out_stride;
  // Trees [0, num_trees) are added: all, or whole iterations.
  int32_t num_trees;

  size_t group_slots() const { return kLanes * num_slots; }
  // Where document i's slot 0 is (its slot s is s * kLanes entries on).
  uint32_t* doc_rows(size_t i) const {
    return rows + i / kLanes * group_slots() + i % kLanes;
  }
};

class ForestKernel {
 public:
  virtual ~ForestKernel() = default;

  // Which kernel of scoring_kernel.h this is.
  virtual ScoringKernelId id() const = 0;

  // Adds trees [0, batch.num_trees) in tree order to the scores of the
  // documents it takes from `todo` (those no kernel has scored yet) and
  // returns the ones it leaves: a kernel takes a prefix of `todo` (whole
  // groups, maybe a padded remainder), a suffix (one document at the end)
  // or everything, so what is left is again a range. todo.begin is a
  // multiple of kLanes (kernels before it took whole groups from the front).
  // Rows of documents at or past todo.end may be overwritten (padding);
  // sums of padding documents are dropped. Called once per batch: the
  // virtual call is per block of documents, never per tree or document.
  virtual DocRange Accumulate(const KernelBatch& batch,
                              DocRange todo) const = 0;
};

// Fills the doubled rows of documents [last + 1, padded_end) with copies of
// document `last`'s: padding lanes of a group then lengthen no threshold
// scan nor walk, and their sums are dropped. padded_end <=
// batch.row_capacity.
void PadWithLastDocument(const KernelBatch& batch, size_t last,
                         size_t padded_end);

}  // namespace plrank::internal

#endif  // PLRANK_CORE_SCORING_FOREST_KERNEL_H_
