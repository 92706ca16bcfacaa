// ProtoEncoder: the protobuf wire format, hand-written for the Perfetto trace writer (launcher
// process and benchmarks only; may allocate). Only what a trace needs: varints, fixed64/double,
// length-delimited strings and nested messages. Field numbers live in perfetto_trace.cpp.
//
// Nested messages are written in place: BeginNested() leaves one byte for the length and
// EndNested() fills it in, moving the body up in the rare case that the length needs more than
// one byte (>= 128 bytes). So a whole packet is built in one buffer without copies, and lengths
// are always minimal varints (what protoc and Perfetto expect; no redundant encodings).
#pragma once

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
    uint8_t tmp[kMaxVarintSize];
    buf_.append(reinterpret_cast<const char*>(tmp), PutVarint(tmp, v) - tmp);
  }

  // uint32/uint64/enum/bool fields. Negative int32/int64 values are written as their 64-bit two's
  // complement (10 bytes), as protobuf does for intNN (not sintNN).
  void AddVarint(uint32_t field, uint64_t v) {
    Tag(field, kVarint);
    Varint(v);
  }
  void AddInt(uint32_t field, int64_t v) { AddVarint(field, static_cast<uint64_t>(v)); }
  void AddBool(uint32_t field, bool v) { AddVarint(field, v ? 1 : 0); }
  void AddFixed64(uint32_t field, uint64_t v) {
    Tag(field, kFixed64);
    char le[8];
    for (int i = 0; i < 8; ++i) le[i] = static_cast<char>(v >> (8 * i));
    buf_.append(le, 8);
  }
  void AddDouble(uint32_t field, double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof(bits));
    AddFixed64(field, bits);
  }
  // string/bytes fields (the caller makes strings valid UTF-8).
  void AddBytes(uint32_t field, std::string_view s) {
    Tag(field, kLengthDelimited);
    Varint(s.size());
    buf_.append(s);
  }
  // Pre-encoded message body (e.g. cached per value) as a nested message.
  void AddMessage(uint32_t field, std::string_view body) { AddBytes(field, body); }
  // Pre-encoded fields appended as they are.
  void AppendRaw(std::string_view bytes) { buf_.append(bytes); }

  // Opens a nested message; returns a mark for EndNested. Nested calls close innermost first.
  size_t BeginNested(uint32_t field) {
    Tag(field, kLengthDelimited);
    buf_.push_back('\0');
    return buf_.size();
  }
  void EndNested(size_t mark) {
    const size_t len = buf_.size() - mark;
    if (len < 0x80) {
      buf_[mark - 1] = static_cast<char>(len);
      return;
    }
    uint8_t tmp[kMaxVarintSize];
    const size_t n = PutVarint(tmp, len) - tmp;
    buf_.insert(mark, n - 1, '\0');
    std::memcpy(buf_.data() + mark - 1, tmp, n);
  }

  std::string_view view() const { return buf_; }
  size_t size() const { return buf_.size(); }
  void clear() { buf_.clear(); }

 private:
  std::string buf_;
};

}  // namespace gprof::proto
