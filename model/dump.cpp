// Dump writer and reader (format in dump.h). WriteDump runs inside the profiled process, off the
// hot path (at exit and at the end of each schedule window); ReadDump runs in the launcher.
#include "model/dump.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include "model/output_file.h"

namespace gprof {
namespace {

constexpr char kMagic[8] = {'G', 'P', 'R', 'O', 'F', 'D', 'M', 'P'};
constexpr char kEndMagic[8] = {'G', 'P', 'R', 'O', 'F', 'E', 'N', 'D'};

enum SectionTag : uint32_t {
  kInfo = 1, kCounters, kStrings, kDomains, kThreads, kDevices, kRanges, kMarks, kApiCalls,
  kLaunchConfigs, kKernels, kMemcpys, kMemsets, kSyncs, kMemoryOps, kOverheads, kSteps, kApiNames,
  kCollectorCost, kStacks, kStackPcs, kApiStacks, kModules, kStackCounters,
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

}  // namespace

uint64_t DumpChecksum(const void* data, size_t n) {
  Xxh64 h;
  h.Update(data, n);
  return h.Digest();
}

namespace {

uint64_t Checksum(const void* data, size_t n) { return DumpChecksum(data, n); }

// Appends to a FILE* while hashing. Errors are sticky and reported once at the end.
class Sink {
 public:
  explicit Sink(OutputFile* f) : f_(f) {}
  void Bytes(const void* data, size_t n) {
    if (n == 0) return;
    hash_.Update(data, n);
    f_->Write(data, n);  // a failure is kept by the file and reported by Commit
  }
  template <typename T>
  void Pod(const T& v) { Bytes(&v, sizeof v); }
  void Str(const std::string& s) {
    Pod(static_cast<uint32_t>(s.size()));
    Bytes(s.data(), s.size());
  }
  template <typename T>
  void Section(uint32_t tag, const std::vector<T>& v) {
    static_assert(kIsRecord<T>);
    Pod(tag);
    Pod(static_cast<uint32_t>(sizeof(T)));
    Pod(static_cast<uint64_t>(v.size()));
    Bytes(v.data(), v.size() * sizeof(T));
  }
  void Blob(uint32_t tag, const std::string& blob) {
    Pod(tag);
    Pod(uint32_t{1});
    Pod(static_cast<uint64_t>(blob.size()));
    Bytes(blob.data(), blob.size());
  }
  uint64_t hash() const { return hash_.Digest(); }

