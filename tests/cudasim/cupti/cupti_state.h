// State of the stand-in libcupti.so.13: the one subscriber and its enabled callbacks, the enabled
// activity kinds, and the activity pipeline (tool buffers per thread -> worker thread -> the tool's
// completed callback). Test-only.
//
// Threads: application threads (API calls and the hooks libcudart calls; with the default buffer
// mode they also call the tool's buffer-requested callback) and the one CUPTI worker thread, which
// alone calls the tool's buffer-completed callback.
#pragma once

#include <cupti.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/cudasim/sim_api.h"

namespace gprof::cudasim {

constexpr int kMaxDomain = CUPTI_CB_DOMAIN_SIZE;
constexpr int kMaxCbid = 1024;
constexpr size_t kMaxRecordBytes = 256;
constexpr int kMaxAttr = 16;

// One record waiting in the staging queue (CUDASIM_BUFFER_MODE=staged only).
struct StagedRecord {
  uint64_t complete_ns;   // CLOCK_REALTIME time from which the record is complete
  uint64_t start_rt_ns;   // GPU records: start on the CLOCK_REALTIME timeline (0 otherwise)
  uint32_t size;
  alignas(8) uint8_t bytes[kMaxRecordBytes];
};

// A GPU record inside a tool buffer whose timestamps are not final until complete_ns.
struct GpuRecordRef {
  size_t offset;
  uint64_t complete_ns;
  uint64_t start_rt_ns;
};

// A buffer the tool handed to CUPTI (buffer-requested callback), being filled or waiting to be
// returned through the buffer-completed callback.
struct ToolBuffer {
  uint8_t* data = nullptr;
  size_t size = 0;
  size_t valid = 0;
  size_t max_records = 0;   // from the tool; 0 = as many as fit
  size_t records = 0;
  uint64_t complete_ns = 0; // the latest complete_ns of its records
  std::vector<GpuRecordRef> gpu;
};

// Where one thread's records go (or, with per-thread buffers off, everyone's).
struct BufferSlot {
  ToolBuffer buffer;
  bool has_buffer = false;
  bool requesting = false;  // a thread is in the tool's buffer-requested callback for this slot
};

struct CuptiState {
  // Subscriber. sub_mu guards the fields below it; the callback itself is called without it.
  std::mutex sub_mu;
  bool subscribed = false;
  std::string subscriber_name;
  std::atomic<CUpti_CallbackFunc> callback{nullptr};
  std::atomic<void*> userdata{nullptr};
  std::atomic<bool> enabled[kMaxDomain][kMaxCbid] = {};

  std::atomic<bool> kinds[CUPTI_ACTIVITY_KIND_COUNT] = {};
  std::atomic<CUpti_ActivityThreadIdType> thread_id_type{CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT};
  // cuptiActivityRegisterTimestampCallback (process-wide; the latest registration wins).
  std::atomic<CUpti_TimestampCallbackFunc> timestamp_fn{nullptr};

  // Activity pipeline. stage_mu guards everything below; it is never held while calling the tool.
  std::mutex stage_mu;
  std::condition_variable stage_cv;    // wakes the worker
  std::condition_variable flush_cv;    // wakes flushers when a flush generation is done
  std::condition_variable request_cv;  // wakes writers waiting for a slot's buffer request
  // Process-wide, like CUPTI's: a second registration replaces the first's callbacks.
  CUpti_BuffersCallbackRequestFunc requested = nullptr;
  CUpti_BuffersCallbackCompleteFunc completed = nullptr;
  bool worker_started = false;
  bool stop = false;
  bool worker_wake = false;            // a full buffer or a flush is waiting for the worker
  uint64_t flush_requested = 0;        // generation counters
  uint64_t flush_done = 0;
  uint64_t records_seen = 0;           // for CUDASIM_DROP_EVERY
  uint64_t dropped = 0;                // reset by cuptiActivityGetNumDroppedRecords
  uint64_t buffers_requested = 0;
  uint64_t period_ms = 0;              // cuptiActivityFlushPeriod; 0 = CUPTI's own heuristics
  uint64_t attrs[kMaxAttr] = {};
  bool attr_set[kMaxAttr] = {};
  // CUDASIM_BUFFER_MODE=cupti: per-thread slots (never freed: a thread's buffer outlives it until
  // a flush returns it), the shared slot, full buffers waiting for their records to complete, and
  // buffers a flush took that the worker has to return.
  std::vector<BufferSlot*> thread_slots;
  BufferSlot shared_slot;
  std::deque<ToolBuffer> full;
  std::deque<ToolBuffer> to_return;
  // Records made before cuptiActivityRegisterCallbacks; written when it is called.
  std::deque<StagedRecord> unregistered;
  // CUDASIM_BUFFER_MODE=staged.
  std::deque<StagedRecord> staged;
  bool flush_forced = false;
};

CuptiState& Cupti();
// Registers the hooks with libcudart (once). Every CUPTI entry point calls it first: through it
// CheckAlive with its own name, then RequireDriver (it aborts the process when the driver has not
// yet run InitializeInjection).
void EnsureHooks(const char* caller = __builtin_FUNCTION());
// The real libcupti is C++ with static destructors: 27 .init_array entries and an import of
// __cxa_atexit (REFERENCE.md section 1), so the objects it builds when it is loaded are destroyed
// at exit in reverse order of registration, before every atexit handler registered earlier. A
// tool that loaded libcupti with dlopen after registering its own exit handler calls into
// destroyed state there. The stand-in has one such static object (misc.cpp); once it is
// destroyed every API call prints what was called and aborts, and libcudart's hooks go quiet.
void CheckAlive(const char* caller);
bool LibraryDestroyed();
// Models observed behaviour of a real libcupti called in a process with no driver: torch 2.15's
// libcupti 13.2 (CUPTI_API_VERSION 130202), asked for cuptiGetVersion there, recursed
// (cuptiGetVersion -> cuptiGetResultString -> ...) until the stack overflowed, 100,000 frames
// under gdb (issue 28); the toolkit's 13.0 returned 130001 in the same test. A profiler must not
// call into a libcupti before the driver has called its InitializeInjection, so in a process with
// CUDA_INJECTION64_PATH set (every gprof-run run) the stand-in aborts, naming `caller`, on any
// CUPTI call before the stand-in driver's initialization has begun (cudasim_injection_started).
// Without an injection library it plays a machine with a driver: CUPTI may be called first.
void RequireDriver(const char* caller);
// Size of the record struct CUPTI uses for a kind in this version; 0 for kinds not produced here.
size_t RecordSize(CUpti_ActivityKind kind);
size_t Size130(CUpti_ActivityKind kind);  // the same in CUDA 13.0's layouts
// Hook bodies (see sim_api.h).
void StageRecord(const CUpti_Activity* record, size_t size, uint64_t complete_ns);
void EmitExternalCorrelations(uint32_t correlation_id);
uint32_t CurrentThreadId();
// A CLOCK_REALTIME time in the clock records report (a registered timestamp callback's clock).
uint64_t ToRecordClock(uint64_t realtime_ns);
// Counts one delivered API callback for CUDASIM_CALLBACK_REPORT (callback_report.cpp).
void CountCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);

}  // namespace gprof::cudasim
