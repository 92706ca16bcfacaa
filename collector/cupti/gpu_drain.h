// The pure part of draining CUPTI: decoded GpuBatches -> a Profile. Re-interns each batch's names
// and launch configs into the profile's tables, appends its records, adds every device seen so
// far, and counts GPU records that no recorded API call launched. No CUPTI call, no session state:
// the drain (session_drain.cpp) calls it after the parser has decoded every flushed buffer, and
// tests and the exit-cost benchmark call it directly with batches built in memory.
//
// Threads: cold (the drain's caller: atexit, signal flush or window thread). Allocates freely.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "collector/cupti/activity_decoder.h"
#include "model/profile.h"

namespace gprof::collector {

// Devices CUPTI reported so far, with their names. CUPTI reports each device once, so the session
// keeps them and every drained profile (a window after the first too) names all of them.
using KnownDevices = std::vector<std::pair<DeviceInfo, std::string>>;

struct MergeTotals {
  // Records CUPTI delivered with broken timestamps or sizes, dropped by the decoder: a
  // CUPTI-side error that the caller adds to Counters::cupti_errors.
  uint64_t broken_records = 0;
};
// Unfinished records (GpuBatch::records_incomplete) go to counters.gpu_records_incomplete.

// Moves the records of `batches` (emptied) into `profile`, learns new devices into `devices` and
// adds all of them to the profile. A GPU record is linked when its correlation id belongs to an
// API call of `profile->api_calls`; when the profile has no API calls (not built yet), only a zero
// id is known to be unlinked. Unlinked records of these batches are added to
// counters.gpu_records_uncorrelated, unknown kinds to counters.records_unknown_kind.
MergeTotals MergeGpuBatches(std::vector<GpuBatch>* batches, KnownDevices* devices,
                            Profile* profile);

}  // namespace gprof::collector
