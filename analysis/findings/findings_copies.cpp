// Findings about copies (findings_rules.h): pageable_memcpy (async copies through pageable host
// memory), serialized_copy (host<->device copies that overlap no compute on another stream) and
// gemm_bias_copy (a device-to-device copy right before a GEMM in the same op: addmm's bias).
// Rules and thresholds: docs/FINDINGS.md.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/findings/findings_analysis.h"
#include "analysis/findings/findings_rules.h"

namespace gprof::findings_internal {
namespace {

// The places of the kMaxPlaces longest of `copies` (Profile::memcpys indices), longest first
// (the earlier first among equals): the copy with its stream and device, and its call's thread
// and enclosing ranges when the call was recorded.
std::vector<Place> LongestCopies(Analysis& a, std::vector<size_t> copies) {
  const Profile& p = a.p();
  std::stable_sort(copies.begin(), copies.end(), [&](size_t x, size_t y) {
    return Dur(p.memcpys[x].start_ns, p.memcpys[x].end_ns) >
           Dur(p.memcpys[y].start_ns, p.memcpys[y].end_ns);
  });
  std::vector<Place> places;
  for (size_t i = 0; i < copies.size() && i < kMaxPlaces; ++i) {
    const Memcpy& m = p.memcpys[copies[i]];
    Place pl = a.PlaceAt(m.start_ns, m.end_ns);
    pl.stream = m.stream_id;
    pl.device = m.device_id;
    pl.name = MemcpyName(m);
    const int64_t call = a.corr().ApiCall(m.correlation_id);
    if (call >= 0) {
      pl.thread = p.api_calls[call].tid;
      pl.context = a.EnclosingRanges(a.ApiEvent(static_cast<size_t>(call)));
    }
    places.push_back(std::move(pl));
  }
  return places;
}

bool HostDeviceCopy(CopyKind k) {
  return k == CopyKind::kHtoD || k == CopyKind::kDtoH || k == CopyKind::kHtoA ||
         k == CopyKind::kAtoH;
}

// A GEMM by its demangled name: cuBLAS's and CUTLASS's kernels say "gemm" (sm90_xmma_gemm_...,
// ampere_sgemm_..., cutlass_..._gemm_...), hand-written and Triton ones usually "matmul"/"mm_".
bool IsGemmKernel(std::string_view name) {
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower.find("gemm") != std::string::npos || lower.find("matmul") != std::string::npos;
}

}  // namespace

void PageableFinding(Analysis& a, std::vector<Finding>* out) {
  const Profile& p = a.p();
  std::vector<size_t> copies;
  uint64_t bytes = 0, time = 0, host = 0;
  for (size_t i = 0; i < p.memcpys.size(); ++i) {
    const Memcpy& m = p.memcpys[i];
    if (!m.is_async || !a.InWindow(m.start_ns)) continue;
    if (m.src_kind != MemKind::kPageable && m.dst_kind != MemKind::kPageable) continue;
    copies.push_back(i);
    bytes += m.bytes;
    time += Dur(m.start_ns, m.end_ns);
    const int64_t call = a.corr().ApiCall(m.correlation_id);
    if (call >= 0) host += Dur(p.api_calls[call].start_ns, p.api_calls[call].end_ns);
  }
  if (copies.empty()) return;
  const double share = Share(time, a.window());
  Finding f;
  f.id = "pageable_memcpy";
  f.severity = share >= kPageableWarnShare || copies.size() >= kPageableWarnCount
                   ? Severity::kWarn
                   : Severity::kInfo;
  f.places = LongestCopies(a, copies);
  f.where = f.places.front();
  f.evidence = {Count("copies", copies.size()), Bytes("bytes", bytes),
                Duration("copy_time_us", time), Pct("copy_time_pct", share),
                Duration("host_time_us", host)};
  f.title = std::to_string(copies.size()) + " async cop" + (copies.size() == 1 ? "y" : "ies") +
            " from or to pageable host memory (" + std::to_string(bytes) + " bytes, " +
            FormatDuration(time) + " on the GPU); the longest, " + f.where->name + " for " +
            FormatDuration(f.where->dur_ns);
  f.advice =
      "An async copy from or to pageable memory is staged through a pinned buffer by the "
      "driver: it does not overlap with compute, and into pageable memory it blocks the host. "
      "Allocate the host side pinned (tensor.pin_memory(), DataLoader(pin_memory=True), "
      "cudaMallocHost / cudaHostAlloc) and copy with non_blocking=True / cudaMemcpyAsync.";
  out->push_back(std::move(f));
}

void SerializedCopyFinding(Analysis& a, std::vector<Finding>* out) {
  const Profile& p = a.p();
  if (a.window() == 0) return;
  // Kernels per (device, stream), merged lazily into "kernels on every other stream".
  std::map<uint32_t, std::map<uint32_t, std::vector<Interval>>> kernels;  // device -> stream
  for (const Kernel& k : p.kernels) {
    kernels[a.KernelDevice(k)][k.stream_id].emplace_back(k.start_ns, k.end_ns);
  }
  std::map<std::pair<uint32_t, uint32_t>, std::vector<Interval>> others;
  const auto other_streams = [&](uint32_t dev, uint32_t stream) -> const std::vector<Interval>& {
    auto [it, fresh] = others.try_emplace({dev, stream});
    if (fresh) {
      std::vector<Interval> v;
      for (const auto& [s, ivs] : kernels[dev]) {
        if (s != stream) v.insert(v.end(), ivs.begin(), ivs.end());
      }
      it->second = MergeIntervals(std::move(v));
    }
    return it->second;
  };
  uint64_t copies = 0, copy_time = 0, serial_time = 0, serial_bytes = 0;
  std::vector<size_t> serial;
  std::set<uint32_t> streams;
  for (size_t i = 0; i < p.memcpys.size(); ++i) {
    const Memcpy& m = p.memcpys[i];
    // Synchronous and pageable copies cannot overlap anything by construction; sync and
    // pageable_memcpy report them. Here: async copies that could have overlapped and did not.
    if (!HostDeviceCopy(m.kind) || !a.InWindow(m.start_ns) || !m.is_async) continue;
    if (m.src_kind == MemKind::kPageable || m.dst_kind == MemKind::kPageable) continue;
    ++copies;
    copy_time += Dur(m.start_ns, m.end_ns);
    if (CoveredIn(other_streams(m.device_id, m.stream_id), m.start_ns, m.end_ns) != 0) continue;
    serial.push_back(i);
    serial_time += Dur(m.start_ns, m.end_ns);
    serial_bytes += m.bytes;
    streams.insert(m.stream_id);
  }
  bool compute = false;  // kernels in the window: without any, there is nothing to overlap with
  for (const Kernel& k : p.kernels) compute |= a.InWindow(k.start_ns);
  const double share = Share(serial_time, a.window());
  if (!compute || serial.empty() || share < kSerializedCopyMinShare) return;
  Finding f;
  f.id = "serialized_copy";
  f.severity = share >= kSerializedCopyWarnShare ? Severity::kWarn : Severity::kInfo;
  f.places = LongestCopies(a, serial);
  f.where = f.places.front();
  f.evidence = {Count("copies", copies),
                Count("serialized_copies", serial.size()),
                Bytes("serialized_bytes", serial_bytes),
                Duration("serialized_time_us", serial_time),
                Pct("serialized_time_pct", share),
                Duration("copy_time_us", copy_time),
                Count("streams", streams.size()),
                Duration("window_us", a.window())};
  f.title = std::to_string(serial.size()) + " of " + std::to_string(copies) +
            " async host-device copies from or to pinned memory overlap no kernel on another "
            "stream (" +
            FormatDuration(serial_time) + ", " + Percent(share) +
            " of the window); the longest, " + f.where->name + " for " +
            FormatDuration(f.where->dur_ns);
  f.advice =
      "While these copies run, the GPU computes nothing else. Issue them on a stream of their "
      "own from pinned memory (cudaMemcpyAsync, tensor.to(device, non_blocking=True) after "
      "pin_memory()) while kernels of the previous or next batch run on another stream, and "
      "order the two with events; or copy less (keep data on the GPU across steps).";
  out->push_back(std::move(f));
}

void GemmBiasCopyFinding(Analysis& a, std::vector<Finding>* out) {
  const Profile& p = a.p();
  struct Op {
    uint64_t count = 0, bytes = 0, copy_ns = 0, gemm_ns = 0;
    std::vector<std::pair<size_t, size_t>> pairs;  // (memcpy index, kernel index)
  };
  std::map<std::string, Op> ops;  // by the enclosing range's name ("" without one)
  const std::vector<HostEvent>& host = a.host();
  int64_t prev = -1;  // the previous call with GPU work on this thread
  for (size_t i = 0; i < host.size(); ++i) {
    const HostEvent& e = host[i];
    if (prev >= 0 && host[prev].tid != e.tid) prev = -1;
    if (!e.api || !a.InWindow(e.start)) continue;
    const std::span<const GpuRef> gpu = a.corr().Gpu(p.api_calls[e.index].correlation_id);
    if (gpu.empty()) continue;
    const int64_t before = prev;
    prev = static_cast<int64_t>(i);
    if (before < 0 || a.InnermostRange(before) != a.InnermostRange(static_cast<int64_t>(i))) {
      continue;
    }
    int64_t copy = -1, gemm = -1;
    for (const GpuRef& g : a.corr().Gpu(p.api_calls[host[before].index].correlation_id)) {
      if (g.kind == GpuKind::kMemcpy && p.memcpys[g.index].kind == CopyKind::kDtoD) copy = g.index;
    }
    for (const GpuRef& g : gpu) {
      if (g.kind == GpuKind::kKernel &&
          IsGemmKernel(a.names().KernelName(p.kernels[g.index].name))) {
        gemm = g.index;
      }
    }
    if (copy < 0 || gemm < 0) continue;
    const int64_t range = a.InnermostRange(static_cast<int64_t>(i));
    Op& op = ops[range < 0 ? std::string() : a.EventName(host[range])];
    const Memcpy& m = p.memcpys[copy];
    const Kernel& k = p.kernels[gemm];
    ++op.count;
    op.bytes += m.bytes;
    op.copy_ns += Dur(m.start_ns, m.end_ns);
    op.gemm_ns += Dur(k.start_ns, k.end_ns);
    op.pairs.emplace_back(copy, gemm);
  }
  if (ops.empty()) return;
  // The op whose copies cost the most GPU time.
  auto worst = ops.begin();
  uint64_t count = 0, bytes = 0, copy_ns = 0, gemm_ns = 0;
  for (auto it = ops.begin(); it != ops.end(); ++it) {
    if (it->second.copy_ns > worst->second.copy_ns) worst = it;
    count += it->second.count;
    bytes += it->second.bytes;
    copy_ns += it->second.copy_ns;
    gemm_ns += it->second.gemm_ns;
  }
  const std::string op_name = worst->first.empty() ? "no range" : worst->first;
  Finding f;
  f.id = "gemm_bias_copy";
  f.severity = Severity::kInfo;
  std::vector<std::pair<size_t, size_t>> pairs = worst->second.pairs;
  std::stable_sort(pairs.begin(), pairs.end(), [&](const auto& x, const auto& y) {
    return Dur(p.memcpys[x.first].start_ns, p.memcpys[x.first].end_ns) >
           Dur(p.memcpys[y.first].start_ns, p.memcpys[y.first].end_ns);
  });
  for (size_t i = 0; i < pairs.size() && i < kMaxPlaces; ++i) {
    const Memcpy& m = p.memcpys[pairs[i].first];
    const Kernel& k = p.kernels[pairs[i].second];
    Place pl = a.PlaceAt(m.start_ns, std::max(m.end_ns, k.end_ns));
    pl.stream = m.stream_id;
    pl.device = m.device_id;
    pl.name = MemcpyName(m) + " + " + a.names().KernelName(k.name);
    if (!worst->first.empty()) pl.context.push_back(worst->first);
    f.places.push_back(std::move(pl));
  }
  f.where = f.places.front();
  const double copy_share = Share(copy_ns, copy_ns + gemm_ns);
  f.evidence = {Text("op", op_name),
                Count("occurrences", count),
                Count("ops", ops.size()),
                Bytes("copy_bytes", bytes),
                Duration("copy_time_us", copy_ns),
                Duration("gemm_time_us", gemm_ns),
                Pct("copy_share_pct", copy_share)};
  f.title = std::to_string(count) + " device-to-device cop" + (count == 1 ? "y" : "ies") +
            " right before a GEMM in the same op (" + op_name + ": " +
            std::to_string(worst->second.count) + " of them); the copies take " +
            FormatDuration(copy_ns) + ", " + Percent(copy_share) + " of copy + GEMM time";
  f.advice =
      "This is how addmm (x @ w + b, nn.Linear with a bias) feeds cuBLAS: the bias is copied "
      "into the output, then the GEMM adds A*B to it in its epilogue (beta = 1). The copy is "
      "real memory traffic, not a fused add. A GEMM with a bias epilogue (cuBLASLt "
      "CUBLASLT_EPILOGUE_BIAS, torch's _addmm_activation / fused Linear in compiled graphs) "
      "avoids it; dropping a bias that a following normalization cancels avoids it too.";
  out->push_back(std::move(f));
}

}  // namespace gprof::findings_internal
