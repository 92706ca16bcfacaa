// The CUPTI session's shared state, internal to collector/cupti/: the one Session object and the
// constant-initialized globals that the API callback (api_callback.cpp), the buffer callbacks and
// parser (activity_buffers.cpp), the drain (session_drain.cpp) and start/stop (session.cpp) share.
// Nothing outside collector/cupti/ includes this file; the rest of the collector uses
// gpu_collector.h.
//
// Threads and rules (this runs inside the profiled process):
//   Start/Drain/Stop      - cold: the injection thread, the atexit handler, the window thread.
//                           Allocation and logging are fine; never concurrent with each other.
//                           Start publishes g_session early (the buffer callbacks need it) but the
//                           session is usable only once g_ready is set (Start's last step); Drain,
//                           Stop and the Set* calls check it first.
//   SetGpuActivityEnabled - the window thread only; may run while Start runs on the injection
//   SetGpuCollectionEnabled thread: before g_ready they do nothing (no CUPTI call, no Session
//                           access, g_collecting untouched); see g_ready for why that loses
//                           nothing.
//   ApiCallback           - every application thread that calls CUDA. Hot path: no allocation,
//                           locks, logging, exceptions or I/O. One relaxed load says whether to
//                           record; one table lookup applies the API filter.
//   BufferRequested/Completed - CUPTI threads or the app thread that fills a buffer (see
//                           activity_pool.h): lock-free; Completed also reads CUPTI's dropped-record
//                           count, as CUPTI requires, holding none of our locks.
//   ParserMain            - our own thread: decodes completed buffers (allocation is fine).
// Lock order: Session::ready_mu is the only lock. It is never held while calling into CUPTI
// (the parser decodes, which calls cuptiActivityGetNextRecord, before taking it).
// Nothing here is destroyed at exit: the session lives until the process ends.
#pragma once

#include <cupti.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "collector/cupti/activity_decoder.h"
#include "collector/cupti/activity_pool.h"
#include "collector/cupti/gpu_collector.h"
#include "collector/cupti/gpu_drain.h"
#include "collector/cupti/loader.h"

