// Dump writer (format in dump.h; the reader is dump_read.cpp). WriteDump runs inside the profiled
// process, off the hot path (at exit and at the end of each schedule window).
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

// One segment: header, its sections, trailer. `seg` gives its index, whether it is the last, and
// where its tables' growth starts.
void WriteSegment(const Profile& p, const SegmentHeader& seg, OutputFile* f) {
  Sink s(f);
  s.Bytes(kMagic, sizeof kMagic);
  s.Pod(kDumpFormatVersion);
  s.Pod(uint32_t{0});
  s.Section(kSegment, std::vector<SegmentHeader>{seg});
  s.Blob(kInfo, EncodeInfo(p.info));
  s.Blob(kPlacement, EncodePlacement(p.info.placement));
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
  if (p.cpu_sample_counters.hz != 0) {  // absent without --cpu-sampling
    s.Section(kCpuSamples, p.cpu_samples);
    s.Section(kCpuSampleCounters, std::vector<CpuSampleCounters>{p.cpu_sample_counters});
  }
  // Thread CPU samples: absent when there are none; a reader that predates them skips the
  // section (it does not know the tag), so the format version stays.
  if (!p.thread_cpu.empty()) s.Section(kThreadCpu, p.thread_cpu);
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

}  // namespace gprof
