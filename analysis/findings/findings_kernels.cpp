// Findings about kernels (findings_rules.h): kernel_spread (instances of one kernel far apart),
// short_kernels (kernels shorter than their launch calls) and heavy_kernel (launches that follow
// an occupancy query in the same op: library-tuned GEMM/convolution kernels). Rules and
// thresholds: docs/FINDINGS.md.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <string_view>
#include <utility>

#include "analysis/findings/findings_analysis.h"
#include "analysis/findings/findings_rules.h"

namespace gprof::findings_internal {

void SpreadFindings(Analysis& a, std::vector<Finding>* out) {
  const Profile& p = a.p();
  std::map<std::string, std::vector<size_t>> by_name;  // demangled name -> kernel indices
  for (size_t i = 0; i < p.kernels.size(); ++i) {
    const Kernel& k = p.kernels[i];
    if (a.InWindow(k.start_ns)) by_name[a.names().KernelName(k.name)].push_back(i);
  }
  struct Candidate {
    uint64_t excess;  // time above the median, summed over the instances
    Finding finding;
  };
  std::vector<Candidate> found;
  for (const auto& [name, indices] : by_name) {
    if (indices.size() < kSpreadMinInstances) continue;
    std::vector<uint64_t> d;
    for (size_t i : indices) d.push_back(Dur(p.kernels[i].start_ns, p.kernels[i].end_ns));
    const SampleSummary s = SummarizeSamples(&d);  // sorts d
    if (s.median <= 0) continue;
    // p95 by nearest rank: the ceil(0.95 n)-th smallest sample.
    const size_t rank = (d.size() * 95 + 99) / 100;
    const uint64_t p95 = d[rank - 1];
    const double max_factor = static_cast<double>(s.max) / s.median;
    const double p95_factor = static_cast<double>(p95) / s.median;
    const uint64_t median = static_cast<uint64_t>(std::llround(s.median));
    if (max_factor < kSpreadMinMaxFactor && p95_factor < kSpreadMinP95Factor) continue;
    if (s.max < median + kSpreadMinExcessNs) continue;
    uint64_t excess = 0;
    for (uint64_t x : d) excess += x > median ? x - median : 0;
    // The slowest instances, first seen first among equals.
    std::vector<size_t> slow = indices;
    std::stable_sort(slow.begin(), slow.end(), [&](size_t x, size_t y) {
      return Dur(p.kernels[x].start_ns, p.kernels[x].end_ns) >
             Dur(p.kernels[y].start_ns, p.kernels[y].end_ns);
    });
    Finding f;
    f.id = "kernel_spread";
    f.severity = Severity::kInfo;
    for (size_t i = 0; i < slow.size() && i < kMaxPlaces; ++i) {
      const Kernel& k = p.kernels[slow[i]];
      Place pl = a.PlaceAt(k.start_ns, k.end_ns);
      pl.stream = k.stream_id;
      pl.device = a.KernelDevice(k);
      pl.name = name;
      f.places.push_back(std::move(pl));
    }
    f.where = f.places.front();
    f.evidence = {Text("kernel", name),
                  Count("instances", s.count),
                  Duration("median_us", median),
                  Duration("mean_us", static_cast<uint64_t>(std::llround(s.avg))),
                  Duration("min_us", s.min),
                  Duration("max_us", s.max),
                  Duration("p95_us", p95),
                  Duration("stddev_us", static_cast<uint64_t>(std::llround(s.stddev))),
                  FactorOf("max_factor", max_factor),
                  FactorOf("p95_factor", p95_factor)};
    f.title = name + ": the slowest of " + std::to_string(s.count) + " instances took " +
              FormatDuration(s.max) + ", " + Factor(max_factor) + " its median " +
              FormatDuration(median) + " (p95 " + FormatDuration(p95) + ", mean " +
              FormatDuration(static_cast<uint64_t>(std::llround(s.avg))) + ")";
    f.advice =
        "This kernel's time varies widely, so its mean (the table's average) misleads: read "
        "the median. Slow instances come from GPU clock changes (idle to boost), other work "
        "on the GPU, or different inputs; warm up before measuring and compare medians "
        "(gprof-run stats, gprof-run diff).";
    found.push_back({excess, std::move(f)});
  }
  std::stable_sort(found.begin(), found.end(),
                   [](const Candidate& x, const Candidate& y) { return x.excess > y.excess; });
  for (size_t i = 0; i < found.size() && i < kMaxSpreadFindings; ++i) {
    out->push_back(std::move(found[i].finding));
  }
}

void ShortKernelsFinding(Analysis& a, std::vector<Finding>* out) {
  const Profile& p = a.p();
  uint64_t kernels = 0;
  std::vector<uint64_t> kernel_ns, call_ns, delay_ns;
  for (const Kernel& k : p.kernels) {
    if (!a.InWindow(k.start_ns)) continue;
    ++kernels;
    const int64_t call = a.corr().ApiCall(k.correlation_id);
    if (call < 0) continue;
    const ApiCall& c = p.api_calls[static_cast<size_t>(call)];
    const uint64_t kd = Dur(k.start_ns, k.end_ns), cd = Dur(c.start_ns, c.end_ns);
    if (kd >= cd) continue;
    kernel_ns.push_back(kd);
    call_ns.push_back(cd);
    delay_ns.push_back(Dur(c.start_ns, k.start_ns));
  }
  const uint64_t short_count = kernel_ns.size();
  const double share = Share(short_count, kernels);
  if (short_count < kShortKernelsMinCount || share < kShortKernelsMinShare) return;
  Finding f;
  f.id = "short_kernels";
  f.severity = Severity::kWarn;
  const uint64_t median_kernel = Median(kernel_ns), median_call = Median(call_ns),
                 median_delay = Median(delay_ns);
  f.evidence = {Count("kernels", kernels), Count("short_kernels", short_count),
                Pct("short_kernels_pct", share), Duration("median_kernel_us", median_kernel),
                Duration("median_launch_call_us", median_call),
                Duration("median_launch_to_start_us", median_delay)};
  Place pl = a.PlaceAt(a.ws(), a.we());
  pl.name = "the window";
  f.places.push_back(pl);
  f.where = f.places.front();
  f.title = std::to_string(short_count) + " of " + std::to_string(kernels) +
            " kernels are shorter than the call that launched them (median kernel " +
            FormatDuration(median_kernel) + ", median launch call " + FormatDuration(median_call) +
            "): the GPU waits for launches";
  f.advice =
      "Launch-bound: each kernel does less work than its launch costs. Fuse small ops (larger "
      "batches, fused kernels, torch.compile), or capture the repeated launches in a CUDA graph "
      "(torch.cuda.graphs, torch.compile(mode=\"reduce-overhead\")).";
  out->push_back(std::move(f));
}

namespace {

// The launch planning calls (CUDA runtime API, "Occupancy"): cuBLAS/cuDNN ask them before an
// adaptively sized launch; PyTorch's own elementwise and reduction kernels do not.
bool IsOccupancyQuery(std::string_view base) {
  return base.starts_with("cudaOccupancy") || base.starts_with("cuOccupancy");
}

}  // namespace

void HeavyKernelFinding(Analysis& a, std::vector<Finding>* out) {
  const Profile& p = a.p();
  struct Heavy {
    std::string op;  // enclosing range ("" without one)
    uint64_t launches = 0, gpu_ns = 0;
    size_t longest = 0;  // kernel index
  };
  std::map<std::pair<std::string, std::string>, Heavy> heavy;  // (kernel, op)
  uint64_t launches = 0, heavy_launches = 0, kernel_ns = 0, heavy_ns = 0;
  const std::vector<HostEvent>& host = a.host();
  int64_t query = -1;  // a pending occupancy query on this thread (host() index)
  int64_t last_api = -1;
  for (size_t i = 0; i < host.size(); ++i) {
    const HostEvent& e = host[i];
    if (last_api >= 0 && host[last_api].tid != e.tid) query = last_api = -1;
    if (!e.api) continue;
    const int64_t me = static_cast<int64_t>(i);
    const ApiCall& c = p.api_calls[e.index];
    if (IsOccupancyQuery(BaseApiName(a.names().ApiCallName(c)))) {
      query = last_api = me;
      continue;
    }
    std::vector<size_t> ks;
    for (const GpuRef& g : a.corr().Gpu(c.correlation_id)) {
      if (g.kind == GpuKind::kKernel && a.InWindow(p.kernels[g.index].start_ns)) {
        ks.push_back(g.index);
      }
    }
    // "The same op": the query's innermost range is the launch's; without a range, the query must
    // be the call just before the launch.
    const int64_t range = a.InnermostRange(me);
    const bool follows = query >= 0 && a.InnermostRange(query) == range &&
                         (range >= 0 || query == last_api);
    last_api = me;
    if (ks.empty()) continue;
    for (size_t k : ks) {
      ++launches;
      kernel_ns += Dur(p.kernels[k].start_ns, p.kernels[k].end_ns);
    }
    if (!follows) continue;
    query = -1;  // one query, one adaptive launch
    const std::string op = range < 0 ? std::string() : a.EventName(host[range]);
    for (size_t k : ks) {
      const uint64_t d = Dur(p.kernels[k].start_ns, p.kernels[k].end_ns);
      Heavy& h = heavy[{a.names().KernelName(p.kernels[k].name), op}];
      h.op = op;
      if (h.launches == 0 || d > Dur(p.kernels[h.longest].start_ns, p.kernels[h.longest].end_ns)) {
        h.longest = k;
      }
      ++h.launches;
      h.gpu_ns += d;
      ++heavy_launches;
      heavy_ns += d;
    }
  }
  if (heavy.empty()) return;
  std::vector<std::pair<std::pair<std::string, std::string>, Heavy>> ranked(heavy.begin(),
                                                                           heavy.end());
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& x, const auto& y) { return x.second.gpu_ns > y.second.gpu_ns; });
  Finding f;
  f.id = "heavy_kernel";
  f.severity = Severity::kInfo;
  for (size_t i = 0; i < ranked.size() && i < kMaxPlaces; ++i) {
    const Heavy& h = ranked[i].second;
    const Kernel& k = p.kernels[h.longest];
    Place pl = a.PlaceAt(k.start_ns, k.end_ns);
    pl.stream = k.stream_id;
    pl.device = a.KernelDevice(k);
    pl.name = ranked[i].first.first;
    if (!h.op.empty()) pl.context.push_back(h.op);
    pl.context.push_back(std::to_string(h.launches) + " launches, " + FormatDuration(h.gpu_ns));
    f.places.push_back(std::move(pl));
  }
  f.where = f.places.front();
  const double share = Share(heavy_ns, kernel_ns);
  const Heavy& top = ranked.front().second;
  f.evidence = {Count("heavy_launches", heavy_launches),
                Count("launches", launches),
                Count("heavy_kernels", heavy.size()),
                Duration("heavy_gpu_time_us", heavy_ns),
                Pct("heavy_gpu_time_pct", share),
                Text("top_kernel", ranked.front().first.first),
                Text("top_op", top.op),
                Duration("top_kernel_time_us", top.gpu_ns)};
  f.title = std::to_string(heavy_launches) + " of " + std::to_string(launches) +
            " kernel launches follow an occupancy query in the same op (library-tuned, "
            "GEMM/convolution-class kernels: " + Percent(share) + " of kernel time); the top, " +
            ranked.front().first.first + (top.op.empty() ? "" : " in " + top.op) + ", " +
            FormatDuration(top.gpu_ns);
  f.advice =
      "An occupancy query (cudaOccupancyMaxActiveBlocksPerMultiprocessor) before a launch marks "
      "a heavy kernel whose library (cuBLAS, cuDNN) sized it for this problem and this GPU at "
      "run time; kernels launched without one are elementwise or reduction work. In a "
      "compute-bound run these are the kernels to speed up (precision, shapes that tile well, "
      "TF32/bf16 tensor cores).";
  out->push_back(std::move(f));
}

}  // namespace gprof::findings_internal
