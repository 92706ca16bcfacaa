// Activity API of the stand-in libcupti.so.13. Records from libcudart are staged in order; one
// worker thread moves them into buffers it requests from the tool and hands full buffers back
// through the tool's completed callback, so both callbacks run on a thread the application does
// not own, as with real CUPTI. A normal flush returns buffers whose records are complete (their
// GPU end time has passed); a forced flush returns everything. Test-only.
//
// Threads: StageRecord and the API run on application threads; Worker on the CUPTI thread.
// Lock: CuptiState::stage_mu is a leaf lock, released around every call into the tool.
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <vector>

#include "tests/cudasim/cupti/cupti_state.h"

namespace gprof::cudasim {
namespace {

constexpr size_t kMaxStaged = size_t{1} << 20;  // beyond this, records are dropped and counted
constexpr size_t kWakeThreshold = 4096;

thread_local std::vector<uint64_t> t_external_ids[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE];
std::thread::id g_worker_id;
std::atomic<pid_t> g_worker_pid{0};  // a fork child has no worker: its flushes must not wait for one

// Worker-only state: the buffer being filled.
uint8_t* g_buffer = nullptr;
size_t g_buffer_size = 0;
size_t g_buffer_valid = 0;

void CompleteBuffer(CuptiState& c) {
  if (g_buffer == nullptr) return;
  c.completed(nullptr, 0, g_buffer, g_buffer_size, g_buffer_valid);
  g_buffer = nullptr;
  g_buffer_size = g_buffer_valid = 0;
}

void CountDrop(CuptiState& c) {
  std::lock_guard<std::mutex> lock(c.stage_mu);
  ++c.dropped;
}

// Gets a fresh buffer from the tool; false (record dropped) when refused or over the limit.
bool RequestBuffer(CuptiState& c, size_t need) {
  const CudasimKnobs* knobs = cudasim_knobs();
  {
    std::lock_guard<std::mutex> lock(c.stage_mu);
    if (knobs->max_buffers != 0 && c.buffers_requested >= knobs->max_buffers) return false;
    ++c.buffers_requested;
  }
  uint8_t* buf = nullptr;
  size_t size = 0, max_records = 0;
  uint64_t t0 = cudasim_now_ns();
  c.requested(&buf, &size, &max_records);
  uint64_t t1 = cudasim_now_ns();
  if (c.kinds[CUPTI_ACTIVITY_KIND_OVERHEAD].load(std::memory_order_relaxed)) {
    CUpti_ActivityOverhead3 rec{};
    rec.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
    rec.overheadKind = CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST;
    rec.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    rec.objectId.pt.processId = static_cast<uint32_t>(getpid());
    rec.objectId.pt.threadId = CurrentThreadId();
    rec.start = t0;
    rec.end = t1;
    StageRecord(reinterpret_cast<const CUpti_Activity*>(&rec), sizeof(rec), t1);
  }
  if (buf == nullptr || size < need) return false;  // the tool refused: drop, as CUPTI does
  g_buffer = buf;
  g_buffer_size = size;
  g_buffer_valid = 0;
  return true;
}

void Deliver(CuptiState& c, std::vector<StagedRecord>& records, bool flushing) {
  for (const StagedRecord& r : records) {
    if (g_buffer != nullptr && g_buffer_valid + r.size > g_buffer_size) CompleteBuffer(c);
    if (g_buffer == nullptr && !RequestBuffer(c, r.size)) {
      CountDrop(c);
      continue;
    }
    std::memcpy(g_buffer + g_buffer_valid, r.bytes, r.size);
    g_buffer_valid += r.size;
  }
  if (flushing && g_buffer != nullptr && g_buffer_valid > 0) CompleteBuffer(c);
}

void Worker() {
  CuptiState& c = Cupti();
  std::unique_lock<std::mutex> lock(c.stage_mu);
  while (!c.stop) {
    uint64_t period = c.period_ms != 0 ? c.period_ms : cudasim_knobs()->flush_period_ms;
    c.stage_cv.wait_for(lock, std::chrono::milliseconds(period), [&] {
      return c.stop || c.flush_requested != c.flush_done || c.staged.size() >= kWakeThreshold;
    });
    bool flushing = c.flush_requested != c.flush_done;
    uint64_t generation = c.flush_requested;
    bool forced = c.flush_forced;
    for (int round = 0; round < 2; ++round) {  // round 2 picks up overhead records of round 1
      uint64_t now = cudasim_now_ns();
      std::vector<StagedRecord> take;
      std::deque<StagedRecord> keep;
      for (StagedRecord& r : c.staged) {
        if (forced || r.complete_ns <= now) {
          take.push_back(r);
        } else {
          keep.push_back(r);
        }
      }
      c.staged.swap(keep);
      if (take.empty() && round > 0) break;
      if (c.requested == nullptr || c.completed == nullptr) break;
      lock.unlock();
      Deliver(c, take, flushing);
      lock.lock();
      if (!flushing) break;
    }
    if (flushing) {
      c.flush_done = generation;
      c.flush_forced = false;
      c.flush_cv.notify_all();
    }
  }
}

}  // namespace

uint32_t CurrentThreadId() {
  if (Cupti().thread_id_type.load(std::memory_order_relaxed) == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) {
    return static_cast<uint32_t>(syscall(SYS_gettid));
  }
  return static_cast<uint32_t>(pthread_self());
}

void StageRecord(const CUpti_Activity* record, size_t size, uint64_t complete_ns) {
  CuptiState& c = Cupti();
  std::lock_guard<std::mutex> lock(c.stage_mu);
  ++c.records_seen;
  uint64_t every = cudasim_knobs()->drop_every;
  if ((every != 0 && c.records_seen % every == 0) || c.staged.size() >= kMaxStaged ||
      size > kMaxRecordBytes) {
    ++c.dropped;
    return;
  }
  StagedRecord& r = c.staged.emplace_back();
  r.complete_ns = complete_ns;
  r.size = static_cast<uint32_t>(size);
  std::memcpy(r.bytes, record, size);
  if (c.staged.size() >= kWakeThreshold) c.stage_cv.notify_one();
}

void EmitExternalCorrelations(uint32_t correlation_id) {
  CuptiState& c = Cupti();
  if (!c.kinds[CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION].load(std::memory_order_relaxed)) return;
  for (int k = 0; k < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE; ++k) {
    if (t_external_ids[k].empty()) continue;
    CUpti_ActivityExternalCorrelation rec{};
    rec.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
    rec.externalKind = static_cast<CUpti_ExternalCorrelationKind>(k);
    rec.externalId = t_external_ids[k].back();
    rec.correlationId = correlation_id;
    StageRecord(reinterpret_cast<const CUpti_Activity*>(&rec), sizeof(rec), 0);
  }
}

size_t RecordSize(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMCPY2: return sizeof(CUpti_ActivityMemcpyPtoP4);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_MEMORY2: return sizeof(CUpti_ActivityMemory4);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
    case CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API: return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return sizeof(CUpti_ActivityOverhead3);
    case CUPTI_ACTIVITY_KIND_DEVICE: return sizeof(CUpti_ActivityDevice5);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return sizeof(CUpti_ActivityExternalCorrelation);
    case CUPTI_ACTIVITY_KIND_MARKER: return sizeof(CUpti_ActivityMarker2);
    case CUPTI_ACTIVITY_KIND_MARKER_DATA: return sizeof(CUpti_ActivityMarkerData2);
    case CUPTI_ACTIVITY_KIND_CONTEXT: return sizeof(CUpti_ActivityContext3);
    case CUPTI_ACTIVITY_KIND_NAME: return sizeof(CUpti_ActivityName);
    default: return 0;
  }
}

}  // namespace gprof::cudasim

