// CUPTI's buffer callbacks (lock-free, on CUPTI's threads or the application thread that fills a
// buffer) and our parser thread, which decodes completed buffers into GpuBatches for the drain.
// Rules: see session_state.h.
#include <algorithm>
#include <utility>

#include "collector/cupti/session_state.h"

namespace gprof::collector::session {

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) noexcept {
  Session* s = g_session;
  *max_records = 0;  // fill the buffer
  uint8_t* b = s != nullptr ? s->pool.Acquire() : nullptr;
  // Null is allowed since CUPTI API 27: CUPTI drops (and counts) records instead of growing.
  *buffer = b;
  *size = b != nullptr ? s->pool.buffer_size() : 0;
}

void CUPTIAPI BufferCompleted(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t,
                              size_t valid_size) noexcept {
  Session* s = g_session;
  if (s == nullptr) return;
  size_t dropped = 0;
  if (s->api.ActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS) {
    g_dropped.fetch_add(dropped, std::memory_order_relaxed);
  } else {
    g_cupti_errors.fetch_add(1, std::memory_order_relaxed);
  }
  if (buffer != nullptr) s->pool.Complete(buffer, valid_size);
}

void ParserMain(Session* s) {
  std::vector<ActivityBufferPool::Completed> work;
  for (;;) {
    uint32_t generation = s->pool.generation();
    work.clear();
    s->pool.TakeCompleted(&work);
    for (const ActivityBufferPool::Completed& c : work) {
      GpuBatch batch;
      uint64_t errors = 0;
      DecodeBuffer(c.buffer, c.valid_size, s->api.ActivityGetNextRecord, &batch, &errors);
      batch.buffer_bytes = c.valid_size;
      s->pool.Release(c.buffer, c.valid_size);
      if (errors != 0) g_cupti_errors.fetch_add(errors, std::memory_order_relaxed);
      const uint64_t bytes = DecodedBytes(batch);
      {
        std::lock_guard<std::mutex> lock(s->ready_mu);
        s->ready.push_back(std::move(batch));
        s->ready_bytes += bytes;
        s->ready_bytes_peak = std::max(s->ready_bytes_peak, s->ready_bytes);
        if (s->count_decoded) s->pool.SetDecodedBytes(s->ready_bytes);
      }
      s->processed.fetch_add(1, std::memory_order_release);
    }
    if (!work.empty()) continue;
    if (s->stop.load(std::memory_order_acquire)) return;
    s->pool.WaitForWork(generation);
  }
}

}  // namespace gprof::collector::session
