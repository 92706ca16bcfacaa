// The dump's encoding shared by its writer (dump.cpp) and reader (dump_read.cpp): the magic
// numbers, the section tags, the XXH64 checksum and the small blob sections (format in dump.h).
// Internal to model/.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "model/dump.h"

namespace gprof {
namespace dump_detail {

inline constexpr char kMagic[8] = {'G', 'P', 'R', 'O', 'F', 'D', 'M', 'P'};
inline constexpr char kEndMagic[8] = {'G', 'P', 'R', 'O', 'F', 'E', 'N', 'D'};
inline constexpr size_t kDumpHeaderBytes = sizeof kMagic + 8;      // magic, version, reserved
inline constexpr size_t kDumpTrailerBytes = 16 + sizeof kEndMagic;  // kEnd header, hash, magic

enum SectionTag : uint32_t {
  kInfo = 1, kCounters, kStrings, kDomains, kThreads, kDevices, kRanges, kMarks, kApiCalls,
  kLaunchConfigs, kKernels, kMemcpys, kMemsets, kSyncs, kMemoryOps, kOverheads, kSteps, kApiNames,
  kCollectorCost, kStacks, kStackPcs, kApiStacks, kModules, kStackCounters, kSegment,
  kPlacement,
  kCpuSamples, kCpuSampleCounters,  // --cpu-sampling (docs/CPU_SAMPLING.md)
  kThreadCpu,                       // thread CPU time samples
  kEnd = 0xffffffffu,
};

// The section of each GPU record kind (GpuKind order); the values are part of the file format.
constexpr SectionTag SectionOf(GpuKind kind) {
  constexpr SectionTag kTags[kGpuKindCount] = {kKernels, kMemcpys,   kMemsets,
                                               kSyncs,   kMemoryOps, kOverheads};
  return kTags[static_cast<size_t>(kind)];
}

// The checksum is XXH64 (seed 0), computed as a stream so that the writer, which sees the file in
// arbitrary pieces, and the reader, which sees it whole, agree. Eight bytes per multiply in four
// independent lanes: about 8x faster than the byte-wise FNV-1a of format version 1, which was
// half of the exit cost (bench figure 6b). Detects every corruption a checksum here has to:
// flipped bits, truncation, reordered sections.
class Xxh64 {
 public:
  void Update(const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    total_ += n;
    if (pending_size_ + n < kStripe) {
      std::memcpy(pending_ + pending_size_, p, n);
      pending_size_ += n;
      return;
    }
    if (pending_size_ != 0) {
      const size_t fill = kStripe - pending_size_;
      std::memcpy(pending_ + pending_size_, p, fill);
      Stripe(pending_);
      p += fill;
      n -= fill;
      pending_size_ = 0;
    }
    for (; n >= kStripe; p += kStripe, n -= kStripe) Stripe(p);
    std::memcpy(pending_, p, n);
    pending_size_ = n;
  }

  uint64_t Digest() const {
    uint64_t h;
    if (total_ >= kStripe) {
      h = Rotl(v_[0], 1) + Rotl(v_[1], 7) + Rotl(v_[2], 12) + Rotl(v_[3], 18);
      for (uint64_t v : v_) h = (h ^ Round(0, v)) * kP1 + kP4;
    } else {
      h = kP5;  // seed 0
    }
    h += total_;
    const unsigned char* p = pending_;
    size_t n = pending_size_;
    for (; n >= 8; p += 8, n -= 8) h = Rotl(h ^ Round(0, Load64(p)), 27) * kP1 + kP4;
    if (n >= 4) {
      uint32_t w;
      std::memcpy(&w, p, 4);
      h = Rotl(h ^ (uint64_t{w} * kP1), 23) * kP2 + kP3;
      p += 4;
      n -= 4;
    }
    for (; n > 0; ++p, --n) h = Rotl(h ^ (*p * kP5), 11) * kP1;
    h ^= h >> 33;
    h *= kP2;
    h ^= h >> 29;
    h *= kP3;
    h ^= h >> 32;
    return h;
  }

 private:
  static constexpr uint64_t kP1 = 0x9e3779b185ebca87ull;
  static constexpr uint64_t kP2 = 0xc2b2ae3d27d4eb4full;
  static constexpr uint64_t kP3 = 0x165667b19e3779f9ull;
  static constexpr uint64_t kP4 = 0x85ebca77c2b2ae63ull;
  static constexpr uint64_t kP5 = 0x27d4eb2f165667c5ull;
  static constexpr size_t kStripe = 32;

  static uint64_t Rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
  static uint64_t Load64(const unsigned char* p) {  // the dump is little-endian, as is the host
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  static uint64_t Round(uint64_t acc, uint64_t input) {
    return Rotl(acc + input * kP2, 31) * kP1;
  }
  void Stripe(const unsigned char* p) {
    v_[0] = Round(v_[0], Load64(p));
    v_[1] = Round(v_[1], Load64(p + 8));
    v_[2] = Round(v_[2], Load64(p + 16));
    v_[3] = Round(v_[3], Load64(p + 24));
  }

  uint64_t v_[4] = {kP1 + kP2, kP2, 0, 0 - kP1};
  uint64_t total_ = 0;
  unsigned char pending_[kStripe];
  size_t pending_size_ = 0;
};

inline uint64_t Checksum(const void* data, size_t n) { return DumpChecksum(data, n); }

// A growable byte blob for the small variable-length sections.
class BlobWriter {
 public:
  template <typename T>
  void Pod(const T& v) { out_.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void Str(std::string_view s) {
    Pod(static_cast<uint32_t>(s.size()));
    out_.append(s.data(), s.size());
  }
  const std::string& str() const { return out_; }

 private:
  std::string out_;
};

class BlobReader {
 public:
  BlobReader(const char* p, size_t n) : p_(p), end_(p + n) {}
  template <typename T>
  bool Pod(T* v) {
    if (static_cast<size_t>(end_ - p_) < sizeof(T)) return false;
    std::memcpy(v, p_, sizeof(T));
    p_ += sizeof(T);
    return true;
  }
  bool Str(std::string* s) {
    uint32_t n = 0;
    if (!Pod(&n) || static_cast<size_t>(end_ - p_) < n) return false;
    s->assign(p_, n);
    p_ += n;
    return true;
  }
  bool done() const { return p_ == end_; }

 private:
  const char* p_;
  const char* end_;
};

std::string EncodeInfo(const ProfileInfo& i);
bool DecodeInfo(BlobReader r, ProfileInfo* i);
// The placement section (ProcessPlacement). Its reader ignores bytes after the fields it knows,
// so later versions may append fields; a dump without the section keeps the defaults.
std::string EncodePlacement(const ProcessPlacement& p);
bool DecodePlacement(BlobReader r, ProcessPlacement* p);
// The strings from id `from` on (a segment writes only those its table gained).
std::string EncodeStrings(const StringTable& t, uint32_t from);
// Appends to `t`, which holds `base` strings: the first decoded one gets id `base`.
bool DecodeStrings(BlobReader r, uint32_t base, StringTable* t);

// The segment reader's steps (dump_read.cpp), shared by ParseDump and DumpSegmentReader:
// where the segment starting at `start` of `data` ends (0: cut short), and its sections
// appended to `result` (its records, its tables' growth; the thread, device and module lists
// united), its kSegment header into `seg`.
size_t SegmentEnd(std::span<const char> data, size_t start);
bool ReadSegment(const char* data, size_t body, size_t body_end, bool first, Profile* result,
                 SegmentHeader* seg, std::string* error);

}  // namespace dump_detail
}  // namespace gprof
