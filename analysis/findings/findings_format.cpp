// Findings as JSON (findings.json), text (findings.txt) and the short stderr section (see
// findings.h). Launcher process only.
#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "analysis/findings/findings.h"
#include "text/format.h"

namespace gprof {
namespace {

// ---- Output ----

using Json = nlohmann::ordered_json;

double Rounded(double v, double scale) { return std::round(v * scale) / scale; }

Json EvidenceJson(const Evidence& e) {
  switch (e.kind) {
    case Evidence::Kind::kCount:
    case Evidence::Kind::kBytes: return e.n;
    case Evidence::Kind::kDuration: return static_cast<double>(e.n) / 1000.0;
    case Evidence::Kind::kPercent:
    case Evidence::Kind::kFactor: return Rounded(e.x, 100.0);
    case Evidence::Kind::kText: return e.text;
  }
  return nullptr;
}

Json PlaceJson(const Place& pl) {
  Json j = Json::object();
  if (pl.step) j["step"] = *pl.step;
  j["ts_us"] = static_cast<double>(pl.ts_ns) / 1000.0;
  j["dur_us"] = static_cast<double>(pl.dur_ns) / 1000.0;
  if (pl.thread) j["thread"] = *pl.thread;
  if (pl.stream) j["stream"] = *pl.stream;
  if (pl.device) j["device"] = *pl.device;
  if (!pl.name.empty()) j["name"] = pl.name;
  if (!pl.context.empty()) j["context"] = pl.context;
  return j;
}

std::string PlaceText(const Place& pl) {
  std::string s = "ts " + Json(static_cast<double>(pl.ts_ns) / 1000.0).dump() + "us, dur " +
                  Json(static_cast<double>(pl.dur_ns) / 1000.0).dump() + "us";
  if (pl.step) s += ", step " + std::to_string(*pl.step);
  if (pl.thread) s += ", thread " + std::to_string(*pl.thread);
  if (pl.device) s += ", device " + std::to_string(*pl.device);
  if (pl.stream) s += ", stream " + std::to_string(*pl.stream);
  if (!pl.name.empty()) s += ": " + pl.name;
  for (size_t i = 0; i < pl.context.size(); ++i) s += (i == 0 ? " | " : "; ") + pl.context[i];
  return s;
}

// {"per_step_us", "per_run_us", "of_us", "method"} (per_step_us only with steps; of_us: the mean
// step, else the window).
Json SavingJson(const Saving& s) {
  Json j = Json::object();
  if (s.step_ns) j["per_step_us"] = static_cast<double>(*s.step_ns) / 1000.0;
  j["per_run_us"] = static_cast<double>(s.run_ns) / 1000.0;
  j["of_us"] = static_cast<double>(s.whole_ns) / 1000.0;
  j["method"] = s.method;
  return j;
}

std::string SavingText(const Saving& s) {
  std::string t = "up to " + FormatDuration(s.run_ns) + " per run";
  if (s.step_ns) {
    t += ", " + FormatDuration(*s.step_ns) + " of " + FormatDuration(s.whole_ns) + " per step";
  }
  return t + " (" + s.method + ")";
}

constexpr nlohmann::ordered_json::error_handler_t kReplace =
    nlohmann::ordered_json::error_handler_t::replace;

}  // namespace

std::string FormatFindingsJson(const std::vector<Finding>& findings,
                               const std::vector<StepBreakdown>* breakdown,
                               const std::string& scope) {
  Json list = Json::array();
  for (const Finding& f : findings) {
    Json j = Json::object();
    j["id"] = f.id;
    j["severity"] = std::string(SeverityName(f.severity));
    j["title"] = f.title;
    Json evidence = Json::object();
    for (const Evidence& e : f.evidence) evidence[e.key] = EvidenceJson(e);
    j["evidence"] = std::move(evidence);
    if (f.where) j["where"] = PlaceJson(*f.where);
    if (!f.places.empty()) {
      Json places = Json::array();
      for (const Place& pl : f.places) places.push_back(PlaceJson(pl));
      j["places"] = std::move(places);
    }
    j["advice"] = f.advice;
    if (f.saving) j["saving"] = SavingJson(*f.saving);
    list.push_back(std::move(j));
  }
  Json doc = Json::object();
  if (!scope.empty()) doc["scope"] = scope;
  const std::string headline = SavingHeadline(findings);
  if (!headline.empty()) doc["headline"] = headline;
  doc["findings"] = std::move(list);
  if (breakdown != nullptr && !breakdown->empty()) {
    Json steps = Json::array();
    for (const StepBreakdown& b : *breakdown) {
      Json j = Json::object();
      j["step"] = b.number;
      j["pid"] = b.pid;
      j["wall_us"] = static_cast<double>(b.wall_ns) / 1000.0;
      const std::vector<uint64_t> slices = StepSlices(b);
      for (size_t i = 0; i < slices.size(); ++i) {
        std::string key(kStepSliceNames[i]);
        for (char& c : key) c = c == ' ' ? '_' : static_cast<char>(std::tolower(c));
        j[key + "_us"] = static_cast<double>(slices[i]) / 1000.0;
      }
      steps.push_back(std::move(j));
    }
    doc["step_breakdown"] = std::move(steps);
  }
  return doc.dump(2, ' ', false, kReplace) + "\n";
}

std::string FormatFindingsText(const std::vector<Finding>& findings, const std::string& scope) {
  const std::string scope_line = scope.empty() ? "" : "Scope: " + scope + "\n";
  if (findings.empty()) {
    return "Findings: none (no pattern of docs/FINDINGS.md in this profile)\n" + scope_line;
  }
  std::string out = "Findings: " + std::to_string(findings.size()) + " (docs/FINDINGS.md)\n" +
                    scope_line;
  const std::string headline = SavingHeadline(findings);
  if (!headline.empty()) out += headline + "\n";
  for (const Finding& f : findings) {
    out += "\n[" + std::string(SeverityName(f.severity)) + "] " + f.id + ": " + f.title + "\n";
    std::string ev;
    for (const Evidence& e : f.evidence) {
      ev += (ev.empty() ? "" : ", ") + e.key + "=" + EvidenceJson(e).dump(-1, ' ', false, kReplace);
    }
    out += "  evidence: " + ev + "\n";
    if (f.places.empty() && f.where) out += "  where: " + PlaceText(*f.where) + "\n";
    for (const Place& pl : f.places) out += "  at: " + PlaceText(pl) + "\n";
    out += "  advice: " + f.advice + "\n";
    if (f.saving) out += "  saving: " + SavingText(*f.saving) + "\n";
  }
  return out;
}

std::string FormatFindingsSummary(const std::vector<Finding>& findings, std::string_view heading) {
  if (findings.empty()) return std::string(heading) + ": none\n";
  std::string out = std::string(heading) + ":\n";
  for (const Finding& f : findings) {
    out += "  " + std::string(SeverityName(f.severity)) + "  " + f.id + ": " + f.title + "\n";
  }
  if (const std::string headline = SavingHeadline(findings); !headline.empty()) {
    out += "  " + headline + "\n";
  }
  return out;
}

}  // namespace gprof
