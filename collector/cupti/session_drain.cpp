// The drain: flushes CUPTI's buffers, waits (bounded) for the parser to decode them, merges the
// batches into a profile (gpu_drain.h), adds the API names seen and the loss counters (as deltas:
// each window gets only its own). Cold (atexit, signal flush or window thread); see
// session_state.h for the threads and the lock order.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <unordered_set>

#include "collector/cupti/api_filter.h"
#include "collector/cupti/session_state.h"
#include "collector/cupti/start_messages.h"
#include "support/clock.h"
#include "support/log.h"

namespace gprof::collector::session {
namespace {

void AddApiNames(Session* s, Profile* profile) {
  std::unordered_set<uint32_t> have;
  for (const ApiName& n : profile->api_names) {
    have.insert(static_cast<uint32_t>(n.domain) << 16 | n.cbid);
  }
  const ApiDomain domains[2] = {ApiDomain::kRuntime, ApiDomain::kDriver};
  for (size_t d = 0; d < 2; ++d) {
    DomainTables& t = s->domains[d];
    for (size_t cbid = 0; cbid < t.names.size(); ++cbid) {
      if (t.seen[cbid].load(std::memory_order_relaxed) == 0) continue;
      uint32_t key = static_cast<uint32_t>(domains[d]) << 16 | static_cast<uint32_t>(cbid);
      if (!have.insert(key).second) continue;
      ApiName name{};
      name.cbid = static_cast<uint16_t>(cbid);
      name.domain = domains[d];
      std::string_view text = DisplayApiName(t.names[cbid]);
      name.name = profile->strings.Intern(text.empty() ? std::string_view("cbid_" + std::to_string(cbid))
                                                       : text);
      profile->api_names.push_back(name);
    }
  }
}

}  // namespace

void Drain(Profile* profile, bool forced) {
  if (!Ready()) return;  // Start has not finished (or failed, or Stop ran)
  Session* s = g_session;
  if (s == nullptr || s->stopped || s->pid != getpid()) return;
  // While the program's own profiler holds CUPTI (handover.cpp), a flush would hand its buffers
  // over unfinished and the dropped count is its own: only what the parser has is drained.
  if (!HandedOver()) {
    CUptiResult rc = s->api.ActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
    if (rc != CUPTI_SUCCESS) {
      g_cupti_errors.fetch_add(1, std::memory_order_relaxed);
      log::Debug("cuptiActivityFlushAll failed: " + ResultText(s->api, rc));
    }
    // Records dropped after the last completed buffer (no completion callback read them yet): ask
    // once more for the global queue (context NULL). Reset on read, so nothing is counted twice.
    size_t late_dropped = 0;
    if (s->api.ActivityGetNumDroppedRecords(nullptr, 0, &late_dropped) == CUPTI_SUCCESS) {
      g_dropped.fetch_add(late_dropped, std::memory_order_relaxed);
    }
  }
  // The flush hands back completed buffers before it returns; wait for the parser to decode them.
  // Bounded: a wedged parser must not hang the program's exit.
  const uint64_t target = s->pool.completed();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (s->processed.load(std::memory_order_acquire) < target &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  std::vector<GpuBatch> ready;
  {
    std::lock_guard<std::mutex> lock(s->ready_mu);
    ready.swap(s->ready);
    s->ready_bytes = 0;
    s->pool.SetDecodedBytes(0);
  }
  for (const GpuBatch& b : ready) {  // one batch per completed buffer
    ++profile->collector_cost.activity_buffers;
    profile->collector_cost.activity_bytes += b.buffer_bytes;
  }
  // Never a timestamp off the host clock's range (handover.cpp: a client's TSC callback).
  RecheckClock(s);
  const uint64_t off_clock = DropRecordsOffHostClock(
      &ready, s->started_ns - std::min(s->started_ns, kHostClockSlackNs), NowNs() + kHostClockSlackNs);
  if (off_clock != 0) {
    g_cupti_errors.fetch_add(off_clock, std::memory_order_relaxed);
    log::Info(std::to_string(off_clock) + " GPU records with timestamps off the host clock were "
              "refused (another tool's timestamp callback?): counted in cupti_errors");
  }
  const MergeTotals totals = MergeGpuBatches(&ready, &s->devices, profile);
  // Records CUPTI delivered with broken timestamps or sizes were dropped by the decoder: a
  // CUPTI-side error, counted (and warned about) with the others.
  if (totals.broken_records != 0) {
    g_cupti_errors.fetch_add(totals.broken_records, std::memory_order_relaxed);
  }
  const uint64_t exits_without_enter = g_exits_without_enter.load(std::memory_order_relaxed);
  if (exits_without_enter != 0 && !s->logged_exits_without_enter) {
    s->logged_exits_without_enter = true;
    log::Debug(std::to_string(exits_without_enter) +
               " CUDA API call(s) ended without a recorded start (the call during which gprof-run "
               "subscribed to CUPTI): not recorded.");
  }
  AddApiNames(s, profile);

  const uint64_t dropped = g_dropped.load(std::memory_order_relaxed);
  const uint64_t refused = s->pool.refused();
  const uint64_t errors = g_cupti_errors.load(std::memory_order_relaxed);
  profile->counters.cupti_dropped_records += dropped - s->reported_dropped;
  profile->counters.cupti_buffers_refused += refused - s->reported_refused;
  profile->counters.cupti_errors += errors - s->reported_errors;
  if (dropped != s->reported_dropped || refused != s->reported_refused) {
    // Once as a warning; a long run's later segments or windows say it at info level (each dump
    // carries its own count, and the launcher's closing line sums them).
    const uint64_t at_cap = s->pool.refused_pending() - s->reported_refused_pending;
    const std::string why =
        at_cap != 0 ? std::to_string(at_cap) + " of them because " +
                          std::to_string(s->pool.max_pending_bytes() >> 20) +
                          " MiB of GPU records were pending (CUPTI keeps a buffer until all the "
                          "GPU work in it has finished: the program's host ran ahead of the GPU)"
                    : "all " + std::to_string(s->pool.capacity()) + " buffers of " +
                          std::to_string(s->pool.buffer_size() / 1024) + " KiB were in use";
    (s->warned_dropped ? log::Info : log::Warn)(std::to_string(dropped - s->reported_dropped) +
              " CUPTI activity records were dropped (" + std::to_string(refused - s->reported_refused) +
              " buffer requests refused, " + why +
              "): that GPU activity is missing from the profile, and the count is in the outputs. " +
              (at_cap != 0 ? "Raise GPROF_PENDING_MIB to keep it." :
                             "Raise GPROF_ACTIVITY_POOL or GPROF_ACTIVITY_BUFFER_KIB to keep it."));
    s->warned_dropped = true;
  }
  s->reported_dropped = dropped;
  s->reported_refused = refused;
  s->reported_refused_pending = s->pool.refused_pending();
  s->reported_errors = errors;
  if (errors != 0 && !s->warned_errors) {
    s->warned_errors = true;
    log::Warn("CUPTI reported " + std::to_string(errors) +
              " error(s) during the run: some GPU activity may be missing from the profile (the "
              "count is in the outputs). Rerun with GPROF_LOG_LEVEL=debug for details.");
  }
}

}  // namespace gprof::collector::session

namespace gprof::collector {

void AddGpuApiNames(Profile* profile) {
  if (!session::Ready()) return;
  session::Session* s = session::g_session;
  if (s != nullptr && s->pid == getpid()) session::AddApiNames(s, profile);
}

uint64_t PendingGpuBytes() {
  if (!session::Ready()) return 0;
  session::Session* s = session::g_session;
  if (s == nullptr || s->stopped) return 0;
  uint64_t bytes = 0;
  std::lock_guard<std::mutex> lock(s->ready_mu);
  for (const GpuBatch& b : s->ready) bytes += b.buffer_bytes;
  return bytes;
}

GpuPendingMemory PendingGpuMemory() {
  GpuPendingMemory m;
  if (!session::Ready()) return m;
  session::Session* s = session::g_session;
  if (s == nullptr) return m;
  m.pool_mapped_bytes = uint64_t{s->pool.allocated()} * s->pool.buffer_size();
  m.buffers_lent = s->pool.in_use();
  m.buffers_completed = s->pool.completed_waiting();
  std::lock_guard<std::mutex> lock(s->ready_mu);
  m.decoded_bytes = s->ready_bytes;
  m.decoded_bytes_peak = s->ready_bytes_peak;
  return m;
}

}  // namespace gprof::collector
