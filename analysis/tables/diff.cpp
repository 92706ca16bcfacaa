// Profile diff (see diff.h). Launcher process only.
#include "analysis/tables/diff.h"

#include <algorithm>
#include <iterator>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>
#include <unordered_map>

#include "analysis/attribution/intervals.h"
#include "analysis/findings/findings.h"
#include "analysis/tables/key_averages.h"
#include "analysis/tables/stats.h"
#include "text/format.h"

namespace gprof {
namespace {

}  // namespace

std::string_view DiffKindName(DiffKind kind) {
  switch (kind) {
    case DiffKind::kKernel: return "kernel";
    case DiffKind::kOp: return "op";
    case DiffKind::kRange: return "range";
  }
  return "?";
}

std::optional<double> DiffRow::Ratio() const {
  if (a.total_ns == 0) return std::nullopt;
  return static_cast<double>(b.total_ns) / static_cast<double>(a.total_ns);
}

void DiffInput::Add(const Profile& p) {
  ++profiles_;
  wall_.emplace_back(p.info.start_ns, p.info.end_ns);
  for (const Kernel& k : p.kernels) gpu_.emplace_back(k.start_ns, k.end_ns);
  for (const Memcpy& m : p.memcpys) gpu_.emplace_back(m.start_ns, m.end_ns);
  for (const Memset& m : p.memsets) gpu_.emplace_back(m.start_ns, m.end_ns);
  kernels_ += p.kernels.size();
  for (const Finding& f : FindFindings(p)) findings_.insert(f.id);
  // The table's own rows and counts (nesting, folding, names), with each instance's time.
  KeyAveragesOptions options;
  options.instances = true;
  for (EventStats& e : KeyAverages(p, options)) {
    self_cpu_ns_ += e.self_cpu_ns;
    DiffKind kind = DiffKind::kRange;
    switch (e.kind) {
      case RowKind::kDevice: kind = DiffKind::kKernel; break;
      case RowKind::kOp: kind = DiffKind::kOp; break;
      case RowKind::kRange: kind = DiffKind::kRange; break;
      case RowKind::kSync: continue;  // the waits: the API call that waited is the op row
    }
    std::vector<uint64_t>& samples = samples_[{kind, e.name}];
    samples.insert(samples.end(), e.instances_ns.begin(), e.instances_ns.end());
  }
}

DiffTotals DiffInput::Totals() const {
  DiffTotals t;
  t.profiles = profiles_;
  t.wall_ns = UnionNs(wall_);
  t.gpu_busy_ns = UnionNs(gpu_);
  t.kernels = kernels_;
  t.self_cpu_ns = self_cpu_ns_;
  return t;
}

ProfileDiff DiffProfiles(const DiffInput& a, const DiffInput& b) {
  ProfileDiff d;
  d.a = a.Totals();
  d.b = b.Totals();
  const auto side = [](const auto& samples, const auto& key) {
    DiffSide s;
    const auto it = samples.find(key);
    if (it == samples.end()) return s;
    std::vector<uint64_t> v = it->second;
    const SampleSummary sum = SummarizeSamples(&v);
    s.count = sum.count;
    s.total_ns = sum.total;
    s.median_ns = sum.median;
    return s;
  };
  std::set<std::pair<DiffKind, std::string>> keys;
  for (const auto& entry : a.samples()) keys.insert(entry.first);
  for (const auto& entry : b.samples()) keys.insert(entry.first);
  for (const auto& key : keys) {
    DiffRow row;
    row.kind = key.first;
    row.name = key.second;
    row.a = side(a.samples(), key);
    row.b = side(b.samples(), key);
    const auto few = [](uint64_t n) { return n > 0 && n < kDiffNoiseMinInstances; };
    row.noisy = few(row.a.count) || few(row.b.count);
    d.rows.push_back(std::move(row));
  }
  std::stable_sort(d.rows.begin(), d.rows.end(), [](const DiffRow& x, const DiffRow& y) {
    if (x.kind != y.kind) return x.kind < y.kind;
    const uint64_t dx = static_cast<uint64_t>(std::llabs(x.DeltaNs()));
    const uint64_t dy = static_cast<uint64_t>(std::llabs(y.DeltaNs()));
    if (dx != dy) return dx > dy;
    return x.name < y.name;
  });
  std::set_difference(b.findings().begin(), b.findings().end(), a.findings().begin(),
                      a.findings().end(), std::back_inserter(d.findings_appeared));
  std::set_difference(a.findings().begin(), a.findings().end(), b.findings().begin(),
                      b.findings().end(), std::back_inserter(d.findings_disappeared));
  return d;
}

ProfileDiff DiffProfiles(const Profile& a, const Profile& b) {
  DiffInput in_a, in_b;
  in_a.Add(a);
  in_b.Add(b);
  return DiffProfiles(in_a, in_b);
}

void KeepOnlyKind(ProfileDiff* diff, DiffKind kind) {
  diff->kinds = {kind};
  std::erase_if(diff->rows, [&](const DiffRow& r) { return r.kind != kind; });
}

namespace {

std::string SignedDuration(int64_t ns) {
  if (ns == 0) return FormatDuration(0);
  const uint64_t magnitude = ns < 0 ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  return (ns < 0 ? "-" : "+") + FormatDuration(magnitude);
}

std::string SignedCount(int64_t n) { return (n > 0 ? "+" : "") + std::to_string(n); }

std::string Fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

std::optional<double> RatioOf(uint64_t a, uint64_t b) {
  if (a == 0) return std::nullopt;
  return static_cast<double>(b) / static_cast<double>(a);
}

std::string RatioText(const std::optional<double>& r) { return r ? Fixed(*r, 2) + "x" : "-"; }

// A median in whole ns for the table (half a ns rounds up).
uint64_t MedianNs(double median) { return static_cast<uint64_t>(median + 0.5); }

std::string Note(const DiffRow& r) {
  std::string note = r.OnlyInA() ? "only in A" : r.OnlyInB() ? "only in B" : "";
  if (r.noisy) note += std::string(note.empty() ? "" : "; ") + "few";
  return note;
}

std::string_view SectionTitle(DiffKind kind) {
  switch (kind) {
    case DiffKind::kKernel: return "GPU kernels, copies and memsets";
    case DiffKind::kOp: return "Host ops (torch operators, CUDA API calls)";
    case DiffKind::kRange: return "Ranges (NVTX ranges, torch annotations, steps)";
  }
  return "";
}

// Fixed-width columns: each as wide as its widest cell; `left[i]` aligns column i left. The
// last column is not padded, so long kernel names go there.
std::string Columns(const std::vector<std::vector<std::string>>& lines,
                    const std::vector<bool>& left) {
  std::vector<size_t> width(left.size(), 0);
  for (const auto& cells : lines) {
    for (size_t i = 0; i < cells.size(); ++i) width[i] = std::max(width[i], cells[i].size());
  }
  std::string out;
  for (const auto& cells : lines) {
    std::string line;
    for (size_t i = 0; i < cells.size(); ++i) {
      const std::string pad(width[i] - cells[i].size(), ' ');
      line += (i > 0 ? "  " : "") + (left[i] ? cells[i] + pad : pad + cells[i]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string Profiles(int n) { return std::to_string(n) + (n == 1 ? " profile" : " profiles"); }

}  // namespace

std::string FormatDiffTable(const ProfileDiff& d) {
  std::string out = "gprof-run diff\n  A: " + d.label_a + " (" + Profiles(d.a.profiles) +
                    ")\n  B: " + d.label_b + " (" + Profiles(d.b.profiles) + ")\n\nTotals\n";
  const auto time_line = [](const char* name, uint64_t a, uint64_t b) {
    return std::vector<std::string>{
        name, FormatDuration(a), FormatDuration(b),
        SignedDuration(static_cast<int64_t>(b) - static_cast<int64_t>(a)),
        RatioText(RatioOf(a, b))};
  };
  out += Columns(
      {{"", "A", "B", "Delta", "Ratio"},
       time_line("Wall time", d.a.wall_ns, d.b.wall_ns),
       time_line("GPU busy", d.a.gpu_busy_ns, d.b.gpu_busy_ns),
       {"Kernels", std::to_string(d.a.kernels), std::to_string(d.b.kernels),
        SignedCount(static_cast<int64_t>(d.b.kernels) - static_cast<int64_t>(d.a.kernels)),
        RatioText(RatioOf(d.a.kernels, d.b.kernels))},
       time_line("Self CPU total", d.a.self_cpu_ns, d.b.self_cpu_ns)},
      {true, false, false, false, false});
  const auto ids = [](const std::vector<std::string>& v) {
    std::string s;
    for (const std::string& id : v) s += (s.empty() ? "" : ", ") + id;
    return s;
  };
  if (!d.findings_appeared.empty()) out += "Findings only in B: " + ids(d.findings_appeared) + "\n";
  if (!d.findings_disappeared.empty()) {
    out += "Findings only in A: " + ids(d.findings_disappeared) + "\n";
  }
  bool any_noisy = false;
  for (DiffKind kind : d.kinds) {
    out += "\n" + std::string(SectionTitle(kind)) + ", by change of total\n";
    std::vector<std::vector<std::string>> lines = {{"Delta", "Ratio", "Total A", "Total B",
                                                    "Count A", "Count B", "Median A",
                                                    "Median B", "Note", "Name"}};
    for (const DiffRow& r : d.rows) {
      if (r.kind != kind) continue;
      any_noisy = any_noisy || r.noisy;
      lines.push_back({SignedDuration(r.DeltaNs()), RatioText(r.Ratio()),
                       FormatDuration(r.a.total_ns), FormatDuration(r.b.total_ns),
                       std::to_string(r.a.count), std::to_string(r.b.count),
                       r.a.count ? FormatDuration(MedianNs(r.a.median_ns)) : "-",
                       r.b.count ? FormatDuration(MedianNs(r.b.median_ns)) : "-", Note(r),
                       r.name});
    }
    if (lines.size() == 1) {
      out += "  (none in either profile)\n";
      continue;
    }
    out += Columns(lines, {false, false, false, false, false, false, false, false, true, true});
  }
  if (any_noisy) {
    out += "\nfew: fewer than " + std::to_string(kDiffNoiseMinInstances) +
           " instances in A or B; one slow instance can move the total and the median, so the "
           "change may be noise.\n";
  }
  return out;
}

std::string FormatDiffCsv(const ProfileDiff& d) {
  std::string out =
      "kind,name,count_a,count_b,total_a_ns,total_b_ns,delta_ns,ratio,median_a_ns,median_b_ns,"
      "note\n";
  for (const DiffRow& r : d.rows) {
    const std::optional<double> ratio = r.Ratio();
    out += std::string(DiffKindName(r.kind)) + "," + CsvQuote(r.name) + "," +
           std::to_string(r.a.count) + "," + std::to_string(r.b.count) + "," +
           std::to_string(r.a.total_ns) + "," + std::to_string(r.b.total_ns) + "," +
           std::to_string(r.DeltaNs()) + "," + (ratio ? Fixed(*ratio, 3) : "") + "," +
           Fixed(r.a.median_ns, 1) + "," + Fixed(r.b.median_ns, 1) + "," + Note(r) + "\n";
  }
  return out;
}

std::string FormatDiffJson(const ProfileDiff& d) {
  using Json = nlohmann::ordered_json;
  const auto ratio = [](const std::optional<double>& r) { return r ? Json(*r) : Json(nullptr); };
  Json doc = Json::object();
  doc["a"] = {{"label", d.label_a}, {"profiles", d.a.profiles}};
  doc["b"] = {{"label", d.label_b}, {"profiles", d.b.profiles}};
  const auto total = [&](uint64_t a, uint64_t b) {
    return Json{{"a", a}, {"b", b},
                {"delta", static_cast<int64_t>(b) - static_cast<int64_t>(a)},
                {"ratio", ratio(RatioOf(a, b))}};
  };
  doc["totals"] = {{"wall_ns", total(d.a.wall_ns, d.b.wall_ns)},
                   {"gpu_busy_ns", total(d.a.gpu_busy_ns, d.b.gpu_busy_ns)},
                   {"kernels", total(d.a.kernels, d.b.kernels)},
                   {"self_cpu_ns", total(d.a.self_cpu_ns, d.b.self_cpu_ns)}};
  doc["findings"] = {{"appeared", d.findings_appeared}, {"disappeared", d.findings_disappeared}};
  Json rows = Json::array();
  for (const DiffRow& r : d.rows) {
    rows.push_back({{"kind", DiffKindName(r.kind)}, {"name", r.name},
                    {"count_a", r.a.count}, {"count_b", r.b.count},
                    {"total_a_ns", r.a.total_ns}, {"total_b_ns", r.b.total_ns},
                    {"delta_ns", r.DeltaNs()}, {"ratio", ratio(r.Ratio())},
                    {"median_a_ns", r.a.median_ns}, {"median_b_ns", r.b.median_ns},
                    {"only_in", r.OnlyInA() ? Json("A") : r.OnlyInB() ? Json("B") : Json()},
                    {"noisy", r.noisy}});
  }
  doc["rows"] = std::move(rows);
  // Invalid UTF-8 in a name is replaced rather than thrown on.
  return doc.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace gprof
