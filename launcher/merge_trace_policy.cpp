// The merged trace's size policy (see merge_trace_policy.h).
#include "launcher/merge_trace_policy.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "analysis/findings/findings_analysis.h"
#include "analysis/ranks/merge_findings.h"

namespace gprof::launcher {
namespace {

std::string Gb(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GB", static_cast<double>(bytes) / 1e9);
  return buf;
}

std::string Names(const std::vector<MergeInput>& inputs, const std::vector<bool>& full) {
  std::string out;
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (full[k]) out += (out.empty() ? "" : ", ") + MergeInputLabel(inputs[k]);
  }
  return out.empty() ? "none" : out;
}

}  // namespace

MergedTracePlan PlanMergedTrace(const std::vector<MergeInput>& inputs,
                                const MergedTraceChoice& choice) {
  MergedTracePlan plan;
  for (const MergeInput& in : inputs) plan.estimated_bytes += in.events * kMergedTraceBytesPerEvent;
  if (choice.full_trace || (choice.ranks.empty() && plan.estimated_bytes <= choice.budget_bytes)) {
    return plan;  // every input in full
  }
  std::vector<bool> full(inputs.size(), false);
  std::string why;
  if (!choice.ranks.empty()) {
    for (size_t k = 0; k < inputs.size(); ++k) {
      full[k] = std::count(choice.ranks.begin(), choice.ranks.end(), inputs[k].info.rank) > 0;
    }
    why = "the ranks chosen with --ranks";
  } else {
    uint64_t bytes = 0;
    size_t taken = 0;
    for (size_t k : InputsBySlowness(inputs)) {
      const uint64_t own = inputs[k].events * kMergedTraceBytesPerEvent;
      if (taken == kMergedTraceSlowestInFull || (taken > 0 && bytes + own > choice.budget_bytes)) {
        break;
      }
      full[k] = true;
      bytes += own;
      ++taken;
    }
    why = "the " + std::to_string(taken) + " slowest (straggler rule, then step time)";
  }
  const size_t left = static_cast<size_t>(std::count(full.begin(), full.end(), false));
  plan.content.full = full;
  plan.content.summary = true;
  plan.content.left_out =
      "The whole merged trace would be about " + Gb(plan.estimated_bytes) +
      ", past what Perfetto's UI opens (about 1 GB). It holds a summary of every process (its "
      "steps) and, in full, " + why + ": " + Names(inputs, full) + ". Left out: the events of " +
      std::to_string(left) + " of " + std::to_string(inputs.size()) +
      " processes. For them run gprof-run merge again with --ranks LIST (those ranks in full), "
      "or --full-trace (every process in full, about " + Gb(plan.estimated_bytes) + ").";
  plan.note = "gprof-run: note: " + plan.content.left_out + "\n";
  Finding f;
  f.id = "merged_trace_reduced";
  f.severity = Severity::kInfo;
  f.title = "Merged trace reduced: " + std::to_string(left) + " of " +
            std::to_string(inputs.size()) + " processes as a summary only";
  f.evidence.push_back(findings_internal::Bytes("estimated_bytes", plan.estimated_bytes));
  f.evidence.push_back(findings_internal::Text("in_full", Names(inputs, full)));
  f.evidence.push_back(findings_internal::Count("left_out", left));
  f.advice = plan.content.left_out;
  plan.finding = std::move(f);
  return plan;
}

bool ParseRankList(const std::string& text, std::vector<int32_t>* ranks) {
  size_t at = 0;
  ranks->clear();
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string part = text.substr(at, comma - at);
    const size_t dash = part.find('-');
    char* end = nullptr;
    const long first = std::strtol(part.c_str(), &end, 10);
    long last = first;
    if (part.empty() || !(part[0] >= '0' && part[0] <= '9')) return false;
    if (dash != std::string::npos) {
      if (end != part.c_str() + dash || dash + 1 >= part.size()) return false;
      last = std::strtol(part.c_str() + dash + 1, &end, 10);
    }
    if (*end != '\0' || last < first || last > 1'000'000) return false;
    for (long r = first; r <= last; ++r) ranks->push_back(static_cast<int32_t>(r));
    at = comma + 1;
  }
  return !ranks->empty();
}

}  // namespace gprof::launcher
