// Clock alignment of a merge's inputs (see clock_align.h).
#include "analysis/ranks/clock_align.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>

#include "analysis/attribution/names.h"
#include "analysis/ranks/merge_findings.h"

namespace gprof {
namespace {

// The median of `v` (the lower middle value of an even count: an offset that one instance
// measured, not an average of two).
int64_t Median(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>((v.size() - 1) / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

uint64_t Distance(int64_t a, int64_t b) {
  return a > b ? static_cast<uint64_t>(a - b) : static_cast<uint64_t>(b - a);
}

// The best class both inputs have, if any.
std::optional<CollectiveClass> SharedClass(const std::vector<CollectiveEnds>& a,
                                           const std::vector<CollectiveEnds>& b) {
  std::optional<CollectiveClass> best;
  for (const CollectiveEnds& x : a) {
    for (const CollectiveEnds& y : b) {
      if (x.name == y.name && x.kind == y.kind && !x.ends.empty() && !y.ends.empty() &&
          (!best || x.kind < *best)) {
        best = x.kind;
      }
    }
  }
  return best;
}

// d_k = reference's end - input's end, over the instances of every collective of class `kind`
// the two share (the k-th of one name against the k-th of the same name).
std::vector<int64_t> EndDifferences(const std::vector<CollectiveEnds>& ref,
                                    const std::vector<CollectiveEnds>& in, CollectiveClass kind) {
  std::vector<int64_t> d;
  for (const CollectiveEnds& x : ref) {
    if (x.kind != kind) continue;
    for (const CollectiveEnds& y : in) {
      if (y.name != x.name || y.kind != kind) continue;
      const size_t n = std::min(x.ends.size(), y.ends.size());
      for (size_t k = 0; k < n; ++k) {
        d.push_back(static_cast<int64_t>(x.ends[k]) - static_cast<int64_t>(y.ends[k]));
      }
    }
  }
  return d;
}

// Whether a pair's CLOCK_MONOTONIC is plausibly the kernel's, time since boot: the boot time it
// implies (realtime - monotonic) is after 2000-01-01. A time faker preloaded into the process
// (libfaketime) makes CLOCK_MONOTONIC read like the faked CLOCK_REALTIME, and the pair then says
// nothing; so does a pair never recorded (an older dump: realtime 0).
constexpr uint64_t kYear2000Ns = 946'684'800ull * 1'000'000'000ull;
bool PlausiblePair(const ClockPair& c) {
  return c.realtime_ns > c.monotonic_ns && c.realtime_ns - c.monotonic_ns > kYear2000Ns;
}

// Same host and boot, both with their start pair: the realtime offset the pairs give, 0 when it is
// within what the reads can tell apart.
std::optional<int64_t> PairsOffset(const ProfileInfo& ref, const ProfileInfo& in) {
  const ProcessPlacement& a = ref.placement;
  const ProcessPlacement& b = in.placement;
  if (ref.hostname != in.hostname || a.boot_id.empty() || a.boot_id != b.boot_id ||
      !PlausiblePair(a.clock_start) || !PlausiblePair(b.clock_start)) {
    return std::nullopt;
  }
  const int64_t ra = static_cast<int64_t>(a.clock_start.realtime_ns - a.clock_start.monotonic_ns);
  const int64_t rb = static_cast<int64_t>(b.clock_start.realtime_ns - b.clock_start.monotonic_ns);
  const int64_t offset = ra - rb;
  // The reads' own uncertainty, plus NTP's slewing of CLOCK_REALTIME against CLOCK_MONOTONIC
  // between the two starts (at most 500 ppm, adjtimex(2)).
  const uint64_t apart = Distance(static_cast<int64_t>(a.clock_start.monotonic_ns),
                                  static_cast<int64_t>(b.clock_start.monotonic_ns));
  const uint64_t bound = a.clock_start.read_ns + b.clock_start.read_ns + apart / 2000;
  return Distance(offset, 0) <= bound ? 0 : offset;
}

ClockAlignment AlignOne(const ClockInput& ref, const ClockInput& in) {
  ClockAlignment a;
  const std::optional<int64_t> pairs = PairsOffset(*ref.info, *in.info);
  if (const auto kind = SharedClass(*ref.collectives, *in.collectives)) {
    const std::vector<int64_t> d = EndDifferences(*ref.collectives, *in.collectives, *kind);
    a.method = ClockMethod::kCollectives;
    a.kind = *kind;
    a.instances = d.size();
    a.offset_ns = Median(d);
    std::vector<int64_t> dev;
    dev.reserve(d.size());
    for (int64_t x : d) dev.push_back(static_cast<int64_t>(Distance(x, a.offset_ns)));
    a.residual_ns = static_cast<uint64_t>(Median(std::move(dev)));
    if (pairs && Distance(*pairs, a.offset_ns) <= static_cast<uint64_t>(kPairsAgreeNs)) {
      a.collectives_offset_ns = a.offset_ns;
      a.method = ClockMethod::kClockPairs;
      a.offset_ns = *pairs;
    }
  } else if (pairs) {
    a.method = ClockMethod::kClockPairs;
    a.offset_ns = *pairs;
  }
  return a;
}

// The spread after alignment (ClockSpread): the reference's most frequent collective of the best
// class that every input has.
}  // namespace

ClockSpread SpreadAfter(const std::vector<ClockInput>& inputs,
                        const std::vector<ClockAlignment>& al) {
  ClockSpread out;
  if (inputs.empty()) return out;
  const CollectiveEnds* best = nullptr;
  std::vector<const CollectiveEnds*> chosen;
  std::vector<int64_t> chosen_offsets;
  // Inputs without any collective (a launcher's own process) take no part.
  size_t taking_part = 0;
  for (const ClockInput& in : inputs) taking_part += in.collectives->empty() ? 0 : 1;
  for (const CollectiveEnds& x : *inputs[0].collectives) {
    std::vector<const CollectiveEnds*> each;
    std::vector<int64_t> offsets;
    for (size_t i = 0; i < inputs.size(); ++i) {
      for (const CollectiveEnds& y : *inputs[i].collectives) {
        if (y.name == x.name && y.kind == x.kind && !y.ends.empty()) {
          each.push_back(&y);
          offsets.push_back(al[i].offset_ns);
          break;
        }
      }
    }
    if (each.size() != taking_part || each.size() < 2) continue;
    if (best == nullptr || x.kind < best->kind ||
        (x.kind == best->kind && x.ends.size() > best->ends.size())) {
      best = &x;
      chosen = std::move(each);
      chosen_offsets = std::move(offsets);
    }
  }
  if (best == nullptr) return out;
  size_t n = SIZE_MAX;
  for (const CollectiveEnds* c : chosen) n = std::min(n, c->ends.size());
  std::vector<int64_t> spreads;
  for (size_t k = 0; k < n; ++k) {
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t i = 0; i < chosen.size(); ++i) {
      const uint64_t t = AlignedNs(chosen[i]->ends[k], chosen_offsets[i]);
      lo = std::min(lo, t);
      hi = std::max(hi, t);
    }
    spreads.push_back(static_cast<int64_t>(hi - lo));
    out.max_ns = std::max(out.max_ns, hi - lo);
  }
  out.instances = n;
  out.median_ns = static_cast<uint64_t>(Median(std::move(spreads)));
  out.name = best->name;
  return out;
}

bool CollectiveRangeClass(std::string_view name, CollectiveClass* kind) {
  if (name.starts_with("gloo:")) {
    *kind = CollectiveClass::kHostWork;
    return true;
  }
  if (name.starts_with("nccl:") || name.starts_with("c10d::")) {
    *kind = CollectiveClass::kHostCall;
    return true;
  }
  return false;
}

std::vector<CollectiveEnds> SurveyCollectives(const Profile& p) {
  // By name: (start, end) of each instance, ordered by start at the end.
  std::map<std::pair<std::string, CollectiveClass>, std::vector<std::pair<uint64_t, uint64_t>>>
      found;
  for (const HostRange& r : p.ranges) {
    CollectiveClass kind;
    if ((r.flags & kRangeOpenAtEnd) != 0 || r.end_ns < r.start_ns) continue;
    const std::string_view name = p.strings.Get(r.name);
    if (CollectiveRangeClass(name, &kind)) {
      found[{std::string(name), kind}].emplace_back(r.start_ns, r.end_ns);
    }
  }
  if (!p.kernels.empty()) {
    NameCache names(p);
    for (const Kernel& k : p.kernels) {
      const std::string& name = names.KernelName(k.name);
      if (IsCommunicationKernel(name)) {
        found[{name, CollectiveClass::kGpuKernel}].emplace_back(k.start_ns, k.end_ns);
      }
    }
  }
  std::vector<CollectiveEnds> out;
  for (auto& [key, spans] : found) {
    std::sort(spans.begin(), spans.end());
    CollectiveEnds c;
    c.name = key.first;
    c.kind = key.second;
    const size_t n = std::min(spans.size(), kMaxCollectiveEnds);
    c.ends.reserve(n);
    for (size_t i = 0; i < n; ++i) c.ends.push_back(spans[i].second);
    out.push_back(std::move(c));
  }
  return out;
}

std::string_view ClockMethodName(ClockMethod m) {
  switch (m) {
    case ClockMethod::kReference: return "reference";
    case ClockMethod::kCollectives: return "collectives";
    case ClockMethod::kClockPairs: return "clock_pairs";
    case ClockMethod::kNone: return "none";
  }
  return "none";
}

std::vector<ClockAlignment> AlignClocks(const std::vector<ClockInput>& inputs) {
  std::vector<ClockAlignment> out;
  if (inputs.empty()) return out;
  out.emplace_back().method = ClockMethod::kReference;
  for (size_t i = 1; i < inputs.size(); ++i) out.push_back(AlignOne(inputs[0], inputs[i]));
  return out;
}

}  // namespace gprof
