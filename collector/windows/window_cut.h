// Cutting a window out of what was collected. Pure functions on Profiles (no threads, no CUDA),
// used by the window thread at window end and unit-tested on hand-built profiles.
//
// What belongs to window [start, end):
// - host events (ranges, marks, API calls) and --cpu-sampling's samples that start (are taken)
//   inside it; a range still open at `end` is clipped there and flagged kRangeCutAtWindowEnd:
//   the window's edge cut it, the program did not leave it open, so it is no loss
//   (nvtx_ranges_open_at_end counts none of them). Only when the program ended the window
//   (`program_ended`: it exited inside it) is a range still open at the end flagged
//   kRangeOpenAtEnd and counted, as in a whole run. Samples outside it are dropped, not carried
//   (those after `end` were taken in the steps between windows, or in the next window's first
//   moments before it was built), and CpuSampleCounters::taken counts the ones kept;
// - GPU records launched by an API call that belongs to the window, whenever they ran;
// - GPU records whose launching call is unknown (not recorded) that start inside it, unless their
//   correlation id is below every call of the window (CUPTI numbers calls in the order they
//   begin): those were launched before it.
// GPU records that start at or after `end` and were not launched inside the window are handed to
// the next window (`carry`); everything else is dropped (it belonged to wait or warmup steps).
#pragma once

#include <cstdint>
#include <unordered_set>

#include "model/profile.h"

namespace gprof::collector {

// Keeps in `profile` only the window's events (see above) and moves later GPU records into
// `carry` (appended; names and launch configs re-interned there).
void CutWindow(Profile* profile, uint64_t start_ns, uint64_t end_ns, Profile* carry,
               bool program_ended = false);

// Moves every GPU-side record (kernels, copies, memsets, syncs, memory ops, overheads, launch
// configs, devices, api names) from `from` into `into`, re-interning strings. `from` is left
// without GPU records; its counters are added to `into`'s.
void MoveGpuRecords(Profile* from, Profile* into);

// Moves the GPU records of `from` whose correlation id is in `calls` into `into` (appended,
// re-interned): the late records of a window that is held until they arrive. Returns the ids
// that had at least one record moved. Counters and devices stay where they are.
std::unordered_set<uint32_t> MoveGpuRecordsOf(const std::unordered_set<uint32_t>& calls,
                                              Profile* from, Profile* into);

}  // namespace gprof::collector
