// Layout of the CUDA API host record (thread_buffer.h HostRecordType::kApiCall): what the CUPTI
// API callback writes on the calling thread and what profile_builder turns back into a
// gprof::ApiCall (model/records.h). The thread is implied by the buffer the record sits in.
//
// Threads: AppendApiRecord runs on any thread that calls CUDA, inside the CUPTI API callback (hot
// path: no allocation, lock, logging, exception); ReadApiRecord runs on the cold builder thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "collector/host/thread_buffer.h"
#include "model/records.h"

namespace gprof::collector {

// ApiCall::flags bit the API callback sets besides model/records.h's ApiCallFlags: a copy of 0
// bytes, a memset of 0 elements or a host-to-host copy, as the callback read its parameters. The
// GPU does nothing, CUPTI may write no record for it, and nothing awaits one (CallMakesGpuWork).
inline constexpr uint8_t kApiCallNoGpuWork = 4;

struct ApiHostRecord {
  HostRecordHeader header;
  uint32_t correlation_id;  // CUPTI correlation id
  uint64_t start;           // host clock ticks (host_clock.h)
  uint64_t end;
  int32_t return_code;      // cudaError_t / CUresult
  uint16_t cbid;
  ApiDomain domain;
  uint8_t flags;            // ApiCallFlags (kApiCallCaptured), kApiCallNoGpuWork
};
static_assert(sizeof(ApiHostRecord) == 32);
static_assert(offsetof(ApiHostRecord, start) == 8);  // thread_buffer.h: timestamp at offset 8

inline constexpr uint32_t kApiRecordPayload =
    static_cast<uint32_t>(sizeof(ApiHostRecord) - sizeof(HostRecordHeader));

// Appends one API record to the calling thread's buffer (false: dropped and counted).
inline bool AppendApiRecord(uint64_t start, uint64_t end, uint32_t correlation_id, uint16_t cbid,
                            ApiDomain domain, int32_t return_code, uint8_t flags = 0) noexcept {
  char* at = ReserveHostRecord(sizeof(ApiHostRecord));
  if (at == nullptr) return false;
  ApiHostRecord r;
  r.header = HostRecordHeader{kApiRecordPayload, HostRecordType::kApiCall, 0};
  r.correlation_id = correlation_id;
  r.start = start;
  r.end = end;
  r.return_code = return_code;
  r.cbid = cbid;
  r.domain = domain;
  r.flags = flags;
  std::memcpy(at, &r, sizeof r);
  PublishHostRecord(at, sizeof(ApiHostRecord));
  return true;
}

// Cold: decodes a visited kApiCall payload. Timestamps stay in ticks. False when malformed.
inline bool ReadApiRecord(const void* payload, uint32_t size, ApiHostRecord* r) {
  if (size < kApiRecordPayload) return false;
  std::memcpy(reinterpret_cast<char*>(r) + sizeof(HostRecordHeader), payload, kApiRecordPayload);
  return true;
}

}  // namespace gprof::collector
