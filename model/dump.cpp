// Dump writer and reader (format in dump.h). WriteDump runs inside the profiled process, off the
// hot path (at exit and at the end of each schedule window); ReadDump runs in the launcher.
#include "model/dump.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include "model/gpu_checks.h"
#include "model/output_file.h"

namespace gprof {
namespace {

constexpr char kMagic[8] = {'G', 'P', 'R', 'O', 'F', 'D', 'M', 'P'};
constexpr char kEndMagic[8] = {'G', 'P', 'R', 'O', 'F', 'E', 'N', 'D'};

enum SectionTag : uint32_t {
  kInfo = 1, kCounters, kStrings, kDomains, kThreads, kDevices, kRanges, kMarks, kApiCalls,
  kLaunchConfigs, kKernels, kMemcpys, kMemsets, kSyncs, kMemoryOps, kOverheads, kSteps, kApiNames,
  kCollectorCost, kStacks, kStackPcs, kApiStacks, kModules, kStackCounters, kSegment,
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
  void Section(uint32_t tag, const std::vector<T>& v, size_t from = 0) {
    static_assert(kIsRecord<T>);
    const size_t n = from < v.size() ? v.size() - from : 0;
    Pod(tag);
    Pod(static_cast<uint32_t>(sizeof(T)));
    Pod(static_cast<uint64_t>(n));
    if (n != 0) Bytes(v.data() + from, n * sizeof(T));
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

// The strings from id `from` on (a segment writes only those its table gained).
std::string EncodeStrings(const StringTable& t, uint32_t from) {
  BlobWriter w;
  const uint32_t n = t.size() > from ? static_cast<uint32_t>(t.size()) - from : 0;
  w.Pod(n);
  for (StringId id = from; id < t.size(); ++id) w.Str(t.Get(id));
  return w.str();
}

// Appends to `t`, which holds `base` strings: the first decoded one gets id `base`.
bool DecodeStrings(BlobReader r, uint32_t base, StringTable* t) {
  uint32_t n = 0;
  // A fresh table already holds "" as id 0, which the first segment's strings start with.
  if (!r.Pod(&n) || (t->size() != base && !(base == 0 && t->size() == 1))) return false;
  std::string s;
  for (uint32_t i = 0; i < n; ++i) {
    if (!r.Str(&s)) return false;
    // Ids must come back identical; a duplicate string would break that, so it is corruption.
    if (t->Intern(s) != base + i) return false;
  }
  return r.done();
}

}  // namespace

namespace {

// One segment: header, its sections, trailer. `seg` gives its index, whether it is the last, and
// where its tables' growth starts.
void WriteSegment(const Profile& p, const SegmentHeader& seg, OutputFile* f) {
  Sink s(f);
  s.Bytes(kMagic, sizeof kMagic);
  s.Pod(kDumpFormatVersion);
  s.Pod(uint32_t{0});
  s.Section(kSegment, std::vector<SegmentHeader>{seg});
  s.Blob(kInfo, EncodeInfo(p.info));
  s.Section(kCounters, std::vector<Counters>{p.counters});
  s.Section(kCollectorCost, std::vector<CollectorCost>{p.collector_cost});
  s.Blob(kStrings, EncodeStrings(p.strings, seg.strings));
  s.Section(kDomains, p.domains, seg.domains);
  s.Section(kThreads, p.threads);
  s.Section(kDevices, p.devices);
  s.Section(kRanges, p.ranges);
  s.Section(kMarks, p.marks);
  s.Section(kApiCalls, p.api_calls);
  s.Section(kLaunchConfigs, p.launch_configs, seg.launch_configs);
  ForEachGpuKind(p, [&](GpuKind kind, const auto& records) { s.Section(SectionOf(kind), records); });
  s.Section(kSteps, p.steps);
  s.Section(kApiNames, p.api_names, seg.api_names);
  // Native stacks: absent (not empty) when there are none, so a dump without them is unchanged.
  if (p.stacks.size() > seg.stacks || !p.api_stacks.empty() || !p.modules.empty() ||
      p.stack_counters.captured != 0 || p.stack_counters.dropped != 0) {
    s.Section(kStacks, p.stacks, seg.stacks);
    s.Section(kStackPcs, p.stack_pcs, seg.stack_pcs);
    s.Section(kApiStacks, p.api_stacks);
    s.Section(kModules, p.modules);
    s.Section(kStackCounters, std::vector<StackCounters>{p.stack_counters});
  }
  const uint64_t hash = s.hash();
  s.Pod(static_cast<uint32_t>(kEnd));
  s.Pod(uint32_t{0});
  s.Pod(hash);
  s.Bytes(kEndMagic, sizeof kEndMagic);
}

}  // namespace

std::string WriteDump(const Profile& p, const std::string& path) {
  OutputFile f;
  if (std::string e = f.Open(path, /*create_dirs=*/true); !e.empty()) return e;
  WriteSegment(p, SegmentHeader{}, &f);
  return f.Commit();
}

std::string SegmentedDumpWriter::Open(const std::string& path) {
  return file_.Open(path, /*create_dirs=*/true);
}

std::string SegmentedDumpWriter::Append(const Profile& p, bool last) {
  SegmentHeader seg = next_;
  seg.flags = last ? uint32_t{kSegmentLast} : uint32_t{0};
  WriteSegment(p, seg, &file_);
  if (std::string e = file_.Flush(); !e.empty()) return e;
  next_.index = seg.index + 1;
  next_.strings = static_cast<uint32_t>(p.strings.size());
  next_.domains = static_cast<uint32_t>(p.domains.size());
  next_.launch_configs = static_cast<uint32_t>(p.launch_configs.size());
  next_.api_names = static_cast<uint32_t>(p.api_names.size());
  next_.stacks = static_cast<uint32_t>(p.stacks.size());
  next_.stack_pcs = p.stack_pcs.size();
  return "";
}

std::string SegmentedDumpWriter::Publish() { return file_.Commit(); }

namespace {

// Appends a section's records to `out`, which must hold `base` records already (a segment's
// table sections continue the previous segment's tables).
template <typename T>
bool AppendSection(const char* payload, uint32_t record_size, uint64_t count, std::vector<T>* out,
                   std::string* why, uint64_t base = UINT64_MAX) {
  if (record_size != sizeof(T)) {
    *why = "record size " + std::to_string(record_size) + " where this build expects " +
           std::to_string(sizeof(T));
    return false;
  }
  if (base != UINT64_MAX && out->size() != base) {
    *why = "the segment's table starts at " + std::to_string(base) + " but the segments before " +
           "it hold " + std::to_string(out->size());
    return false;
  }
  const size_t at = out->size();
  out->resize(at + count);
  if (count != 0) std::memcpy(out->data() + at, payload, count * sizeof(T));  // data() may be null
  return true;
}

// A single-record section (counters and the like).
template <typename T>
bool TakeOne(const char* payload, uint32_t record_size, uint64_t count, T* out, std::string* why) {
  std::vector<T> v;
  if (!AppendSection(payload, record_size, count, &v, why)) return false;
  if (v.size() != 1) return false;
  *out = v[0];
  return true;
}

// Threads, devices and modules come whole in every segment: keep one of each.
void UnionThreads(const std::vector<ThreadInfo>& from, std::vector<ThreadInfo>* into) {
  for (const ThreadInfo& t : from) {
    auto it = std::find_if(into->begin(), into->end(),
                           [&](const ThreadInfo& o) { return o.tid == t.tid; });
    if (it == into->end()) {
      into->push_back(t);
    } else if (t.name != kNoString) {
      it->name = t.name;
    }
  }
}
template <typename T, typename Same>
void UnionBy(const std::vector<T>& from, std::vector<T>* into, Same same) {
  for (const T& t : from) {
    if (std::none_of(into->begin(), into->end(), [&](const T& o) { return same(o, t); })) {
      into->push_back(t);
    }
  }
}

constexpr size_t kHeader = sizeof kMagic + 8;
constexpr size_t kTrailer = 16 + sizeof kEndMagic;

// The end of the segment that starts at `start` (one past its trailer), found by walking its
// section headers; 0 when the data ends first (a segment cut short).
size_t SegmentEnd(std::span<const char> data, size_t start) {
  size_t pos = start + kHeader;
  while (data.size() - pos >= 16) {
    uint32_t tag = 0, record_size = 0;
    uint64_t count = 0;
    std::memcpy(&tag, data.data() + pos, 4);
    std::memcpy(&record_size, data.data() + pos + 4, 4);
    std::memcpy(&count, data.data() + pos + 8, 8);
    if (tag == kEnd) {
      return data.size() - pos >= kTrailer ? pos + kTrailer : 0;
    }
    pos += 16;
    if (record_size == 0 || count > (data.size() - pos) / record_size) return 0;
    pos += count * record_size;
  }
  return 0;
}

// Decodes the sections of one whole, checksummed segment [body, body_end) into `result`.
// `first`: the dump's first segment (its info starts the profile).
bool ReadSegment(const char* data, size_t body, size_t body_end, bool first, Profile* result,
                 SegmentHeader* seg, std::string* error) {
  size_t pos = body;
  bool have_header = false;
  std::vector<ThreadInfo> threads;
  std::vector<DeviceInfo> devices;
  std::vector<ModuleInfo> modules;
  while (pos < body_end) {
    if (body_end - pos < 16) {
      *error = "corrupt (section header cut short)";
      return false;
    }
    uint32_t tag = 0, record_size = 0;
    uint64_t count = 0;
    std::memcpy(&tag, data + pos, 4);
    std::memcpy(&record_size, data + pos + 4, 4);
    std::memcpy(&count, data + pos + 8, 8);
    pos += 16;
    if (record_size == 0 || count > (body_end - pos) / record_size) {
      *error = "corrupt (section " + std::to_string(tag) + " runs past the end)";
      return false;
    }
    const char* payload = data + pos;
    const size_t bytes = count * record_size;
    pos += bytes;
    std::string why;
    bool ok = true;
    // Every table section needs the segment's bases: its header comes first.
    if (!have_header && tag != kSegment) {
      if (!first) {
        *error = "corrupt (a segment after the first has no segment header)";
        return false;
      }
      have_header = true;  // a dump without the section is one last segment, bases 0
    }
    bool gpu_section = false;
    ForEachGpuKind(*result, [&](GpuKind kind, auto& records) {
      if (SectionOf(kind) != tag) return;
      gpu_section = true;
      ok = AppendSection(payload, record_size, count, &records, &why);
    });
    if (!gpu_section) switch (tag) {
      case kSegment:
        ok = !have_header && TakeOne(payload, record_size, count, seg, &why);
        have_header = true;
        break;
      case kInfo: {
        ProfileInfo info;
        ok = DecodeInfo(BlobReader(payload, bytes), &info);
        if (ok && !first) info.start_ns = result->info.start_ns;  // the run's start
        if (ok) result->info = std::move(info);
        break;
      }
      case kStrings:
        ok = DecodeStrings(BlobReader(payload, bytes), seg->strings, &result->strings);
        break;
      case kCounters: {
        Counters c;
        ok = TakeOne(payload, record_size, count, &c, &why);
        if (ok) AddCounters(&result->counters, c);
        break;
      }
      case kCollectorCost: {
        CollectorCost c;
        ok = TakeOne(payload, record_size, count, &c, &why);
        if (ok) AddCollectorCost(&result->collector_cost, c);
        break;
      }
      case kDomains:
        ok = AppendSection(payload, record_size, count, &result->domains, &why, seg->domains);
        break;
      case kThreads: ok = AppendSection(payload, record_size, count, &threads, &why); break;
      case kDevices: ok = AppendSection(payload, record_size, count, &devices, &why); break;
      case kRanges: ok = AppendSection(payload, record_size, count, &result->ranges, &why); break;
      case kMarks: ok = AppendSection(payload, record_size, count, &result->marks, &why); break;
      case kApiCalls:
        ok = AppendSection(payload, record_size, count, &result->api_calls, &why);
        break;
      case kLaunchConfigs:
        ok = AppendSection(payload, record_size, count, &result->launch_configs, &why,
                           seg->launch_configs);
        break;
      case kSteps: ok = AppendSection(payload, record_size, count, &result->steps, &why); break;
      case kApiNames:
        ok = AppendSection(payload, record_size, count, &result->api_names, &why, seg->api_names);
        break;
      case kStacks:
        ok = AppendSection(payload, record_size, count, &result->stacks, &why, seg->stacks);
        break;
      case kStackPcs:
        ok = AppendSection(payload, record_size, count, &result->stack_pcs, &why, seg->stack_pcs);
        break;
      case kApiStacks:
        ok = AppendSection(payload, record_size, count, &result->api_stacks, &why);
        break;
      case kModules: ok = AppendSection(payload, record_size, count, &modules, &why); break;
      case kStackCounters: {
        StackCounters sc;
        ok = TakeOne(payload, record_size, count, &sc, &why);
        if (ok) {
          result->stack_counters.captured += sc.captured;
          result->stack_counters.dropped += sc.dropped;
        }
        break;
      }
      default: break;  // a section this version does not know: skip it (same format version)
    }
    if (!ok) {
      *error = "corrupt (section " + std::to_string(tag) + (why.empty() ? "" : ": " + why) + ")";
      return false;
    }
  }
  UnionThreads(threads, &result->threads);
  UnionBy(devices, &result->devices,
          [](const DeviceInfo& a, const DeviceInfo& b) { return a.id == b.id; });
  UnionBy(modules, &result->modules, [](const ModuleInfo& a, const ModuleInfo& b) {
    return a.path == b.path && a.build_id == b.build_id && a.bias == b.bias &&
           a.start == b.start && a.end == b.end;
  });
  return true;
}

// After the last segment of a dump of several, or of one cut short: what each segment could not
// know alone. Ranges closed in a later segment than they opened come after that segment's own,
// so the order is made again; GPU records may sit in the segment after their call's, so the
// checks against calls are made over the whole run. In a dump cut short, launches made after its
// last GPU record ended are in flight, not lost: their records would have come in the next
// segment.
void JoinSegments(Profile* p, bool complete) {
  SortRangesAndMarks(p);
  CountUncorrelated(p);
  uint64_t until = UINT64_MAX;
  if (!complete) {
    until = 0;
    for (const Kernel& k : p->kernels) until = std::max(until, k.end_ns);
    for (const Memcpy& m : p->memcpys) until = std::max(until, m.end_ns);
    for (const Memset& m : p->memsets) until = std::max(until, m.end_ns);
  }
  p->info.incomplete_launches_in_flight = CheckGpuAgainstCalls(p, until);
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
  Profile result;
  result.domains.clear();  // the first segment brings the default domain with the others
  size_t start = 0;
  uint32_t segments = 0;
  bool last = false;
  while (start < data.size() && !last) {
    const std::span<const char> rest = data.subspan(start);
    // After a complete segment, fewer bytes than a header are a next segment cut short.
    if (segments != 0 && rest.size() < kHeader &&
        std::memcmp(rest.data(), kMagic, std::min(rest.size(), sizeof kMagic)) == 0) {
      break;
    }
    if (rest.size() < kHeader || std::memcmp(rest.data(), kMagic, sizeof kMagic) != 0) {
      if (segments == 0) return fail("not a gprof-run dump (bad magic)");
      return fail("corrupt (segment " + std::to_string(segments) + " has a bad magic)");
    }
    uint32_t version = 0;
    std::memcpy(&version, rest.data() + sizeof kMagic, 4);
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
    const size_t end = SegmentEnd(data, start);
    if (end == 0 || std::memcmp(data.data() + end - sizeof kEndMagic, kEndMagic,
                                sizeof kEndMagic) != 0) {
      if (segments == 0)
        return fail("truncated (no end marker): the writing process probably died mid-write");
      break;  // a last segment cut short: read up to the one before
    }
    const size_t body_end = end - kTrailer;
    uint64_t stored_hash = 0;
    std::memcpy(&stored_hash, data.data() + body_end + 8, 8);
    if (Checksum(data.data() + start, body_end - start) != stored_hash)
      return fail(segments == 0 ? "corrupt (checksum mismatch)"
                                : "corrupt (checksum mismatch in segment " +
                                      std::to_string(segments) + ")");
    SegmentHeader seg;
    std::string why;
    if (!ReadSegment(data.data(), start + kHeader, body_end, segments == 0, &result, &seg, &why))
      return fail(why);
    if (seg.index != segments)
      return fail("corrupt (segment " + std::to_string(segments) + " says it is segment " +
                  std::to_string(seg.index) + ")");
    ++segments;
    last = (seg.flags & kSegmentLast) != 0;
    start = end;
  }
  if (segments == 0) return fail("not a gprof-run dump (bad magic)");  // an empty file
  if (last && start != data.size()) return fail("corrupt (bytes after the last segment)");
  if (segments > 1 || !last) JoinSegments(&result, last);
  result.info.segments = segments;
  result.info.complete = last;
  result.info.incomplete_tail_bytes = data.size() - start;
  if (const std::string why = CheckProfile(result); !why.empty()) {
    return fail("corrupt (" + why + ")");
  }
  *p = std::move(result);
  return true;
}

}  // namespace gprof
