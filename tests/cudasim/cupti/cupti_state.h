// State of the stand-in libcupti.so.13: the one subscriber and its enabled callbacks, the enabled
// activity kinds, and the activity pipeline (staging queue -> worker thread -> tool buffers).
// Test-only.
//
// Threads: application threads (API calls and the hooks libcudart calls) and the one CUPTI worker
// thread, which alone calls the tool's buffer-requested / buffer-completed callbacks.
#pragma once

#include <cupti.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "tests/cudasim/sim_api.h"

namespace gprof::cudasim {

constexpr int kMaxDomain = CUPTI_CB_DOMAIN_SIZE;
constexpr int kMaxCbid = 1024;
constexpr size_t kMaxRecordBytes = 256;

struct StagedRecord {
  uint64_t complete_ns;
  uint32_t size;
  alignas(8) uint8_t bytes[kMaxRecordBytes];
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

  // Activity pipeline. stage_mu guards everything below; never held while calling the tool.
  std::mutex stage_mu;
  std::condition_variable stage_cv;   // wakes the worker
  std::condition_variable flush_cv;   // wakes flushers when a flush generation is done
  std::deque<StagedRecord> staged;
  CUpti_BuffersCallbackRequestFunc requested = nullptr;
  CUpti_BuffersCallbackCompleteFunc completed = nullptr;
  bool worker_started = false;
  bool stop = false;
  uint64_t flush_requested = 0;       // generation counters
  uint64_t flush_done = 0;
  bool flush_forced = false;
  uint64_t records_seen = 0;          // for CUDASIM_DROP_EVERY
  uint64_t dropped = 0;               // reset by cuptiActivityGetNumDroppedRecords
  uint64_t buffers_requested = 0;
  uint64_t period_ms = 0;
  uint64_t attrs[16] = {};
};

CuptiState& Cupti();
// Registers the hooks with libcudart (once). Every CUPTI entry point calls it first.
void EnsureHooks();
// Size of the record struct CUPTI uses for a kind in this version; 0 for kinds not produced here.
size_t RecordSize(CUpti_ActivityKind kind);
// Hook bodies (see sim_api.h).
void StageRecord(const CUpti_Activity* record, size_t size, uint64_t complete_ns);
void EmitExternalCorrelations(uint32_t correlation_id);
uint32_t CurrentThreadId();

}  // namespace gprof::cudasim
