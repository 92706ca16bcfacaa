// Whole runs written in segments during the run (issue 16; the format is model/dump.h's version
// 6). Without schedule windows, a run's records would stay in memory until exit: the host buffer
// fills and then drops, and decoded GPU records grow with the run. A spill thread writes a
// segment whenever GPROF_SEGMENT_SECONDS have passed, the host buffer is kSpillHostFill full or
// kSpillGpuBytes of decoded GPU records wait: the host records published so far are consumed
// (HostSegments: ranges still open stay open), the GPU buffers CUPTI has completed are drained
// (its default flush: only buffers whose records are all complete), both are appended to the
// dump's temporary file `<program>.<pid>.gpdump.tmp.<pid>`, and dropped from memory. The exit
// flush writes the last segment (forced flush, what is open closed) and renames the file into
// place. A program killed meanwhile leaves the temporary file with its completed segments, which
// the launcher recovers and reports as incomplete (launcher/recover_dumps.h).
//
// Threads: the spill thread and the exit flush, serialized by Runtime::flush_mutex. Cold.
#pragma once

#include <cstdint>

#include "collector/lifecycle/runtime_state.h"

namespace gprof::collector::lifecycle {

inline constexpr double kSpillHostFill = 0.125;             // of GPROF_HOST_BUFFER_MIB
inline constexpr uint64_t kSpillGpuBytes = uint64_t{64} << 20;  // completed CUPTI buffers waiting

// Starts the spill thread for a whole run (call only without schedule windows) unless
// GPROF_SEGMENT_SECONDS is 0. False when not started (a failure is logged: the run is then
// written at exit in one segment, as with 0).
bool StartSpill(Runtime& rt);
// True once StartSpill started the thread: the exit flush must then end with FinishSpill.
bool SpillActive();
// Exit flush, step 1, without flush_mutex: stops the spill thread and waits for a segment it is
// writing. No-op without one. `wait_ms` >= 0 (after a signal): waits that long at most, since a
// segment's drain may wait on a CUPTI lock the signalled thread holds; false when the thread did
// not stop in time (it holds flush_mutex: the segments already written are what is kept).
bool StopSpillThread(int wait_ms = -1);
// Exit flush, step 2, with flush_mutex held and host collection off: writes the last segment
// (ending at `end_ns`) and publishes the dump.
void FinishSpill(uint64_t end_ns);

}  // namespace gprof::collector::lifecycle
