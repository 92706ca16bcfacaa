// Living beside the program's own CUPTI profiler (gpu_collector.h, HandGpuCollectionOver): the
// hand-over before it takes CUPTI's process-wide activity state, the take-back after it stopped,
// the launches of the interval between (their records are the program's), and the forwarding
// half of the --preload interposition (inject/cupti_interpose.cpp).
//
// Why a hand-over at all: CUPTI's activity state is the process's, not a subscriber's
// (cupti_activity.h: cuptiActivityRegisterCallbacks takes no handle; the latest registration
// gets every buffer, also those handed out before). Kineto (libkineto/src/CuptiActivityApi.cpp,
// enableCuptiActivities) registers its own callbacks when its profiler starts, its bufferCompleted
// drops a buffer it did not allocate ("bufferCompleted called with unknown buffer"), its stop
// disables its kinds (disableCuptiActivities), and CuptiActivityProfiler.cpp (configure) registers
// a TSC timestamp callback (getApproximateTime) that it never removes. So before it starts our
// buffers come home and our kinds go off; after it stops we set CUPTI up again as at start.
//
// Threads: HandOver/TakeBack run on the program's thread (the Python hook, or the interposed
// call) under the lifecycle's flush_mutex, so never concurrently with a drain, Start or Stop;
// SetGpuActivityEnabled (window thread) shares kinds_mu with them. Cold code.
#include <dlfcn.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "collector/cupti/gpu_collector.h"
#include "collector/cupti/session_state.h"
#include "model/gpu_records.h"
#include "support/clock.h"
#include "support/log.h"

