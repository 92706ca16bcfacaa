// Layouts of the NVTX host records (thread_buffer.h HostRecordType kNvtx*): what the NVTX hooks
// write on the program's threads and what profile_builder reads back at window end/exit.
//
// Threads: Write*/Append* run on any application thread inside NVTX hooks (hot path: no
// allocation, lock, logging, exception); Read* run on the one cold builder thread.
//
// Begin (push, range start, mark), 16 B + optional parts + name, padded to 8:
//   [header 4][u16 domain][u16 0][u64 ts]  [u64 range id: kNvtxStart only]
//   [u32 category: flag kNvtxHasCategory] [u32 registered id: encoding kRegistered] [name bytes]
// End (pop, range end), 16 B (24 with the range id of kNvtxEnd):
//   [header 4][u16 domain][u16 0][u64 ts]  [u64 range id: kNvtxEnd only]
// The header's flags hold the name encoding (low 2 bits) and kNvtxHasCategory.
#pragma once

#include <cstdint>
#include <cstring>

#include "collector/host/thread_buffer.h"

namespace gprof::collector {

// How the inline name bytes after a begin record's fixed part are encoded.
enum class NvtxNameEncoding : uint8_t {
  kUtf8 = 0,        // ASCII / UTF-8 bytes (no terminator)
  kWide = 1,        // raw wchar_t units (UTF-32 on Linux); converted to UTF-8 by the builder
  kRegistered = 2,  // no inline bytes: a u32 registered-string id from NvtxRegistry follows
  kNone = 3,        // no message in the event attributes
};

inline constexpr uint8_t kNvtxEncodingMask = 0x3;
inline constexpr uint8_t kNvtxHasCategory = 0x4;
// A PyTorch op range that came through ITT (itt_hooks.h), not NVTX: the builder marks it
// kRangeTorch. Its name is a registered string (encoding kRegistered).
inline constexpr uint8_t kNvtxTorchOp = 0x8;

// The fixed part of both begin and end records.
struct NvtxRecordFixed {
  HostRecordHeader header;
  uint16_t domain;  // NvtxRegistry domain index (0 = default domain)
  uint16_t pad0;
  uint64_t ts;      // host clock ticks (host_clock.h)
};
static_assert(sizeof(NvtxRecordFixed) == 16);

inline constexpr bool NvtxHasRangeId(HostRecordType type) {
  return type == HostRecordType::kNvtxStart || type == HostRecordType::kNvtxEnd;
}

// Payload bytes (after the header) of a begin record without its name bytes.
constexpr uint32_t NvtxBeginFixedPayload(HostRecordType type, bool has_category,
                                         NvtxNameEncoding encoding) {
  return static_cast<uint32_t>(sizeof(NvtxRecordFixed) - sizeof(HostRecordHeader)) +
         (NvtxHasRangeId(type) ? 8u : 0u) + (has_category ? 4u : 0u) +
         (encoding == NvtxNameEncoding::kRegistered ? 4u : 0u);
}

struct NvtxBeginFields {
  uint64_t ts = 0;
  uint64_t id = 0;          // range id (kNvtxStart); 0 otherwise
  uint32_t category = 0;    // 0 = none
  uint32_t registered = 0;  // registered string id when encoding == kRegistered
  uint16_t domain = 0;
  NvtxNameEncoding encoding = NvtxNameEncoding::kNone;
  bool torch_op = false;    // kNvtxTorchOp
};

// Writes a begin record's header and fixed part (everything but the `name_len` name bytes, which
// go at `at` + 4 + NvtxBeginFixedPayload(...)) at `at`. Returns the payload size.
inline uint32_t WriteNvtxBeginFixed(char* at, HostRecordType type, const NvtxBeginFields& f,
                                    uint32_t name_len) noexcept {
  const bool has_category = f.category != 0;
  const uint32_t fixed = NvtxBeginFixedPayload(type, has_category, f.encoding);
  const uint32_t payload = fixed + name_len;
  NvtxRecordFixed r;
  r.header = HostRecordHeader{static_cast<uint16_t>(payload), type,
                              static_cast<uint8_t>(static_cast<uint8_t>(f.encoding) |
                                                   (has_category ? kNvtxHasCategory : 0) |
                                                   (f.torch_op ? kNvtxTorchOp : 0))};
  r.domain = f.domain;
  r.pad0 = 0;
  r.ts = f.ts;
  std::memcpy(at, &r, sizeof r);
  char* p = at + sizeof r;
  if (NvtxHasRangeId(type)) {
    std::memcpy(p, &f.id, 8);
    p += 8;
  }
  if (has_category) {
    std::memcpy(p, &f.category, 4);
    p += 4;
  }
  if (f.encoding == NvtxNameEncoding::kRegistered) std::memcpy(p, &f.registered, 4);
  return payload;
}

// Writes a whole begin record with `name_len` name bytes at `at` (HostRecordBytes(payload) bytes,
// where payload = NvtxBeginFixedPayload(...) + name_len). Returns the payload size.
inline uint32_t WriteNvtxBegin(char* at, HostRecordType type, const NvtxBeginFields& f,
                               const void* name, uint32_t name_len) noexcept {
  const uint32_t payload = WriteNvtxBeginFixed(at, type, f, name_len);
  if (name_len != 0) {
    std::memcpy(at + sizeof(HostRecordHeader) + (payload - name_len), name, name_len);
  }
  return payload;
}

// Writes an end record (16 B, or 24 with the range id of kNvtxEnd) at `at`.
inline void WriteNvtxEnd(char* at, HostRecordType type, uint16_t domain, uint64_t ts,
                         uint64_t id) noexcept {
  const bool has_id = NvtxHasRangeId(type);
  NvtxRecordFixed r;
  r.header = HostRecordHeader{static_cast<uint16_t>(sizeof r - sizeof(HostRecordHeader) +
                                                    (has_id ? 8 : 0)),
                              type, 0};
  r.domain = domain;
  r.pad0 = 0;
  r.ts = ts;
  std::memcpy(at, &r, sizeof r);
  if (has_id) std::memcpy(at + sizeof r, &id, 8);
}

// Hot path: appends a begin record (push, start or mark) to the calling thread's buffer, written
// in place. False when dropped (counted).
inline bool AppendNvtxBegin(HostRecordType type, const NvtxBeginFields& f, const void* name,
                            uint32_t name_len) noexcept {
  const uint32_t bytes =
      HostRecordBytes(NvtxBeginFixedPayload(type, f.category != 0, f.encoding) + name_len);
  char* at = ReserveHostRecord(bytes);
  if (at == nullptr) return false;
  WriteNvtxBegin(at, type, f, name, name_len);
  PublishHostRecord(at, bytes);
  return true;
}

// Hot path: appends a pop (16 B) or range end (24 B). False when dropped (counted).
template <HostRecordType kType>
inline bool AppendNvtxEnd(uint16_t domain, uint64_t ts, uint64_t id) noexcept {
  static_assert(kType == HostRecordType::kNvtxPop || kType == HostRecordType::kNvtxEnd);
  constexpr uint32_t kBytes = NvtxHasRangeId(kType) ? 24 : 16;
  char* at = ReserveHostRecord(kBytes);
  if (at == nullptr) return false;
  WriteNvtxEnd(at, kType, domain, ts, id);
  PublishHostRecord(at, kBytes);
  return true;
}

// Cold: decodes a begin record's payload (as visited: after the header). `name`/`name_len` point
// into the payload. Returns false for a malformed record.
inline bool ReadNvtxBegin(HostRecordType type, uint8_t flags, const void* payload, uint32_t size,
                          NvtxBeginFields* f, const char** name, uint32_t* name_len) {
  f->encoding = static_cast<NvtxNameEncoding>(flags & kNvtxEncodingMask);
  f->torch_op = (flags & kNvtxTorchOp) != 0;
  const bool has_category = (flags & kNvtxHasCategory) != 0;
  const uint32_t fixed = NvtxBeginFixedPayload(type, has_category, f->encoding);
  if (size < fixed) return false;
  const char* p = static_cast<const char*>(payload);
  std::memcpy(&f->domain, p, 2);
  std::memcpy(&f->ts, p + 4, 8);
  p += 12;
  f->id = 0;
  f->category = 0;
  f->registered = 0;
  if (NvtxHasRangeId(type)) {
    std::memcpy(&f->id, p, 8);
    p += 8;
  }
  if (has_category) {
    std::memcpy(&f->category, p, 4);
    p += 4;
  }
  if (f->encoding == NvtxNameEncoding::kRegistered) {
    std::memcpy(&f->registered, p, 4);
    p += 4;
  }
  *name = p;
  *name_len = size - fixed;
  return true;
}

// Cold: decodes an end record's payload. Returns false for a malformed record.
inline bool ReadNvtxEnd(HostRecordType type, const void* payload, uint32_t size, uint16_t* domain,
                        uint64_t* ts, uint64_t* id) {
  const bool has_id = NvtxHasRangeId(type);
  if (size < 12u + (has_id ? 8u : 0u)) return false;
  const char* p = static_cast<const char*>(payload);
  std::memcpy(domain, p, 2);
  std::memcpy(ts, p + 4, 8);
  *id = 0;
  if (has_id) std::memcpy(id, p + 12, 8);
  return true;
}

}  // namespace gprof::collector
