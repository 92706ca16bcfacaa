// GPU collection through CUPTI: the only interface the rest of the collector uses to reach CUPTI.
// Implemented by the cupti_* files in this folder; nothing outside collector/ includes CUPTI.
//
// Threads: Start/Drain/Stop are cold and run on the thread that called InitializeInjection, the
// atexit handler, or the window-end thread; never concurrently with each other.
#pragma once

#include <string>

#include "config/config.h"
#include "model/profile.h"

namespace gprof::collector {

struct GpuStartResult {
  bool collecting = false;
  std::string status;        // one line: "collected", or what failed and what to do
  std::string cupti_library; // path of the libcupti used ("" if none was loaded)
};

// Loads libcupti, checks its version, subscribes, enables callbacks and activity kinds. On any
// failure everything stays inert and `status` says why (shown once to the user).
GpuStartResult StartGpuCollection(const Config& config);

// Flushes CUPTI's activity buffers (forced when `forced`), then moves every GPU record collected
// so far into `profile` (kernels, copies, memsets, syncs, memory ops, overheads, devices,
// launch configs, counters). API-call records are host records (thread_buffer.h), not moved here.
void DrainGpu(Profile* profile, bool forced);

// Turns activity collection and API callbacks on or off (schedule windows). Cheap to call.
void SetGpuCollectionEnabled(bool enabled);

// Turns CUPTI activity recording (kernels, copies, ...) on or off: schedule windows switch it off
// between windows so CUPTI costs nothing there. Cold (window thread); calls into CUPTI. Records
// already in buffers are kept. On at start.
void SetGpuActivityEnabled(bool enabled);

// Final flush already done by DrainGpu; unsubscribes and calls cuptiFinalize. Idempotent.
void StopGpuCollection();

}  // namespace gprof::collector
