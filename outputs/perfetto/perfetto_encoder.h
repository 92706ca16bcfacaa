// ProtoEncoder: the protobuf wire format, hand-written for the Perfetto trace writer (launcher
// process and benchmarks only; may allocate). Only what a trace needs: varints, fixed64/double,
// length-delimited strings and nested messages. Field numbers live in perfetto_packets.h.
//
// Nested messages are written in place: BeginNested() leaves one byte for the length and
// EndNested() fills it in, moving the body up in the rare case that the length needs more than
// one byte (>= 128 bytes). So a whole packet is built in one buffer without copies, and lengths
// are always minimal varints (what protoc and Perfetto expect; no redundant encodings). Fields are
// written through a pointer into a buffer grown ahead of each write (one check per field).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace gprof::proto {

enum WireType : uint8_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2 };

inline constexpr size_t kMaxVarintSize = 10;

// Bytes `v` takes as a varint (1..10).
inline size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// Writes `v` as a varint at `p` (room for kMaxVarintSize bytes); returns the end.
inline uint8_t* PutVarint(uint8_t* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<uint8_t>(v);
  return p;
}

class ProtoEncoder {
 public:
  // A field key: (field << 3 | wire type) as a varint.
  void Tag(uint32_t field, WireType type) { Varint(uint64_t{field} << 3 | type); }
  void Varint(uint64_t v) {
    Ensure(kMaxVarintSize);
    Put(PutVarint(At(), v));
  }

  // uint32/uint64/enum/bool fields. Negative int32/int64 values are written as their 64-bit two's
  // complement (10 bytes), as protobuf does for intNN (not sintNN).
  void AddVarint(uint32_t field, uint64_t v) {
    Ensure(2 * kMaxVarintSize);
    Put(PutVarint(PutVarint(At(), uint64_t{field} << 3 | kVarint), v));
  }
  void AddInt(uint32_t field, int64_t v) { AddVarint(field, static_cast<uint64_t>(v)); }
  void AddBool(uint32_t field, bool v) { AddVarint(field, v ? 1 : 0); }
  void AddFixed64(uint32_t field, uint64_t v) {
    Ensure(kMaxVarintSize + 8);
    uint8_t* p = PutVarint(At(), uint64_t{field} << 3 | kFixed64);
    for (int i = 0; i < 8; ++i) *p++ = static_cast<uint8_t>(v >> (8 * i));
    Put(p);
  }
  void AddDouble(uint32_t field, double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof(bits));
    AddFixed64(field, bits);
  }
  // string/bytes fields (the caller makes strings valid UTF-8).
  void AddBytes(uint32_t field, std::string_view s) {
    Ensure(2 * kMaxVarintSize + s.size());
    uint8_t* p = PutVarint(PutVarint(At(), uint64_t{field} << 3 | kLengthDelimited), s.size());
    if (!s.empty()) std::memcpy(p, s.data(), s.size());
    Put(p + s.size());
  }
  // Pre-encoded message body (e.g. cached per value) as a nested message.
  void AddMessage(uint32_t field, std::string_view body) { AddBytes(field, body); }
  // Pre-encoded fields appended as they are.
  void AppendRaw(std::string_view bytes) {
    Ensure(bytes.size());
    if (!bytes.empty()) std::memcpy(At(), bytes.data(), bytes.size());
    len_ += bytes.size();
  }

  // Opens a nested message; returns a mark for EndNested. Nested calls close innermost first.
  size_t BeginNested(uint32_t field) {
    Ensure(kMaxVarintSize + 1);
    uint8_t* p = PutVarint(At(), uint64_t{field} << 3 | kLengthDelimited);
    *p++ = 0;
    Put(p);
    return len_;
  }
  void EndNested(size_t mark) {
    const size_t len = len_ - mark;
    if (len < 0x80) {
      buf_[mark - 1] = static_cast<char>(len);
      return;
    }
    uint8_t tmp[kMaxVarintSize];
    const size_t n = PutVarint(tmp, len) - tmp;
    Ensure(n - 1);
    std::memmove(buf_.data() + mark + n - 1, buf_.data() + mark, len);
    std::memcpy(buf_.data() + mark - 1, tmp, n);
    len_ += n - 1;
  }

  std::string_view view() const { return std::string_view(buf_.data(), len_); }
  size_t size() const { return len_; }
  void clear() { len_ = 0; }

 private:
  // Room for `n` more bytes. The buffer only grows; bytes past len_ are scratch.
  void Ensure(size_t n) {
    if (buf_.size() - len_ < n) buf_.resize(std::max(2 * buf_.size(), len_ + n + 256));
  }
  uint8_t* At() { return reinterpret_cast<uint8_t*>(buf_.data()) + len_; }
  void Put(uint8_t* end) { len_ = static_cast<size_t>(end - reinterpret_cast<uint8_t*>(buf_.data())); }

  std::string buf_;
  size_t len_ = 0;
};

}  // namespace gprof::proto