namespace gprof::collector::session {

std::atomic<bool> g_handed_over{false};

namespace {

constexpr uint64_t kOpen = UINT64_MAX;
// How long the hand-over polls CUPTI's default flush, which returns only buffers whose records
// are complete, before a forced one takes what is left (as torch.profiler's __exit__ waits for
// the device before its own forced flush).
constexpr auto kHandOverPoll = std::chrono::seconds(1);

std::atomic<bool> g_any_handover{false};  // set at the first hand-over, never cleared
std::mutex g_mu;  // guards everything below; a leaf lock
std::vector<std::pair<uint64_t, uint64_t>> g_intervals;  // host ns [start, end); end kOpen while on
std::set<int> g_client_kinds;  // kinds the client enabled since the hand-over (interposition)
bool g_clock_was_host = true;  // CUPTI's clock agreed with the host's when we handed over
bool g_taken_back = false;     // at least one take-back happened
bool g_logged_swallow = false;
bool g_logged_clock_moved = false;

// cuptiGetTimestamp between two host reads (session.cpp CheckClock does the same at start).
bool MeasureClock(const CuptiApi& api, int64_t* offset, uint64_t* window) {
  uint64_t gpu = 0;
  const uint64_t before = NowNs();
  const CUptiResult rc = api.GetTimestamp(&gpu);
  const uint64_t after = NowNs();
  if (rc != CUPTI_SUCCESS || gpu == 0 || after < before) return false;
  *window = after > before ? after - before : 1;
  *offset = static_cast<int64_t>(gpu) - static_cast<int64_t>(before + (after - before) / 2);
  return true;
}

bool ClockIsHost(const CuptiApi& api) {
  ProfileInfo probe;
  if (!MeasureClock(api, &probe.cupti_clock_offset_ns, &probe.cupti_clock_window_ns)) return true;
  return CuptiClockAgrees(probe);
}

// CUPTI's default clock on Linux, "clock_gettime(CLOCK_REALTIME)" in ns (cupti_activity.h,
// cuptiActivityRegisterTimestampCallback), which host events use too (support/clock.h).
uint64_t CUPTIAPI HostClockNs() { return NowNs(); }

// A timestamp callback the client left behind cannot be removed (a null one is
// CUPTI_ERROR_INVALID_PARAMETER), only replaced: "the records generated prior to the change
// report timestamps through the previous timestamp method" (cupti_activity.h), later ones ours.
// Resolved here, not in loader.h: only the take-back needs it. (CUDA 13.0's known bug, zero kernel
// timestamps once a timestamp callback is registered (REFERENCE.md section 1), has then already
// been set off by the client's registration; ours changes nothing there.)
void RestoreHostClock(const Session& s) {
  void* lib = ::dlopen(s.path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  auto* reg = lib != nullptr ? reinterpret_cast<decltype(&cuptiActivityRegisterTimestampCallback)>(
                                   ::dlsym(lib, "cuptiActivityRegisterTimestampCallback"))
                             : nullptr;
  if (reg == nullptr || reg(&HostClockNs) != CUPTI_SUCCESS) {
    g_cupti_errors.fetch_add(1, std::memory_order_relaxed);
    log::Warn("the program's profiler left CUPTI on another clock and gprof-run could not put it "
              "back: GPU records after it are refused (counted in cupti_errors)");
  }
}

Session* UsableSession() {
  if (!Ready()) return nullptr;
  Session* s = g_session;
  if (s == nullptr || s->stopped || s->pid != getpid()) return nullptr;
  return s;
}

void CountFailure(CUptiResult rc) {
  if (rc != CUPTI_SUCCESS) g_cupti_errors.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

bool InHandOver(uint64_t start_ns) {
  if (!g_any_handover.load(std::memory_order_acquire)) return false;  // the common case: no lock
  std::lock_guard<std::mutex> lock(g_mu);
  for (const auto& [from, to] : g_intervals) {
    if (start_ns >= from && start_ns < to) return true;
  }
  return false;
}

void RecheckClock(Session* s) {
  if (HandedOver()) return;  // the program's profiler may run on its own clock meanwhile
  const bool host = ClockIsHost(s->api);
  std::lock_guard<std::mutex> lock(g_mu);
  if (!host && s->clock_agreed && !g_logged_clock_moved) {
    g_logged_clock_moved = true;
    log::Warn("CUPTI's clock moved away from the host clock during the run (another tool's "
              "timestamp callback?): GPU records off the host clock are refused and counted in "
              "cupti_errors");
  }
}

uint64_t DropRecordsOffHostClock(std::vector<GpuBatch>* batches, uint64_t lo, uint64_t hi) {
  uint64_t dropped = 0;
  for (GpuBatch& b : *batches) {
    ForEachGpuKind(b, [&](GpuKind, auto& records) {
      using T = typename std::decay_t<decltype(records)>::value_type;
      const auto off = [&](const T& r) {
        const uint64_t start = GpuRecordStartNs(r);
        uint64_t end = start;
        if constexpr (!std::is_same_v<T, MemoryOp>) end = r.end_ns;
        return start < lo || start > hi || end > hi;
      };
      const auto kept = std::remove_if(records.begin(), records.end(), off);
      dropped += static_cast<uint64_t>(records.end() - kept);
      records.erase(kept, records.end());
    });
  }
  return dropped;
}

}  // namespace gprof::collector::session

namespace gprof::collector {

using namespace session;  // NOLINT: this file's own namespace

bool HandedOverAt(uint64_t start_ns) { return InHandOver(start_ns); }

bool HandGpuCollectionOver(const GpuStartResult& gpu) {
  Session* s = UsableSession();
  if (s == nullptr || HandedOver()) return false;
  std::lock_guard<std::mutex> kinds(s->kinds_mu);
  const uint64_t from = NowNs();  // launches from here on may have no records of ours
  // The clock as we last measured it (start, or the last take-back), not now: a client may have
  // registered its timestamp callback already (Kineto does so before its buffer callbacks).
  ProfileInfo last;
  last.cupti_clock_offset_ns = gpu.clock_offset_ns;
  last.cupti_clock_window_ns = gpu.clock_window_ns;
  const bool clock_was_host = CuptiClockAgrees(last);
  if (s->activity_on) {
    for (CUpti_ActivityKind kind : s->enabled_kinds) CountFailure(s->api.ActivityDisable(kind));
  }
  // Our buffers home: default flushes while any is out (each returns those whose records are
  // complete), bounded; then a forced one for what is left (an empty buffer, or work still
  // running after the bound: counted as incomplete by the decoder).
  const auto deadline = std::chrono::steady_clock::now() + kHandOverPoll;
  for (;;) {
    CountFailure(s->api.ActivityFlushAll(0));
    if (s->pool.in_use() == 0 || std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  CountFailure(s->api.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  {
    std::lock_guard<std::mutex> lock(g_mu);
    g_clock_was_host = clock_was_host;
    g_client_kinds.clear();
    g_intervals.emplace_back(from, kOpen);
  }
  g_any_handover.store(true, std::memory_order_release);
  g_handed_over.store(true, std::memory_order_release);
  log::Info("the program's own CUPTI profiler starts: its GPU records are its own until it stops "
            "(gprof-run keeps the API calls of that interval, without their GPU records)");
  return true;
}

bool TakeGpuCollectionBack(GpuStartResult* gpu) {
  Session* s = UsableSession();
  if (s == nullptr || !HandedOver()) return false;
  std::lock_guard<std::mutex> kinds(s->kinds_mu);
  // The client's buffers still out go to the client's callbacks, registered until the next line
  // but one (Kineto's own stop flushes forced too: CuptiActivityApi::activityBuffers).
  CountFailure(s->api.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  // Every kind is off now (the client's at its stop, ours since the hand-over): the state in which
  // cupti_activity.h allows PER_THREAD_ACTIVITY_BUFFER to be set ("before registering the buffer
  // callbacks ... and before any of the CUPTI activity kinds are enabled"). As at start
  // (session.cpp): zeroed buffers, one shared buffer queue.
  uint8_t one = 1, zero = 0;
  size_t size = sizeof(uint8_t);
  s->api.ActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &size, &one);
  size = sizeof(uint8_t);
  s->api.ActivitySetAttribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &size, &zero);
  const CUptiResult rc = s->api.ActivityRegisterCallbacks(&BufferRequested, &BufferCompleted);
  CountFailure(rc);
  bool clock_was_host = true;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    clock_was_host = g_clock_was_host;
  }
  // Only a clock the client changed is put back: one that differed before (WSL's) is CUPTI's own.
  if (clock_was_host && !ClockIsHost(s->api)) RestoreHostClock(*s);
  if (s->activity_on) {
    for (CUpti_ActivityKind kind : s->enabled_kinds) CountFailure(s->api.ActivityEnable(kind));
  }
  int64_t offset = 0;
  uint64_t window = 0;
  if (MeasureClock(s->api, &offset, &window)) {
    ProfileInfo probe;
    probe.cupti_clock_offset_ns = offset;
    probe.cupti_clock_window_ns = window;
    s->clock_agreed = CuptiClockAgrees(probe);
    if (gpu != nullptr) {
      gpu->clock_offset_ns = offset;
      gpu->clock_window_ns = window;
    }
  }
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (!g_intervals.empty() && g_intervals.back().second == kOpen) g_intervals.back().second = NowNs();
    g_client_kinds.clear();
    g_taken_back = true;
  }
  g_handed_over.store(false, std::memory_order_release);
  if (rc != CUPTI_SUCCESS) {
    log::Warn("gprof-run could not take CUPTI back after the program's own profiler stopped: "
              "later GPU records are missing (counted in cupti_errors)");
  } else {
    log::Info("the program's own CUPTI profiler stopped: gprof-run collects GPU records again");
  }
  return true;
}

bool NoteClientActivityKind(int kind, bool enabled) {
  if (!HandedOver()) return false;
  std::lock_guard<std::mutex> lock(g_mu);
  if (enabled) {
    g_client_kinds.insert(kind);
    return false;
  }
  return g_client_kinds.erase(kind) != 0 && g_client_kinds.empty();
}

bool KeepOwnActivityKind(int kind) {
  Session* s = UsableSession();
  if (s == nullptr || HandedOver()) return false;
  std::lock_guard<std::mutex> lock(g_mu);
  if (!g_taken_back) return false;
  const bool ours = std::find(s->enabled_kinds.begin(), s->enabled_kinds.end(),
                              static_cast<CUpti_ActivityKind>(kind)) != s->enabled_kinds.end();
  if (ours && !g_logged_swallow) {
    g_logged_swallow = true;
    log::Debug("the program disabled activity kind " + std::to_string(kind) +
               " after its own profiler stopped; gprof-run keeps it on (its records are ours)");
  }
  return ours;
}

namespace {

// The definition the program would have called without us: the next one after the injection
// library in the search order (the libcupti the program linked), else the session's.
template <typename Fn>
Fn NextDefinition(const char* name, Fn session_fn) {
  if (void* next = ::dlsym(RTLD_NEXT, name)) return reinterpret_cast<Fn>(next);
  return session_fn;
}

const CuptiApi* SessionApi() {
  const Session* s = g_session;
  return s != nullptr ? &s->api : nullptr;
}

}  // namespace

int ForwardCuptiRegisterCallbacks(void* requested, void* completed) {
  const CuptiApi* api = SessionApi();
  auto fn = NextDefinition("cuptiActivityRegisterCallbacks",
                           api != nullptr ? api->ActivityRegisterCallbacks : nullptr);
  if (fn == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
  return fn(reinterpret_cast<CUpti_BuffersCallbackRequestFunc>(requested),
            reinterpret_cast<CUpti_BuffersCallbackCompleteFunc>(completed));
}

int ForwardCuptiActivityEnable(int kind) {
  const CuptiApi* api = SessionApi();
  auto fn = NextDefinition("cuptiActivityEnable", api != nullptr ? api->ActivityEnable : nullptr);
  return fn != nullptr ? fn(static_cast<CUpti_ActivityKind>(kind)) : CUPTI_ERROR_NOT_INITIALIZED;
}

int ForwardCuptiActivityDisable(int kind) {
  const CuptiApi* api = SessionApi();
  auto fn = NextDefinition("cuptiActivityDisable", api != nullptr ? api->ActivityDisable : nullptr);
  return fn != nullptr ? fn(static_cast<CUpti_ActivityKind>(kind)) : CUPTI_ERROR_NOT_INITIALIZED;
}

bool IsOwnBufferCallback(void* requested) {
  return requested == reinterpret_cast<void*>(&BufferRequested);
}

}  // namespace gprof::collector
