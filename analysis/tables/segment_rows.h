// Key-averages rows of a run read segment by segment (model/dump_segment_reader.h), for a dump
// too long to hold whole (launcher process only). Memory holds two segments and the long ranges,
// never the run.
//
// A segment's rows alone would miss what crosses its edges: a range (stored in the segment where
// it closed) over calls and children of earlier segments. So segment k counts as a difference
// over a universe U: the records of segment k-1, the long ranges of segments k+2 and later, and
// segment k's own:
//   rows(U) - rows(U without segment k's records).
// Whatever U holds besides segment k cancels out; what segment k adds to it stays: its ranges and
// calls whole, and each link between records (a range holds a call or a child range, a call
// launched GPU work) that involves a record of segment k and whose records are all in U. A link
// within one segment or two neighbours is counted once, in the later one (U of the earlier has
// nothing of the later). A range is long when it began before the end of segment j-2's host
// records (j: its own segment): it may hold records of segment j-2 or earlier, which U of j does
// not have, so it joins U of every segment up to j-2, where its links to that segment's records
// are counted (and U of j-1, whose records U of j holds, it does not join). Exact when every GPU
// record sits in the segment of its launching call: the caller moves those stored in the next
// segment back (model/gpu_checks.h SegmentedGpuChecks::PlaceInFlight); one stored later still
// counts in its kernel's row but not in its call's and ranges' CUDA times. Counted with modular
// arithmetic: a difference may be "negative" for a row (an earlier range's Self time, lowered by
// its children here) and the run's sum is right.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/samples/python_samples.h"
#include "analysis/tables/key_averages.h"
#include "analysis/tables/op_stacks.h"
#include "model/profile.h"

namespace gprof {

// The ranges of a run that a later segment's universe must hold, found in a first pass over the
// segments (LongRangeFinder::Add each segment in order).
struct LongRange {
  uint32_t segment = 0;  // where it is stored (where it closed)
  HostRange range;
};
class LongRangeFinder {
 public:
  void Add(const Profile& segment);
  std::vector<LongRange> Take() { return std::move(found_); }

 private:
  uint32_t index_ = 0;
  uint64_t last_end_ = 0;    // the latest host record end of segment index-1
  uint64_t end_before_ = 0;  // that of segments up to index-2
  std::vector<LongRange> found_;
};

class SegmentedKeyAverages {
 public:
  // `options.instances` is not supported (a difference has no instances), nor `options.stacks`
  // (a profile's): GroupByStack groups by source location.
  SegmentedKeyAverages(const KeyAveragesOptions& options, std::vector<LongRange> long_ranges);
  ~SegmentedKeyAverages();
  // Before the first Add: rows per (name, Python source location) from `samples` (op_stacks.h,
  // StacksOfRanges with `depth`; a range's key depends only on the range and the samples, so
  // each universe gives its ranges the keys a whole run's table gives them). `samples` must
  // outlive this.
  void GroupByStack(const PythonSamples* samples, uint32_t depth);
  // With GroupByStack: the run's counts for RangeStacksNote (depth, rate, ranges grouped, found
  // inside, near the start, not sampled; no keys).
  RangeStacks StackCounts() const;
  // Adds the next segment's records (in order from the first). `tables` holds the run's tables
  // whole (every segment's strings: a long range's name may come in a later segment than the
  // universe it joins); its own records are set aside for the call and put back.
  void Add(const Profile& segment, Profile* tables);
  // The run's rows, ordered as KeyAverages orders them; rows that only context made are gone.
  std::vector<EventStats> Rows() const;

 private:
  struct Records;
  // KeyAverages of a universe (grouped by stack with GroupByStack), its stack counts added
  // into stack_counts_ with `sign`.
  std::vector<EventStats> RowsOf(const Profile& universe, int sign);

  KeyAveragesOptions options_;
  const PythonSamples* samples_ = nullptr;
  uint32_t depth_ = 0;
  RangeStacks stack_counts_;
  std::vector<LongRange> long_;
  uint32_t index_ = 0;
  Records* previous_;  // segment index-1's records
  std::vector<EventStats> rows_;
};

// Rows grouped by source location merged back by name (and shapes): grouping only splits a
// row's instances among its stacks, so each sum is the sum of its stacks' rows. Ordered as
// SegmentedKeyAverages::Rows orders them.
std::vector<EventStats> RowsWithoutStacks(const std::vector<EventStats>& rows);

// Adds `from`'s rows into `into` by key (name, shapes, stack, kind, device): counts and times
// summed (modulo 2^64), instances appended. `sign` -1 subtracts.
void AddKeyAveragesRows(const std::vector<EventStats>& from, int sign,
                        std::vector<EventStats>* into);

}  // namespace gprof
