// Dump reader (format in dump.h; the writer is dump.cpp). ReadDump runs in the launcher.
#include "model/dump.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include "model/dump_codec.h"
#include "model/gpu_checks.h"
#include "model/output_file.h"

namespace gprof {

using namespace dump_detail;

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

constexpr size_t kHeader = kDumpHeaderBytes;
constexpr size_t kTrailer = kDumpTrailerBytes;

}  // namespace

namespace dump_detail {

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
        if (ok) {
          info.placement = std::move(result->info.placement);  // its own section
          result->info = std::move(info);
        }
        break;
      }
      case kPlacement: {
        ProcessPlacement placement;
        ok = DecodePlacement(BlobReader(payload, bytes), &placement);
        // The clocks at start are the first segment's; the rest is the latest segment's.
        if (ok && !first) placement.clock_start = result->info.placement.clock_start;
        if (ok) result->info.placement = std::move(placement);
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
      case kThreadCpu:
        ok = AppendSection(payload, record_size, count, &result->thread_cpu, &why);
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
      case kCpuSamples:
        ok = AppendSection(payload, record_size, count, &result->cpu_samples, &why);
        break;
      case kCpuSampleCounters: {
        CpuSampleCounters c;
        ok = TakeOne(payload, record_size, count, &c, &why);
        if (ok) {
          result->cpu_sample_counters.hz = c.hz;
          result->cpu_sample_counters.backend = c.backend;
          result->cpu_sample_counters.taken += c.taken;
          result->cpu_sample_counters.dropped += c.dropped;
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
}  // namespace dump_detail

namespace {

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