 private:
  OutputFile* f_;
  Xxh64 hash_;
};

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

std::string EncodeInfo(const ProfileInfo& i) {
  BlobWriter w;
  w.Pod(i.pid); w.Pod(i.parent_pid);
  w.Str(i.program); w.Str(i.command_line); w.Str(i.hostname);
  w.Pod(i.start_ns); w.Pod(i.end_ns);
  w.Pod(i.rank); w.Pod(i.world_size);
  w.Pod(i.cycle); w.Pod(i.first_step); w.Pod(i.last_step);
  w.Pod(static_cast<uint8_t>(i.partial_window));
  w.Str(i.gpu_status); w.Str(i.cupti_library);
  w.Pod(i.cupti_clock_offset_ns); w.Pod(i.cupti_clock_window_ns);
  return w.str();
}

bool DecodeInfo(BlobReader r, ProfileInfo* i) {
  uint8_t partial = 0;
  bool ok = r.Pod(&i->pid) && r.Pod(&i->parent_pid) && r.Str(&i->program) &&
            r.Str(&i->command_line) && r.Str(&i->hostname) && r.Pod(&i->start_ns) &&
            r.Pod(&i->end_ns) && r.Pod(&i->rank) && r.Pod(&i->world_size) && r.Pod(&i->cycle) &&
            r.Pod(&i->first_step) && r.Pod(&i->last_step) && r.Pod(&partial) &&
            r.Str(&i->gpu_status) && r.Str(&i->cupti_library) &&
            r.Pod(&i->cupti_clock_offset_ns) && r.Pod(&i->cupti_clock_window_ns) && r.done();
  i->partial_window = partial != 0;
  return ok;
}

std::string EncodeStrings(const StringTable& t) {
  BlobWriter w;
  w.Pod(static_cast<uint32_t>(t.size()));
  for (StringId id = 0; id < t.size(); ++id) w.Str(t.Get(id));
  return w.str();
}

bool DecodeStrings(BlobReader r, StringTable* t) {
  uint32_t n = 0;
  if (!r.Pod(&n)) return false;
  std::string s;
  for (uint32_t id = 0; id < n; ++id) {
    if (!r.Str(&s)) return false;
    // Ids must come back identical; a duplicate string would break that, so it is corruption.
    if (t->Intern(s) != id) return false;
  }
  return r.done();
}

}  // namespace

std::string WriteDump(const Profile& p, const std::string& path) {
  OutputFile f;
  if (std::string e = f.Open(path, /*create_dirs=*/true); !e.empty()) return e;
  Sink s(&f);
  s.Bytes(kMagic, sizeof kMagic);
  s.Pod(kDumpFormatVersion);
  s.Pod(uint32_t{0});
  s.Blob(kInfo, EncodeInfo(p.info));
  s.Section(kCounters, std::vector<Counters>{p.counters});
  s.Section(kCollectorCost, std::vector<CollectorCost>{p.collector_cost});
  s.Blob(kStrings, EncodeStrings(p.strings));
  s.Section(kDomains, p.domains);
  s.Section(kThreads, p.threads);
  s.Section(kDevices, p.devices);
  s.Section(kRanges, p.ranges);
  s.Section(kMarks, p.marks);
  s.Section(kApiCalls, p.api_calls);
  s.Section(kLaunchConfigs, p.launch_configs);
  ForEachGpuKind(p, [&](GpuKind kind, const auto& records) { s.Section(SectionOf(kind), records); });
  s.Section(kSteps, p.steps);
  s.Section(kApiNames, p.api_names);
  // Native stacks: absent (not empty) when there are none, so a dump without them is unchanged.
  if (!p.api_stacks.empty() || !p.stacks.empty() || !p.modules.empty() ||
      p.stack_counters.captured != 0 || p.stack_counters.dropped != 0) {
    s.Section(kStacks, p.stacks);
    s.Section(kStackPcs, p.stack_pcs);
    s.Section(kApiStacks, p.api_stacks);
    s.Section(kModules, p.modules);
    s.Section(kStackCounters, std::vector<StackCounters>{p.stack_counters});
  }
  const uint64_t hash = s.hash();
  s.Pod(static_cast<uint32_t>(kEnd));
  s.Pod(uint32_t{0});
  s.Pod(hash);
  s.Bytes(kEndMagic, sizeof kEndMagic);

  return f.Commit();
}

namespace {

template <typename T>
bool TakeSection(const char* payload, uint32_t record_size, uint64_t count, std::vector<T>* out,
                 std::string* why) {
  if (record_size != sizeof(T)) {
    *why = "record size " + std::to_string(record_size) + " where this build expects " +
           std::to_string(sizeof(T));
    return false;
  }
  out->resize(count);
  if (count != 0) std::memcpy(out->data(), payload, count * sizeof(T));  // data() may be null
  return true;
}

}  // namespace

bool ReadDump(const std::string& path, Profile* p, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = path + ": cannot open: " + std::strerror(errno);
    return false;
  }
  const std::vector<char> data((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
  return ParseDump(data, path, p, error);
}

bool ParseDump(std::span<const char> data, const std::string& name, Profile* p,
               std::string* error) {
  auto fail = [&](const std::string& why) {
    *error = name + ": " + why;
    return false;
  };
  constexpr size_t kHeader = sizeof kMagic + 8;
  constexpr size_t kTrailer = 16 + sizeof kEndMagic;
  if (data.size() < kHeader || std::memcmp(data.data(), kMagic, sizeof kMagic) != 0)
    return fail("not a gprof-run dump (bad magic)");
  uint32_t version = 0;
  std::memcpy(&version, data.data() + sizeof kMagic, 4);
  if (version > kDumpFormatVersion)
    return fail("dump format version " + std::to_string(version) +
                " is newer than this gprof-run understands (" +
                std::to_string(kDumpFormatVersion) + "); use a newer gprof-run");
  if (version == 1)
    return fail("unsupported dump format version 1 (written by an older gprof-run, FNV-1a "
                "checksum); read it with the gprof-run that recorded it, or record again");
  if (version != kDumpFormatVersion)
    return fail("unsupported dump format version " + std::to_string(version) +
                " (written by an older gprof-run); re-record the profile with this one");
  if (data.size() < kHeader + kTrailer ||
      std::memcmp(data.data() + data.size() - sizeof kEndMagic, kEndMagic, sizeof kEndMagic) != 0)
    return fail("truncated (no end marker): the writing process probably died mid-write");

  const size_t body_end = data.size() - kTrailer;
  uint64_t stored_hash = 0;
  std::memcpy(&stored_hash, data.data() + body_end + 8, 8);
  if (Checksum(data.data(), body_end) != stored_hash)
    return fail("corrupt (checksum mismatch)");

  Profile result;
  size_t pos = kHeader;
  while (pos < body_end) {
    if (body_end - pos < 16) return fail("corrupt (section header cut short)");
    uint32_t tag = 0, record_size = 0;
    uint64_t count = 0;
    std::memcpy(&tag, data.data() + pos, 4);
    std::memcpy(&record_size, data.data() + pos + 4, 4);
    std::memcpy(&count, data.data() + pos + 8, 8);
    pos += 16;
    if (record_size == 0 || count > (body_end - pos) / record_size)
      return fail("corrupt (section " + std::to_string(tag) + " runs past the end)");
    const char* payload = data.data() + pos;
    const size_t bytes = count * record_size;
    pos += bytes;
    std::string why;
    bool ok = true;
    std::vector<Counters> counters;
    bool gpu_section = false;
    ForEachGpuKind(result, [&](GpuKind kind, auto& records) {
      if (SectionOf(kind) != tag) return;
      gpu_section = true;
      ok = TakeSection(payload, record_size, count, &records, &why);
    });
    if (!gpu_section) switch (tag) {
      case kInfo: ok = DecodeInfo(BlobReader(payload, bytes), &result.info); break;
      case kStrings:
        result.strings = StringTable();
        ok = DecodeStrings(BlobReader(payload, bytes), &result.strings);
        break;
      case kCounters:
        ok = TakeSection(payload, record_size, count, &counters, &why) && counters.size() == 1;
        if (ok) result.counters = counters[0];
        break;
      case kCollectorCost: {
        std::vector<CollectorCost> cost;
        ok = TakeSection(payload, record_size, count, &cost, &why) && cost.size() == 1;
        if (ok) result.collector_cost = cost[0];
        break;
      }
      case kDomains: ok = TakeSection(payload, record_size, count, &result.domains, &why); break;
      case kThreads: ok = TakeSection(payload, record_size, count, &result.threads, &why); break;
      case kDevices: ok = TakeSection(payload, record_size, count, &result.devices, &why); break;
      case kRanges: ok = TakeSection(payload, record_size, count, &result.ranges, &why); break;
      case kMarks: ok = TakeSection(payload, record_size, count, &result.marks, &why); break;
      case kApiCalls: ok = TakeSection(payload, record_size, count, &result.api_calls, &why); break;
      case kLaunchConfigs:
        ok = TakeSection(payload, record_size, count, &result.launch_configs, &why);
        break;
      case kSteps: ok = TakeSection(payload, record_size, count, &result.steps, &why); break;
      case kApiNames:
        ok = TakeSection(payload, record_size, count, &result.api_names, &why);
        break;
      case kStacks: ok = TakeSection(payload, record_size, count, &result.stacks, &why); break;
      case kStackPcs:
        ok = TakeSection(payload, record_size, count, &result.stack_pcs, &why);
        break;
      case kApiStacks:
        ok = TakeSection(payload, record_size, count, &result.api_stacks, &why);
        break;
      case kModules: ok = TakeSection(payload, record_size, count, &result.modules, &why); break;
      case kStackCounters: {
        std::vector<StackCounters> sc;
        ok = TakeSection(payload, record_size, count, &sc, &why) && sc.size() == 1;
        if (ok) result.stack_counters = sc[0];
        break;
      }
      default: break;  // a section this version does not know: skip it (same format version)
    }
    if (!ok) {
      return fail("corrupt (section " + std::to_string(tag) + (why.empty() ? "" : ": " + why) +
                  ")");
    }
  }
  if (const std::string why = CheckProfile(result); !why.empty()) {
    return fail("corrupt (" + why + ")");
  }
  *p = std::move(result);
  return true;
}

}  // namespace gprof
