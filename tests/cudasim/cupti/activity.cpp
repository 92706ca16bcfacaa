// Activity API of the stand-in libcupti.so.13. Test-only. Two pipelines (CUDASIM_BUFFER_MODE):
//
// cupti (default), modelled on cupti_activity.h:
//   - A record is written into a tool buffer when it is made. The buffer belongs to the thread that
//     made the record (CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER: "The default value is 1";
//     CUDASIM_PER_THREAD_BUFFERS changes the default) or, with the attribute 0, to the process.
//   - A thread that needs a buffer asks the tool itself, in the CUDA call that made the record
//     (CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER: "CUPTI will zero out the buffer in the main
//     thread"; Kineto's logs show requests on the application thread, pytorch/kineto#1020). With
//     the attribute at its default 0 the stand-in zeroes the buffer there too.
//   - A buffer goes back to the tool only when it is full (and all its records are complete) or a
//     flush returns it. No periodic hand-back of partly filled buffers: cuptiActivityFlushPeriod
//     "Periodic flush can return only those activity buffers which are full and have all the
//     activity records completed"; with no period set, CUPTI's own heuristics wake the worker
//     (the stand-in: every CUDASIM_FLUSH_PERIOD_MS) for full buffers only.
//   - cuptiActivityFlushAll(0) "returns all the activity buffers which have all the activity records
//     completed ... It doesn't return buffers which have one or more incomplete records";
//     CUPTI_ACTIVITY_FLAG_FLUSH_FORCED "returns all the activity buffers including the ones which
//     have one or more incomplete activity records" (CUDA 13.0 cupti_activity.h:7724-7732). With
//     shared buffers and the GPU behind, the current buffer always holds such work: only the
//     forced flush returns it, and it loses that work. An incomplete record is one whose GPU work
//     has not ended ("Activity record is considered as completed if it has all the information
//     filled up including the timestamps"); it comes back with end = 0 (and start = 0 when the work
//     had not started; CUpti_ActivityKernel10::start/end: "A value of 0 for both the start and end
//     timestamps indicates that timestamp information could not be collected") and, being in a
//     returned buffer, is never delivered again (CUDASIM_INCOMPLETE_RECORDS=0: real timestamps).
//   - The completed callback runs on the CUPTI worker thread (cuptiActivityFlushPeriod: CUPTI
//     offloads "delivery of the activity buffers to the client" to its worker thread).
// staged (the stand-in's older model): records wait in one staging queue; the worker requests
// buffers, copies records whose GPU end has passed into them and hands back full buffers; a normal
// flush returns the complete records, a forced flush all of them.
//
// Threads: StageRecord and the API run on application threads; Worker on the CUPTI thread.
// Lock: CuptiState::stage_mu is a leaf lock, released around every call into the tool.
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

#include "tests/cudasim/cupti/cupti_state.h"
#include "tests/cudasim/cupti/record_layouts.h"

