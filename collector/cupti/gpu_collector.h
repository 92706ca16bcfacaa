// GPU collection through CUPTI: the one entry point of collector/cupti/ for the rest of the
// collector (lifecycle/ and windows/ include this header, and api_filter.h for API-name matching;
// neither includes <cupti.h>). Implemented by the files of collector/cupti/: session.cpp (start,
// stop), api_callback.cpp, activity_buffers.cpp (buffer callbacks, parser thread),
// session_drain.cpp and gpu_drain.cpp (drain). Nothing outside collector/ includes CUPTI.
//
// Threads: Start/Drain/Stop are cold and run on the thread that called InitializeInjection, the
// atexit handler, or the window-end thread; never concurrently with each other.
#pragma once

#include <string>
#include <vector>

#include "config/config.h"
#include "model/profile.h"
#include "model/records.h"

namespace gprof::collector {

struct GpuStartResult {
  bool collecting = false;
  // A late start (attach) into a process whose CUDA driver has not been initialized: nothing was
  // loaded or called; GPU collection can start when the driver runs InitializeInjection.
  bool waiting_for_cuda = false;
  std::string status;        // one line: "collected", or what failed and what to do
  std::string cupti_library; // path of the libcupti used ("" if none was loaded)
  // The clock check at start (ProfileInfo::cupti_clock_*): cuptiGetTimestamp between two host
  // clock reads. Window 0: not checked.
  int64_t clock_offset_ns = 0;
  uint64_t clock_window_ns = 0;
};

// Loads libcupti, checks its version, subscribes, enables callbacks and activity kinds. On any
// failure everything stays inert and `status` says why (shown once to the user). `late`: CUDA
// was initialized before us (`gprof-run attach`): device records, which CUPTI emits at driver
// initialization only, are asked for with cuptiActivityEnableAndDump (cupti_activity.h: "the
// records for CUDA resources ... that are currently active if user late attaches CUPTI").
GpuStartResult StartGpuCollection(const Config& config, bool late = false);

// Flushes CUPTI's activity buffers (forced when `forced`), then moves every GPU record collected
// so far into `profile` (kernels, copies, memsets, syncs, memory ops, overheads, devices,
// launch configs, counters). API-call records are host records (thread_buffer.h), not moved here.
void DrainGpu(Profile* profile, bool forced);

// Adds the names of the CUDA API calls seen so far (Profile::api_names) from the session's own
// tables, with no CUPTI call. DrainGpu adds them too; a dump's host data gets them first, so that
// one written without CUPTI (after a signal, lifecycle/flush.h) still names its calls. Cold.
void AddGpuApiNames(Profile* profile);

// Bytes of CUPTI records decoded and waiting for the next drain (the completed buffers' sizes).
// The spill thread drains when they pass its bound. Cold; takes the parser's lock.
uint64_t PendingGpuBytes();
// What the GPU side holds for records not yet written, for the memory accounting (debug log,
// bench): the pool's mapped buffers (each mapped once, reused: its peak), those lent to CUPTI now
// and those CUPTI completed that the parser has not decoded yet, and the decoded records waiting
// for a drain (now and at most so far). Cold; takes the parser's lock.
struct GpuPendingMemory {
  uint64_t pool_mapped_bytes = 0;
  uint32_t buffers_lent = 0;
  uint32_t buffers_completed = 0;
  uint64_t decoded_bytes = 0;
  uint64_t decoded_bytes_peak = 0;
};
GpuPendingMemory PendingGpuMemory();
// Flags the successful launch-like calls of `p` (ApiCall::flags kApiCallLaunch) from the cbid
// tables, so that model/gpu_checks.h (CheckGpuAgainstCalls, here and in the dump reader) knows
// them without CUPTI; launches made during a stream capture (CapturedCalls) are not flagged: they
// make no GPU record, nor are those made while the program's own profiler held CUPTI
// (`handed_over`, e.g. HandedOverAt; nullptr: none was). Call before writing or checking a
// profile. Pure.
void MarkLaunchCalls(Profile* p, bool (*handed_over)(uint64_t start_ns));
// Whether a call that started at `start_ns` fell in an interval the program's own profiler held
// CUPTI (HandGpuCollectionOver .. TakeGpuCollectionBack). Cold; takes the hand-over's lock only
// after a hand-over happened.
bool HandedOverAt(uint64_t start_ns);
// A successful launch-like call (api_filter.h's lists: kernels, cooperative, graphs).
bool IsLaunchCall(const ApiCall& c);
// For each call of `p`: whether it queued work into a stream under capture, as the API callback
// saw it (kApiCallCaptured: the call's stream was capturing, or had joined a capture through an
// event; captures begun before the window or segment that `p` is count too). Work queued then is
// captured into a graph, not run: such a call never gets a GPU record of its own (its work runs
// later under the cudaGraphLaunch's correlation id). The few copy forms whose stream is not read
// (call_params.h) fall back to the thread rule: captured while their thread has a capture open.
// Pure.
std::vector<bool> CapturedCalls(const Profile& p);
// cudaGraphLaunch / cuGraphLaunch (and their _ptsz forms): the graph's work carries this call's
// correlation id, but a graph of host or empty nodes has no GPU record at all.
bool IsGraphLaunchCall(const ApiCall& c);
// A successful call that puts work on the GPU and so has GPU records with its correlation id:
// launches, and every memcpy and memset call (synchronous ones too: their records may sit in a
// buffer CUPTI holds back) that moves something on the GPU (not kApiCallNoGpuWork: 0 bytes, or
// host to host). Needs a started session (its callback names); false otherwise. Cold.
bool CallMakesGpuWork(const ApiCall& c);

// Turns the recording of API-call records on or off (schedule windows: off in wait steps). One
// relaxed store; CUPTI activity (kernels, copies, ...) is switched by SetGpuActivityEnabled, and
// the API hook keeps seeing every call for step detection either way.
void SetGpuCollectionEnabled(bool enabled);

// Turns CUPTI activity recording (kernels, copies, ...) on or off: schedule windows switch it off
// between windows so CUPTI costs nothing there. Cold (window thread); calls into CUPTI. Records
// already in buffers are kept. On at start.
void SetGpuActivityEnabled(bool enabled);

// After a signal, when CUPTI did not answer the exit flush's bounded try (lifecycle/flush.h):
// from then on DrainGpu, SetGpuActivityEnabled and StopGpuCollection return without calling
// CUPTI (a drain still inside CUPTI is left there). Cold; one atomic store.
void AbandonGpuCollection();

// Ends the session: activity kinds off, a forced flush of its own, the parser joined once it has
// decoded every buffer, then unsubscribes (no cuptiFinalize: session.cpp says why). Records
// flushed here and not drained before are lost: drain first. Idempotent.
void StopGpuCollection();

// The program's own CUPTI profiler (torch.profiler's Kineto, or any client of its own; handover.cpp
// says why). HandGpuCollectionOver, before it takes CUPTI: our kinds off, our buffers flushed home
// (default flushes for up to 1 s, then a forced one), and from then on no flush, dropped-count
// read or kind switch of ours touches CUPTI. TakeGpuCollectionBack, after it stopped: its buffers
// flushed to it, our attributes, buffer callbacks and kinds set again, a timestamp callback it left
// replaced by the host clock, and the clock measured again into `gpu`'s clock fields. Launches
// made in between are not expected to have records of ours (MarkLaunchCalls, CallMakesGpuWork).
// Both true when they did something now; idempotent. Cold; the caller serializes them with the
// drains (lifecycle's flush_mutex).
bool HandGpuCollectionOver(const GpuStartResult& gpu);
bool TakeGpuCollectionBack(GpuStartResult* gpu);
// The --preload interposition of cuptiActivityRegisterCallbacks / Enable / Disable
// (inject/cupti_interpose.cpp): the real definitions, CUptiResult as int; `kind` is a
// CUpti_ActivityKind. IsOwnBufferCallback: `requested` is gprof-run's own callback.
int ForwardCuptiRegisterCallbacks(void* requested, void* completed);
int ForwardCuptiActivityEnable(int kind);
int ForwardCuptiActivityDisable(int kind);
bool IsOwnBufferCallback(void* requested);
// While handed over, the client's kinds (enabled: true). True when `kind` was the last of the
// kinds it enabled since the hand-over to be disabled: its profiler stopped.
bool NoteClientActivityKind(int kind, bool enabled);
// After a take-back: true when `kind` is one of ours, so the program's late disable of it (a
// client that disables every kind at its stop) must not switch our records off.
bool KeepOwnActivityKind(int kind);

// The one call point from CUPTI's API callback into schedule/step logic (windows, kernel- and
// API-based step detection, cudaProfilerStart/Stop capture). The schedule code installs a hook;
// the callback calls it twice for every runtime call and every driver call made directly (not
// from inside a runtime call), whether or not collection is on: on entry, before the call runs,
// and on exit, after it returned (`exit`; a call that ends a step belongs to that step). The
// hook runs on application threads inside a CUPTI callback: it must follow the hot path rules
// (no allocation, locks, logging, exceptions, I/O). SetApiHook is cold (init).
struct ApiHookEvent {
  uint64_t ts_ns;
  const char* function_name;  // CUPTI's name for the API ("cudaProfilerStart", ...)
  const char* symbol_name;    // launched kernel's name for launch calls, else nullptr
  uint32_t correlation_id;
  uint16_t cbid;
  ApiDomain domain;
  bool is_launch;             // launch-like (REFERENCE.md §1 list, graphs included)
  bool exit = false;          // CUPTI_API_EXIT: the call has returned; ts_ns is its return
};

using ApiHook = void (*)(const ApiHookEvent& event) noexcept;

// Installs (or, with nullptr, removes) the hook. Only one hook: the schedule owns it.
void SetApiHook(ApiHook hook);

}  // namespace gprof::collector
