// Native call stacks on selected CUDA API calls (GPROF_BACKTRACE, docs/STACKS.md).
//
// Threads: CaptureNativeStack runs on any application thread inside the CUPTI API callback (hot
// path: no allocation, lock, logging, exception or I/O). WarmNativeStack runs once at init (cold).
//
// Mechanism: libgcc's _Unwind_Backtrace (.eh_frame), not frame pointers. The walk starts inside
// CUPTI's callback, under libcupti and libcudart frames that NVIDIA builds without frame
// pointers, so a frame-pointer walk usually stops there before it reaches the program. .eh_frame
// is present in every x86-64 module (the ABI requires it), so the unwinder is exact through them.
// Its costs: it reads the FDE of every frame (about 10x a frame-pointer step; bench figure 13),
// and it finds a PC's module through _dl_find_object (glibc >= 2.35 with libgcc >= 12: lock-free,
// no allocation), or on older systems through dl_iterate_phdr, which takes the loader's lock (a
// CUDA call made while another thread runs dlopen then waits for it). WarmNativeStack runs one
// walk at init so that the lazy binding of _Unwind_* and libgcc_s's own one-time setup happen
// there and not in the first API call.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>

#include "collector/host/thread_buffer.h"
#include "model/profile.h"
#include "model/records.h"

namespace gprof::collector {

// Fills `pcs` with up to `max` return addresses of the calling thread, innermost first, starting
// `skip` frames above the caller of CaptureNativeStack (skip 0: the caller's own PC comes
// first). Returns how many were written. Never inline: its own frame is skipped by count.
__attribute__((noinline)) uint32_t CaptureNativeStack(uint64_t* pcs, uint32_t max,
                                                      uint32_t skip) noexcept;

// One walk at init (cold), see above.
void WarmNativeStack();

// Layout of HostRecordType::kApiStack: the 4 type-specific bytes are the call's correlation id,
// then the call's start (host ticks, thread_buffer.h's timestamp at offset 8), then the PCs.
struct ApiStackHeader {
  HostRecordHeader header;
  uint32_t correlation_id;
  uint64_t start;
};
static_assert(sizeof(ApiStackHeader) == 16);

// Stack records written and dropped (monotonic; the builder reports deltas per profile).
extern std::atomic<uint64_t> g_api_stacks_captured;
extern std::atomic<uint64_t> g_api_stacks_dropped;

// Hot path: captures the calling thread's stack and appends it right after the API call's record
// (same thread, same buffer). The first PC kept is the return address `skip` frames above the
// caller's own (skip 1: the caller's caller). Always inlined, so that it adds no frame to skip.
// A full buffer drops the stack and counts it.
__attribute__((always_inline)) inline void AppendApiStackRecord(uint32_t correlation_id, uint64_t start, uint32_t skip) noexcept {
  uint64_t pcs[kMaxStackDepth];
  const uint32_t n = CaptureNativeStack(pcs, kMaxStackDepth, skip);
  if (n == 0) return;
  const uint32_t payload =
      static_cast<uint32_t>(sizeof(ApiStackHeader) - sizeof(HostRecordHeader)) + n * 8;
  const uint32_t bytes = HostRecordBytes(payload);
  char* at = ReserveHostRecord(bytes);
  if (at == nullptr) {
    g_api_stacks_dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  ApiStackHeader h;
  h.header = HostRecordHeader{static_cast<uint16_t>(payload), HostRecordType::kApiStack, 0};
  h.correlation_id = correlation_id;
  h.start = start;
  std::memcpy(at, &h, sizeof h);
  std::memcpy(at + sizeof h, pcs, n * 8);
  PublishHostRecord(at, bytes);
  g_api_stacks_captured.fetch_add(1, std::memory_order_relaxed);
}

// Cold: decodes a visited kApiStack payload. False when malformed.
inline bool ReadApiStackRecord(const void* payload, uint32_t size, uint32_t* correlation_id,
                               const uint64_t** pcs, uint32_t* depth) {
  constexpr uint32_t kFixed = sizeof(ApiStackHeader) - sizeof(HostRecordHeader);
  if (size < kFixed + 8 || (size - kFixed) % 8 != 0 || (size - kFixed) / 8 > kMaxStackDepth) {
    return false;
  }
  std::memcpy(correlation_id, payload, 4);
  *pcs = reinterpret_cast<const uint64_t*>(static_cast<const char*>(payload) + kFixed);
  *depth = (size - kFixed) / 8;
  return true;
}

// Cold (profile build): the process's loaded ELF modules (dl_iterate_phdr), with build ids.
void CollectModules(Profile* profile);

}  // namespace gprof::collector
