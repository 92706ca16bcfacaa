// PartFindings (see findings_parts.h).
#include "analysis/findings/findings_parts.h"

#include <utility>

namespace gprof {
namespace {

std::string Subject(const Finding& f) {
  std::string s = f.id;
  if (f.where) {
    const Place& p = *f.where;
    if (p.device) s += "\x1f" "device " + std::to_string(*p.device);
    if (p.stream) s += "\x1f" "stream " + std::to_string(*p.stream);
    if (f.id == "kernel_spread" || f.id == "heavy_kernel") s += "\x1f" + p.name;
  }
  return s;
}

// Whether `a` is the better one to show: the larger saving, then the more severe.
bool Better(const Finding& a, const Finding& b) {
  const uint64_t sa = a.saving ? a.saving->run_ns : 0, sb = b.saving ? b.saving->run_ns : 0;
  if (sa != sb) return sa > sb;
  return a.severity > b.severity;
}

void Shift(Place* p, uint64_t shift_ns) { p->ts_ns += shift_ns; }

}  // namespace

void PartFindings::AddPart(std::vector<Finding> found, uint64_t shift_ns) {
  ++parts_;
  for (Finding& f : found) {
    if (f.where) Shift(&*f.where, shift_ns);
    for (Place& p : f.places) Shift(&p, shift_ns);
    const std::string subject = Subject(f);
    auto [it, fresh] = kept_.try_emplace(subject);
    if (fresh) order_.push_back(subject);
    ++it->second.seen;
    if (fresh || Better(f, it->second.finding)) it->second.finding = std::move(f);
  }
}

std::vector<Finding> PartFindings::Take() {
  std::vector<Finding> out;
  for (const std::string& subject : order_) {
    Kept& k = kept_.at(subject);
    Finding& f = k.finding;
    if (parts_ > 1) {
      f.evidence.push_back({"parts_seen", Evidence::Kind::kCount, k.seen, 0, ""});
      f.evidence.push_back({"parts", Evidence::Kind::kCount, parts_, 0, ""});
    }
    out.push_back(std::move(f));
  }
  kept_.clear();
  order_.clear();
  SortFindings(&out);
  OrderBySaving(&out);
  return out;
}

}  // namespace gprof