namespace gprof::cudasim {
namespace {

constexpr size_t kMaxStaged = size_t{1} << 20;  // beyond this, records are dropped and counted
constexpr size_t kWakeThreshold = 4096;

thread_local std::vector<uint64_t> t_external_ids[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE];
thread_local BufferSlot* t_slot = nullptr;        // this thread's buffer (cupti mode)
thread_local bool t_in_buffer_callback = false;   // inside the tool's buffer-requested callback
std::thread::id g_worker_id;
std::atomic<pid_t> g_worker_pid{0};  // a fork child has no worker: its flushes must not wait for one

// ---- Timestamps of each record kind -------------------------------------------------------------

bool IsGpuKind(CUpti_ActivityKind kind) {
  return kind == CUPTI_ACTIVITY_KIND_KERNEL || kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
         kind == CUPTI_ACTIVITY_KIND_MEMCPY || kind == CUPTI_ACTIVITY_KIND_MEMCPY2 ||
         kind == CUPTI_ACTIVITY_KIND_MEMSET;
}

struct TimeFields {
  size_t start = 0, end = 0, extra = 0;  // byte offsets; 0 = no such field (kind is at offset 0)
};

// The one list of timestamp fields per kind, used for the clock, the skew and incomplete records.
TimeFields FieldsOf(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      return {offsetof(layout::HandedKernel, start), offsetof(layout::HandedKernel, end),
              offsetof(layout::HandedKernel, completed)};
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      return {offsetof(CUpti_ActivityMemcpy6, start), offsetof(CUpti_ActivityMemcpy6, end), 0};
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
      return {offsetof(CUpti_ActivityMemcpyPtoP4, start), offsetof(CUpti_ActivityMemcpyPtoP4, end), 0};
    case CUPTI_ACTIVITY_KIND_MEMSET:
      return {offsetof(CUpti_ActivityMemset4, start), offsetof(CUpti_ActivityMemset4, end), 0};
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
    case CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API:
      return {offsetof(CUpti_ActivityAPI, start), offsetof(CUpti_ActivityAPI, end), 0};
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      return {offsetof(CUpti_ActivitySynchronization2, start),
              offsetof(CUpti_ActivitySynchronization2, end), 0};
    case CUPTI_ACTIVITY_KIND_OVERHEAD:
      return {offsetof(CUpti_ActivityOverhead3, start), offsetof(CUpti_ActivityOverhead3, end), 0};
    case CUPTI_ACTIVITY_KIND_MEMORY2: return {offsetof(CUpti_ActivityMemory4, timestamp), 0, 0};
    default: return {};
  }
}

uint64_t Load64(const uint8_t* p, size_t off) {
  uint64_t v;
  std::memcpy(&v, p + off, sizeof(v));
  return v;
}

void Store64(uint8_t* p, size_t off, uint64_t v) { std::memcpy(p + off, &v, sizeof(v)); }

CUpti_ActivityKind KindOf(const uint8_t* bytes) {
  CUpti_ActivityKind kind;
  std::memcpy(&kind, bytes, sizeof(kind));
  return kind;
}

// "Another tool" registered a timestamp callback (CUDASIM_TIMESTAMP_CALLBACK=tsc): nanoseconds of
// a TSC-like counter since boot, far from CUPTI's default CLOCK_REALTIME.
uint64_t CUPTIAPI OtherToolTscNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

CUpti_TimestampCallbackFunc TimestampFn() {
  CUpti_TimestampCallbackFunc fn = Cupti().timestamp_fn.load(std::memory_order_acquire);
  if (fn == nullptr && cudasim_knobs()->timestamp_clock == kClockTsc) fn = OtherToolTscNs;
  return fn;
}

// Record timestamps as CUPTI reports them: GPU ones shifted by CUDASIM_GPU_SKEW_NS (GPU times are
// interpolated into CPU time, cuptiActivityRegisterTimestampCallback's comment), then all of them
// in the clock of a registered timestamp callback, if any.
// The offset from CLOCK_REALTIME to the records' clock, read once per record so that durations
// within a record are exact.
int64_t RecordClockOffset() {
  CUpti_TimestampCallbackFunc fn = TimestampFn();
  if (fn == nullptr) return 0;  // CUPTI's default on Linux: CLOCK_REALTIME
  return static_cast<int64_t>(fn()) - static_cast<int64_t>(cudasim_now_ns());
}

void ConvertTimestamps(uint8_t* bytes) {
  CUpti_ActivityKind kind = KindOf(bytes);
  TimeFields f = FieldsOf(kind);
  if (f.start == 0 && f.end == 0) return;
  int64_t shift = RecordClockOffset() + (IsGpuKind(kind) ? cudasim_knobs()->gpu_skew_ns : 0);
  for (size_t off : {f.start, f.end, f.extra}) {
    if (off == 0) continue;
    uint64_t v = Load64(bytes, off);
    if (v == 0) continue;  // CUPTI_TIMESTAMP_UNKNOWN stays unknown
    Store64(bytes, off, static_cast<uint64_t>(static_cast<int64_t>(v) + shift));
  }
}

// A GPU record returned before its work ended: no end (and no start if it had not started).
void MarkIncomplete(uint8_t* bytes, uint64_t start_rt_ns, uint64_t now) {
  TimeFields f = FieldsOf(KindOf(bytes));
  if (f.end != 0) Store64(bytes, f.end, 0);
  if (f.extra != 0) Store64(bytes, f.extra, CUPTI_TIMESTAMP_UNKNOWN);
  if (f.start != 0 && start_rt_ns > now) Store64(bytes, f.start, 0);
}

// ---- cupti mode ---------------------------------------------------------------------------------

bool PerThreadBuffersLocked(const CuptiState& c) {
  constexpr int kAttr = CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER;
  return c.attr_set[kAttr] ? c.attrs[kAttr] != 0 : cudasim_knobs()->per_thread_buffers;
}

BufferSlot* SlotLocked(CuptiState& c) {
  if (!PerThreadBuffersLocked(c)) return &c.shared_slot;
  if (t_slot == nullptr) {
    t_slot = new BufferSlot();  // never freed: see CuptiState::thread_slots
    c.thread_slots.push_back(t_slot);
  }
  return t_slot;
}

void Append(ToolBuffer& b, const uint8_t* bytes, size_t size, uint64_t complete_ns,
            uint64_t start_rt_ns) {
  std::memcpy(b.data + b.valid, bytes, size);
  if (IsGpuKind(KindOf(bytes))) b.gpu.push_back({b.valid, complete_ns, start_rt_ns});
  b.valid += size;
  ++b.records;
  b.complete_ns = std::max(b.complete_ns, complete_ns);
}

bool Fits(const ToolBuffer& b, size_t size) {
  return b.valid + size <= b.size && (b.max_records == 0 || b.records < b.max_records);
}

// Asks the tool for a buffer for `slot`, on this thread, without stage_mu. False (the caller drops
// the record) when the tool refuses or CUDASIM_MAX_BUFFERS is used up.
bool RequestBufferLocked(CuptiState& c, BufferSlot* slot, std::unique_lock<std::mutex>& lock,
                         size_t need) {
  const CudasimKnobs* knobs = cudasim_knobs();
  if (knobs->max_buffers != 0 && c.buffers_requested >= knobs->max_buffers) return false;
  ++c.buffers_requested;
  slot->requesting = true;
  CUpti_BuffersCallbackRequestFunc requested = c.requested;
  constexpr int kZeroed = CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER;
  const bool zero_it = !(c.attr_set[kZeroed] && c.attrs[kZeroed] != 0);
  lock.unlock();
  uint8_t* buf = nullptr;
  size_t size = 0, max_records = 0;
  uint64_t t0 = cudasim_now_ns();
  t_in_buffer_callback = true;
  requested(&buf, &size, &max_records);
  t_in_buffer_callback = false;
  if (buf != nullptr && zero_it) std::memset(buf, 0, size);
  uint64_t t1 = cudasim_now_ns();
  // The OVERHEAD record of this request, built before stage_mu is taken again (a registered
  // timestamp callback is the tool's code).
  const bool overhead = c.kinds[CUPTI_ACTIVITY_KIND_OVERHEAD].load(std::memory_order_relaxed);
  alignas(8) CUpti_ActivityOverhead3 rec{};
  if (overhead) {
    rec.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
    rec.overheadKind = CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST;
    rec.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    rec.objectId.pt.processId = static_cast<uint32_t>(getpid());
    rec.objectId.pt.threadId = CurrentThreadId();
    rec.start = t0;
    rec.end = t1;
    ConvertTimestamps(reinterpret_cast<uint8_t*>(&rec));
  }
  lock.lock();
  slot->requesting = false;
  c.request_cv.notify_all();
  if (buf == nullptr || size < need) {  // the tool refused: drop, as CUPTI does
    if (overhead) ++c.dropped;
    return false;
  }
  slot->buffer = ToolBuffer{};
  slot->buffer.data = buf;
  slot->buffer.size = size;
  slot->buffer.max_records = max_records;
  slot->has_buffer = true;
  if (overhead && Fits(slot->buffer, sizeof(rec) + need)) {
    Append(slot->buffer, reinterpret_cast<const uint8_t*>(&rec), sizeof(rec), t1, 0);
  }
  return true;
}

// `replayed`: a record kept from before cuptiActivityRegisterCallbacks, counted when it was made.
void WriteRecord(const uint8_t* bytes, size_t size, uint64_t complete_ns, uint64_t start_rt_ns,
                 bool replayed = false) {
  CuptiState& c = Cupti();
  std::unique_lock<std::mutex> lock(c.stage_mu);
  if (!replayed) {
    ++c.records_seen;
    uint64_t every = cudasim_knobs()->drop_every;
    // A record made inside the tool's own buffer-requested callback has no buffer to go to.
    if ((every != 0 && c.records_seen % every == 0) || t_in_buffer_callback) {
      ++c.dropped;
      return;
    }
    // Fault CUDASIM_SIGNAL_IN_CUPTI: a signal delivered to a thread while it is inside CUPTI
    // holding CUPTI's lock (here the activity lock, stage_mu, as a record is written). Its
    // handler runs on this thread with the lock held, so every CUPTI call that needs the lock
    // (flushes, dropped-record counts, attributes, other threads' records) waits until the
    // handler returns; a handler that waits for a flush of CUPTI waits on itself.
    if (c.records_seen == cudasim_knobs()->signal_at_record) {
      ::raise(cudasim_knobs()->signal_in_cupti);
    }
  }
  if (c.requested == nullptr) {  // no buffer callbacks yet: kept for the first registration
    if (c.unregistered.size() >= kMaxStaged) {
      ++c.dropped;
      return;
    }
    StagedRecord& r = c.unregistered.emplace_back();
    r.complete_ns = complete_ns;
    r.start_rt_ns = start_rt_ns;
    r.size = static_cast<uint32_t>(size);
    std::memcpy(r.bytes, bytes, size);
    return;
  }
  BufferSlot* slot = SlotLocked(c);
  for (;;) {
    if (slot->has_buffer) {
      if (Fits(slot->buffer, size)) break;
      c.full.push_back(std::move(slot->buffer));  // full: back to the tool once complete
      slot->buffer = ToolBuffer{};
      slot->has_buffer = false;
      c.worker_wake = true;
      c.stage_cv.notify_one();
    }
    if (slot->requesting) {  // the shared slot: another thread is asking the tool
      c.request_cv.wait(lock);
      continue;
    }
    if (!RequestBufferLocked(c, slot, lock, size)) {
      ++c.dropped;
      return;
    }
  }
  Append(slot->buffer, bytes, size, complete_ns, start_rt_ns);
  if (slot->buffer.max_records != 0 && slot->buffer.records >= slot->buffer.max_records) {
    c.full.push_back(std::move(slot->buffer));
    slot->buffer = ToolBuffer{};
    slot->has_buffer = false;
    c.worker_wake = true;
    c.stage_cv.notify_one();
  }
}

// Moves the buffers a flush returns to the worker's queue. Caller holds stage_mu.
void TakeForFlushLocked(CuptiState& c, bool forced, uint64_t now) {
  auto take = [&](ToolBuffer&& b) {
    if (forced && cudasim_knobs()->incomplete_records) {
      for (const GpuRecordRef& r : b.gpu) {
        if (r.complete_ns > now) MarkIncomplete(b.data + r.offset, r.start_rt_ns, now);
      }
    }
    c.to_return.push_back(std::move(b));
  };
  std::vector<BufferSlot*> slots = c.thread_slots;
  slots.push_back(&c.shared_slot);
  for (BufferSlot* slot : slots) {
    if (!slot->has_buffer) continue;
    ToolBuffer& b = slot->buffer;
    if (forced || (b.records > 0 && b.complete_ns <= now)) {
      take(std::move(b));
      slot->buffer = ToolBuffer{};
      slot->has_buffer = false;
    }
  }
  for (auto it = c.full.begin(); it != c.full.end();) {
    if (forced || it->complete_ns <= now) {
      take(std::move(*it));
      it = c.full.erase(it);
    } else {
      ++it;
    }
  }
}

// Worker: returns the buffers a flush took and the full buffers whose records are all complete.
void ReturnBuffersLocked(CuptiState& c, std::unique_lock<std::mutex>& lock) {
  std::vector<ToolBuffer> out(std::make_move_iterator(c.to_return.begin()),
                              std::make_move_iterator(c.to_return.end()));
  c.to_return.clear();
  uint64_t now = cudasim_now_ns();
  for (auto it = c.full.begin(); it != c.full.end();) {
    if (it->complete_ns <= now) {
      out.push_back(std::move(*it));
      it = c.full.erase(it);
    } else {
      ++it;
    }
  }
  if (out.empty()) return;
  // Whoever is registered now gets them, also buffers an earlier registration handed out.
  CUpti_BuffersCallbackCompleteFunc completed = c.completed;
  lock.unlock();
  for (const ToolBuffer& b : out) completed(nullptr, 0, b.data, b.size, b.valid);
  lock.lock();
}

// ---- staged mode --------------------------------------------------------------------------------

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

void StagedPassLocked(CuptiState& c, std::unique_lock<std::mutex>& lock, bool flushing, bool forced) {
  for (int round = 0; round < 2; ++round) {  // round 2 picks up overhead records of round 1
    uint64_t now = cudasim_now_ns();
    std::vector<StagedRecord> take;
    std::deque<StagedRecord> keep;
    for (StagedRecord& r : c.staged) {
      if (forced || r.complete_ns <= now) {
        if (r.complete_ns > now && cudasim_knobs()->incomplete_records) {
          MarkIncomplete(r.bytes, r.start_rt_ns, now);
        }
        take.push_back(r);
      } else {
        keep.push_back(r);
      }
    }
    c.staged.swap(keep);
    if (take.empty() && (round > 0 || !flushing || g_buffer == nullptr)) break;
    if (c.requested == nullptr || c.completed == nullptr) break;
    lock.unlock();
    Deliver(c, take, flushing);
    lock.lock();
    if (!flushing) break;
  }
}

void Worker() {
  CuptiState& c = Cupti();
  std::unique_lock<std::mutex> lock(c.stage_mu);
  while (!c.stop) {
    uint64_t period = c.period_ms != 0 ? c.period_ms : cudasim_knobs()->flush_period_ms;
    c.stage_cv.wait_for(lock, std::chrono::milliseconds(period), [&] {
      return c.stop || c.worker_wake || c.flush_requested != c.flush_done ||
             c.staged.size() >= kWakeThreshold;
    });
    c.worker_wake = false;
    bool flushing = c.flush_requested != c.flush_done;
    uint64_t generation = c.flush_requested;
    bool forced = c.flush_forced;
    ReturnBuffersLocked(c, lock);
    if (!c.staged.empty() || flushing) StagedPassLocked(c, lock, flushing, forced);
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

uint64_t ToRecordClock(uint64_t realtime_ns) {
  return static_cast<uint64_t>(static_cast<int64_t>(realtime_ns) + RecordClockOffset());
}

void StageRecord(const CUpti_Activity* record, size_t size, uint64_t complete_ns) {
  CuptiState& c = Cupti();
  if (size > kMaxRecordBytes) {
    std::lock_guard<std::mutex> lock(c.stage_mu);
    ++c.dropped;
    return;
  }
  alignas(8) uint8_t bytes[kMaxRecordBytes];
  std::memcpy(bytes, record, size);
  size = WidenToPlayedLayout(bytes, size, kMaxRecordBytes);  // CUDASIM_CUPTI_VERSION's layout
  TimeFields f = FieldsOf(record->kind);
  uint64_t start_rt = IsGpuKind(record->kind) && f.start != 0 ? Load64(bytes, f.start) : 0;
  ConvertTimestamps(bytes);
  if (cudasim_knobs()->buffer_mode == kCuptiBuffers) {
    WriteRecord(bytes, size, complete_ns, start_rt);
    return;
  }
  std::lock_guard<std::mutex> lock(c.stage_mu);
  ++c.records_seen;
  uint64_t every = cudasim_knobs()->drop_every;
  if ((every != 0 && c.records_seen % every == 0) || c.staged.size() >= kMaxStaged) {
    ++c.dropped;
    return;
  }
  StagedRecord& r = c.staged.emplace_back();
  r.complete_ns = complete_ns;
  r.start_rt_ns = start_rt;
  r.size = static_cast<uint32_t>(size);
  std::memcpy(r.bytes, bytes, size);
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

size_t RecordSize(CUpti_ActivityKind kind) { return PlayedRecordSize(kind, Size130(kind)); }

// The CUDA 13.0 record size of a kind (record_layouts.h widens some for later versions).
size_t Size130(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return layout::kKernel10Size;
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
#if CUPTI_API_VERSION >= 130000
    case CUPTI_ACTIVITY_KIND_MARKER_DATA: return sizeof(CUpti_ActivityMarkerData2);
#else  // CUDA 12.8's newest: MarkerData (MarkerData2 is 13.0's)
    case CUPTI_ACTIVITY_KIND_MARKER_DATA: return sizeof(CUpti_ActivityMarkerData);
#endif
    case CUPTI_ACTIVITY_KIND_CONTEXT: return sizeof(CUpti_ActivityContext3);
    case CUPTI_ACTIVITY_KIND_NAME: return sizeof(CUpti_ActivityName);
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE: return sizeof(CUpti_ActivityGraphTrace2);
    default: return 0;
  }
}

}  // namespace gprof::cudasim

using namespace gprof::cudasim;

extern "C" {

// Device records are emitted at driver initialization (the context creation here) and "can only
// be retrieved by the user if CUPTI is attached before CUDA initialization"; enabling DEVICE
// later gives none (cupti_activity.h, cuptiActivityEnableAndDump).
CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind) {
  EnsureHooks();
  if (kind <= CUPTI_ACTIVITY_KIND_INVALID || kind >= CUPTI_ACTIVITY_KIND_COUNT) {
    return CUPTI_ERROR_INVALID_KIND;
  }
  Cupti().kinds[kind].store(true);
  return CUPTI_SUCCESS;
}

// As cuptiActivityEnable, and "for CUPTI_ACTIVITY_KIND_DEVICE, existing device records are
// dumped" (cupti_activity.h): the late-attach way to learn the devices. The records go to the
// registered buffer callbacks; without them the kind is enabled and nothing is dumped. The
// stand-in dumps DEVICE only (the kinds gprof-run asks for); CONTEXT/STREAM/NVLINK/PCIE dumps are
// not modelled.
CUptiResult cuptiActivityEnableAndDump(CUpti_ActivityKind kind) {
  EnsureHooks();
  const CUptiResult rc = cuptiActivityEnable(kind);
  CUpti_ActivityDevice5 device{};
  if (rc == CUPTI_SUCCESS && kind == CUPTI_ACTIVITY_KIND_DEVICE &&
      cudasim_fill_device_record(&device)) {
    StageRecord(reinterpret_cast<const CUpti_Activity*>(&device), sizeof(device), 0);
  }
  return rc;
}

CUptiResult cuptiActivityEnableContext(CUcontext /*context*/, CUpti_ActivityKind kind) {
  EnsureHooks();
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
  EnsureHooks();
  return cuptiActivityDisable(kind);
}

CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc funcBufferRequested,
                                           CUpti_BuffersCallbackCompleteFunc funcBufferCompleted) {
  EnsureHooks();
  if (funcBufferRequested == nullptr || funcBufferCompleted == nullptr) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  CuptiState& c = Cupti();
  std::deque<StagedRecord> early;
  {
    // No subscriber or handle parameter: the buffer callbacks are the process's, and a second
    // registration (another tool in the process) replaces the first one's; buffers the first tool
    // handed out are then returned to the second (ReturnBuffersLocked).
    std::lock_guard<std::mutex> lock(c.stage_mu);
    c.requested = funcBufferRequested;
    c.completed = funcBufferCompleted;
    early.swap(c.unregistered);
    if (!c.worker_started) {
      c.worker_started = true;
      std::thread worker(Worker);
      g_worker_id = worker.get_id();
      g_worker_pid = getpid();
      worker.detach();  // lives as long as the process, like CUPTI's own thread
    }
  }
  for (const StagedRecord& r : early) WriteRecord(r.bytes, r.size, r.complete_ns, r.start_rt_ns, true);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityFlushAll(uint32_t flag) {
  EnsureHooks();
  CuptiState& c = Cupti();
  // Checked before taking stage_mu: a fork child may have inherited it locked.
  pid_t worker_pid = g_worker_pid.load();
  if (worker_pid != 0 && worker_pid != getpid()) return CUPTI_ERROR_NOT_INITIALIZED;
  if (t_in_buffer_callback) return CUPTI_ERROR_INVALID_OPERATION;
  std::unique_lock<std::mutex> lock(c.stage_mu);
  if (std::this_thread::get_id() == g_worker_id) return CUPTI_ERROR_INVALID_OPERATION;
  const bool forced = (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != 0;
  if (cudasim_knobs()->buffer_mode == kCuptiBuffers) {
    // "CUPTI_ERROR_INVALID_OPERATION if not preceded by a successful call to
    // cuptiActivityRegisterCallbacks" (cupti_activity.h).
    if (c.requested == nullptr || !c.worker_started) return CUPTI_ERROR_INVALID_OPERATION;
    TakeForFlushLocked(c, forced, cudasim_now_ns());
  } else {
    if (!c.worker_started) return CUPTI_SUCCESS;
    if (forced) c.flush_forced = true;
  }
  uint64_t generation = ++c.flush_requested;
  c.stage_cv.notify_one();
  c.flush_cv.wait(lock, [&] { return c.flush_done >= generation; });
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityFlush(CUcontext /*context*/, uint32_t /*streamId*/, uint32_t flag) {
  EnsureHooks();
  return cuptiActivityFlushAll(flag);
}

// "Setting time to zero disables the periodic flush and restores the default behavior"; either way
// the worker returns only full buffers whose records are complete (see the top of this file).
CUptiResult cuptiActivityFlushPeriod(uint32_t time) {
  EnsureHooks();
  CuptiState& c = Cupti();
  std::lock_guard<std::mutex> lock(c.stage_mu);
  c.period_ms = time;
  c.stage_cv.notify_one();
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc funcTimestamp) {
  EnsureHooks();
  if (funcTimestamp == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  Cupti().timestamp_fn.store(funcTimestamp, std::memory_order_release);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNextRecord(uint8_t* buffer, size_t validBufferSizeBytes,
                                       CUpti_Activity** record) {
  EnsureHooks();  // CheckAlive (misc.cpp: after libcupti's static destructors), RequireDriver
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
  if (valueSize == nullptr || value == nullptr || attr < 0 || attr >= kMaxAttr) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  CuptiState& c = Cupti();
  std::lock_guard<std::mutex> lock(c.stage_mu);
  uint64_t v = 0;
  std::memcpy(&v, value, std::min<size_t>(*valueSize, sizeof(v)));
  c.attrs[attr] = v;
  c.attr_set[attr] = true;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetAttribute(CUpti_ActivityAttribute attr, size_t* valueSize, void* value) {
  EnsureHooks();
  if (valueSize == nullptr || value == nullptr || attr < 0 || attr >= kMaxAttr) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  CuptiState& c = Cupti();
  std::lock_guard<std::mutex> lock(c.stage_mu);
  uint64_t v = c.attrs[attr];
  if (!c.attr_set[attr]) {  // the defaults cupti_activity.h gives for each attribute
    if (attr == CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE) v = 3200000;
    if (attr == CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT) v = 250;
    if (attr == CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER) v = PerThreadBuffersLocked(c) ? 1 : 0;
  }
  std::memcpy(value, &v, std::min<size_t>(*valueSize, sizeof(v)));
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t id) {
  EnsureHooks();
  if (kind < 0 || kind >= CUPTI_EXTERNAL_CORRELATION_KIND_SIZE) return CUPTI_ERROR_INVALID_PARAMETER;
  t_external_ids[kind].push_back(id);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                  uint64_t* lastId) {
  EnsureHooks();
  if (kind < 0 || kind >= CUPTI_EXTERNAL_CORRELATION_KIND_SIZE) return CUPTI_ERROR_INVALID_PARAMETER;
  if (t_external_ids[kind].empty()) return CUPTI_ERROR_QUEUE_EMPTY;
  if (lastId != nullptr) *lastId = t_external_ids[kind].back();
  t_external_ids[kind].pop_back();
  return CUPTI_SUCCESS;
}

}  // extern "C"