namespace gprof::collector::session {

constexpr size_t kRuntime = 0;  // index of per-domain tables
constexpr size_t kDriver = 1;

struct DomainTables {
  std::vector<std::string> names;                // cbid -> CUPTI name
  std::vector<uint8_t> record;                   // cbid -> 1 when recorded (API filter)
  std::unique_ptr<std::atomic<uint8_t>[]> seen;  // cbid -> 1 once recorded (for api_names)
  std::vector<uint8_t> gpu_work;                 // cbid -> 1 when a call puts work on the GPU
  std::vector<uint8_t> stack;                    // cbid -> 1 when a call gets a native stack
                                                 // (GPROF_BACKTRACE; same size as `record`)
};

struct Session {
  CuptiApi api;
  std::string path;
  uint64_t started_ns = 0;  // host clock when Start began: no record of ours is older
  bool clock_agreed = true;  // CUPTI's clock agreed with the host's at the last check (Start,
                             // take-back); the drain's RecheckClock warns when that changes
  pid_t pid = 0;  // a forked child (no parser thread there) must not drain or stop
  CUpti_SubscriberHandle subscriber = nullptr;
  ActivityBufferPool pool;
  DomainTables domains[2];
  std::vector<CUpti_ActivityKind> enabled_kinds;
  std::thread parser;
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> processed{0};  // buffers parsed and released
  std::mutex ready_mu;  // guards `ready`. Taken by the parser and by DrainGpu; never held while
                        // calling into CUPTI. No other lock is taken while holding it.
  std::vector<GpuBatch> ready;
  uint64_t ready_bytes = 0;       // decoded bytes held by `ready` (ready_mu)
  uint64_t ready_bytes_peak = 0;  // its highest value so far (ready_mu)
  bool count_decoded = true;      // ready_bytes count against the pool's GPROF_PENDING_MIB
  bool stopped = false;
  // Start, then (after g_ready) SetGpuActivityEnabled and the hand-over (handover.cpp), which
  // hold kinds_mu: whether our activity kinds are wanted on. While the program's own profiler
  // holds CUPTI (g_handed_over) it only records the wish; the take-back applies it.
  bool activity_on = true;
  std::mutex kinds_mu;  // never held while taking ready_mu; held across CUPTI enable/disable
  bool logged_exits_without_enter = false;
  // Devices seen so far (CUPTI reports each once); every drained profile gets all of them.
  KnownDevices devices;
  bool warned_errors = false;
  bool warned_dropped = false;  // the drop warning is given once; later drains log at info
  // Counter values already handed to a profile (windows get deltas).
  uint64_t reported_dropped = 0;
  uint64_t reported_refused = 0;
  uint64_t reported_refused_pending = 0;
  uint64_t reported_errors = 0;
};

// Constant-initialized globals (session.cpp): no constructor runs when the library is loaded.
extern std::atomic<Session*> g_session;  // set once by Start; never freed
extern std::atomic<bool> g_collecting;   // "is collection on?" (relaxed loads only)
extern std::atomic<ApiHook> g_hook;
extern std::atomic<uint64_t> g_dropped;       // cuptiActivityGetNumDroppedRecords, summed
extern std::atomic<uint64_t> g_cupti_errors;  // CUPTI calls that failed mid-run
// API exits with no enter: the call during which we subscribed (InitializeInjection runs inside
// the application's first CUDA call, so its EXIT arrives with correlationData still 0). An
// artefact of subscribing mid-call, not lost user data: skipped, counted, logged once (debug).
extern std::atomic<uint64_t> g_exits_without_enter;

// Start's last step stores true (release); Drain, Stop and the Set* calls load it (acquire) and do
// nothing before it, so nothing walks enabled_kinds or calls CUPTI while Start still does. Set*
// requests made before it are dropped, not replayed: Start leaves activity and API records on
// (the safe side: the window cut trims what is not needed), and the window thread repeats its
// decision on every pass (at most 100 ms apart). Replaying a stale "off" at the end of Start
// loses the records of steps the window thread has not seen yet (the schedule tests show it).
// Stop clears it.
extern std::atomic<bool> g_ready;

inline bool Ready() { return g_ready.load(std::memory_order_acquire); }

// handover.cpp: true while the program's own CUPTI client (torch.profiler's Kineto, or one the
// --preload interposition saw register its buffer callbacks) holds CUPTI's process-wide activity
// state. Then the drain flushes nothing and reads no dropped count (both are the client's now).
extern std::atomic<bool> g_handed_over;
inline bool HandedOver() { return g_handed_over.load(std::memory_order_acquire); }
// Whether a call that started at host time `start_ns` fell inside a hand-over: its GPU records
// went to the program's profiler, so no record of ours is expected for it. Cold (a lock).
bool InHandOver(uint64_t start_ns);
// Every drain (handover.cpp): CUPTI's clock measured against the host's again; a clock that
// agreed and no longer does is warned about once (its records are refused below).
void RecheckClock(Session* s);
// Removes every record of `batches` that starts before `lo` or starts or ends after `hi` (host
// ns): a record on another clock (a timestamp callback another tool registered counts TSC ticks:
// a 1970 date on ours) is refused, never put on the host timeline. Returns how many. Pure.
uint64_t DropRecordsOffHostClock(std::vector<GpuBatch>* batches, uint64_t lo, uint64_t hi);
// How far outside [session start, now] a record may lie (GPU-to-CPU interpolation, skew) before
// DropRecordsOffHostClock refuses it.
inline constexpr uint64_t kHostClockSlackNs = 10'000'000'000ull;

// The callbacks CUPTI calls (api_callback.cpp, activity_buffers.cpp).
void CUPTIAPI ApiCallback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                          const void* data) noexcept;
void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) noexcept;
void CUPTIAPI BufferCompleted(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t,
                              size_t valid_size) noexcept;
// Start, on the thread that runs InitializeInjection (api_callback.cpp): when that is inside a
// runtime call, the thread counts as one runtime call deep until that call's EXIT.
void NoteInjectionThread();
// The parser thread's body (activity_buffers.cpp): decodes completed buffers into s->ready.
void ParserMain(Session* s);

// session_drain.cpp: flushes and moves every GPU record decoded so far into `profile`.
void Drain(Profile* profile, bool forced);

// session_callbacks.cpp: enables the API callbacks of s->domains' tables, per id where CUPTI can.
CUptiResult EnableCallbacks(const CuptiApi& api, Session* s, const Config& config);

}  // namespace gprof::collector::session