using namespace gprof::cudasim;

extern "C" {

CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind) {
  EnsureHooks();
  if (kind <= CUPTI_ACTIVITY_KIND_INVALID || kind >= CUPTI_ACTIVITY_KIND_COUNT) {
    return CUPTI_ERROR_INVALID_KIND;
  }
  bool was = Cupti().kinds[kind].exchange(true);
  CUpti_ActivityDevice5 device{};
  if (kind == CUPTI_ACTIVITY_KIND_DEVICE && !was && cudasim_fill_device_record(&device)) {
    StageRecord(reinterpret_cast<const CUpti_Activity*>(&device), sizeof(device), 0);
  }
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnableContext(CUcontext /*context*/, CUpti_ActivityKind kind) {
  return cuptiActivityEnable(kind);
}

CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind) {
  EnsureHooks();
  if (kind <= CUPTI_ACTIVITY_KIND_INVALID || kind >= CUPTI_ACTIVITY_KIND_COUNT) {
    return CUPTI_ERROR_INVALID_KIND;
  }
  Cupti().kinds[kind].store(false);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityDisableContext(CUcontext /*context*/, CUpti_ActivityKind kind) {
  return cuptiActivityDisable(kind);
}

CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc funcBufferRequested,
                                           CUpti_BuffersCallbackCompleteFunc funcBufferCompleted) {
  EnsureHooks();
  if (funcBufferRequested == nullptr || funcBufferCompleted == nullptr) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  CuptiState& c = Cupti();
  std::lock_guard<std::mutex> lock(c.stage_mu);
  c.requested = funcBufferRequested;
  c.completed = funcBufferCompleted;
  if (!c.worker_started) {
    c.worker_started = true;
    std::thread worker(Worker);
    g_worker_id = worker.get_id();
    g_worker_pid = getpid();
    worker.detach();  // lives as long as the process, like CUPTI's own thread
  }
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityFlushAll(uint32_t flag) {
  EnsureHooks();
  CuptiState& c = Cupti();
  // Checked before taking stage_mu: a fork child may have inherited it locked.
  pid_t worker_pid = g_worker_pid.load();
  if (worker_pid != 0 && worker_pid != getpid()) return CUPTI_ERROR_NOT_INITIALIZED;
  std::unique_lock<std::mutex> lock(c.stage_mu);
  if (!c.worker_started) return CUPTI_SUCCESS;
  if (std::this_thread::get_id() == g_worker_id) return CUPTI_ERROR_INVALID_OPERATION;
  uint64_t generation = ++c.flush_requested;
  if (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) c.flush_forced = true;
  c.stage_cv.notify_one();
  c.flush_cv.wait(lock, [&] { return c.flush_done >= generation; });
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityFlush(CUcontext /*context*/, uint32_t /*streamId*/, uint32_t flag) {
  return cuptiActivityFlushAll(flag);
}

CUptiResult cuptiActivityFlushPeriod(uint32_t time) {
  EnsureHooks();
  CuptiState& c = Cupti();
  std::lock_guard<std::mutex> lock(c.stage_mu);
  c.period_ms = time;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNextRecord(uint8_t* buffer, size_t validBufferSizeBytes,
                                       CUpti_Activity** record) {
  if (buffer == nullptr || record == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  size_t offset = 0;
  if (*record != nullptr) {
    size_t size = RecordSize((*record)->kind);
    if (size == 0) return CUPTI_ERROR_INVALID_KIND;
    offset = static_cast<size_t>(reinterpret_cast<uint8_t*>(*record) - buffer) + size;
  }
  if (offset + sizeof(CUpti_ActivityKind) > validBufferSizeBytes) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  auto* next = reinterpret_cast<CUpti_Activity*>(buffer + offset);
  size_t size = RecordSize(next->kind);
  if (size == 0) return CUPTI_ERROR_INVALID_KIND;
  if (offset + size > validBufferSizeBytes) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *record = next;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext /*context*/, uint32_t /*streamId*/,
                                              size_t* dropped) {
  EnsureHooks();
  if (dropped == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  CuptiState& c = Cupti();
  std::lock_guard<std::mutex> lock(c.stage_mu);
  *dropped = c.dropped;
  c.dropped = 0;  // reset on read, as CUPTI does
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivitySetAttribute(CUpti_ActivityAttribute attr, size_t* valueSize, void* value) {
  EnsureHooks();
  if (valueSize == nullptr || value == nullptr || attr < 0 || attr >= 16) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  CuptiState& c = Cupti();
  std::lock_guard<std::mutex> lock(c.stage_mu);
  uint64_t v = 0;
  std::memcpy(&v, value, std::min<size_t>(*valueSize, sizeof(v)));
  c.attrs[attr] = v;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetAttribute(CUpti_ActivityAttribute attr, size_t* valueSize, void* value) {
  EnsureHooks();
  if (valueSize == nullptr || value == nullptr || attr < 0 || attr >= 16) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  CuptiState& c = Cupti();
  std::lock_guard<std::mutex> lock(c.stage_mu);
  uint64_t v = c.attrs[attr];
  if (v == 0 && attr == CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE) v = 3200000;
  if (v == 0 && attr == CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT) v = 250;
  std::memcpy(value, &v, std::min<size_t>(*valueSize, sizeof(v)));
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t id) {
  if (kind < 0 || kind >= CUPTI_EXTERNAL_CORRELATION_KIND_SIZE) return CUPTI_ERROR_INVALID_PARAMETER;
  t_external_ids[kind].push_back(id);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                  uint64_t* lastId) {
  if (kind < 0 || kind >= CUPTI_EXTERNAL_CORRELATION_KIND_SIZE) return CUPTI_ERROR_INVALID_PARAMETER;
  if (t_external_ids[kind].empty()) return CUPTI_ERROR_QUEUE_EMPTY;
  if (lastId != nullptr) *lastId = t_external_ids[kind].back();
  t_external_ids[kind].pop_back();
  return CUPTI_SUCCESS;
}

}  // extern "C"
