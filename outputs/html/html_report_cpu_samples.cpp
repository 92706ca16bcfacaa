// The HTML report's "Host CPU samples (--cpu-sampling)" section (html_report_model.h): the top
// host functions by self samples, with their total, and the sampled threads with each one's top
// function. The names come from what the launcher made for the dump's other outputs
// (NameCpuSamples: .cpu.folded, the trace, gpu_idle); here one pass over the samples, with each
// stack's rows found once, and bounded lists. Launcher process only.
#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "analysis/samples/cpu_samples.h"
#include "outputs/html/html_report_model.h"
#include "text/format.h"

namespace gprof::html_internal {
namespace {

// One sampled thread's tally: its samples and, per function row, the samples it was innermost in.
struct ThreadTally {
  uint64_t samples = 0;
  std::map<size_t, uint64_t> self;
};

// A stack's rows: the innermost function's, then every function on it once.
struct StackRows {
  bool known = false;
  size_t self = 0;
  std::vector<size_t> on_stack;
};

std::string ThreadLabel(const CpuThreadRow& t) {
  return "thread " + U(t.tid) + (t.name.empty() ? std::string() : " (" + t.name + ")");
}

}  // namespace

CpuSamplesModel BuildCpuSamplesModel(const Profile& p, const CpuSampleNames* names) {
  CpuSamplesModel m;
  if (names == nullptr || p.cpu_samples.empty()) return m;
  m.hz = p.cpu_sample_counters.hz;
  m.backend = std::string(CpuSampleBackendName(p.cpu_sample_counters.backend));
  m.dropped = p.cpu_sample_counters.dropped;
  std::unordered_map<std::string, size_t> row_of;
  std::vector<CpuFunctionRow> rows;
  const auto row = [&](const std::string& name) {
    auto [it, added] = row_of.try_emplace(name, rows.size());
    if (added) rows.push_back({name, 0, 0, 0});
    return it->second;
  };
  std::vector<StackRows> stack_rows(names->function.size());
  std::map<uint32_t, ThreadTally> threads;
  for (const CpuSample& s : p.cpu_samples) {
    if (s.stack >= names->function.size()) continue;
    StackRows& sr = stack_rows[s.stack];
    if (!sr.known) {
      sr.known = true;
      sr.self = row(names->function[s.stack]);
      sr.on_stack.push_back(sr.self);
      if (s.stack < names->frames_outermost_first.size()) {
        for (const std::string& f : names->frames_outermost_first[s.stack]) {
          const size_t r = row(f);
          if (std::find(sr.on_stack.begin(), sr.on_stack.end(), r) == sr.on_stack.end()) {
            sr.on_stack.push_back(r);
          }
        }
      }
    }
    ++m.samples;
    m.cpu_ns += s.cpu_ns;
    ++rows[sr.self].self;
    rows[sr.self].self_cpu_ns += s.cpu_ns;
    for (size_t r : sr.on_stack) ++rows[r].total;
    ThreadTally& t = threads[s.tid];
    ++t.samples;
    ++t.self[sr.self];
  }
  // Threads: the most samples first (ties by tid), each with its most frequent innermost
  // function (ties by name).
  for (const auto& [tid, t] : threads) {
    CpuThreadRow tr;
    tr.tid = tid;
    tr.samples = t.samples;
    for (const ThreadInfo& info : p.threads) {
      if (info.tid == tid && info.name != kNoString) tr.name = std::string(p.strings.Get(info.name));
    }
    for (const auto& [r, n] : t.self) {
      if (n > tr.top_self || (n == tr.top_self && rows[r].name < tr.top_function)) {
        tr.top_self = n;
        tr.top_function = rows[r].name;
      }
    }
    m.threads.push_back(std::move(tr));
  }
  m.threads_total = m.threads.size();
  std::stable_sort(m.threads.begin(), m.threads.end(),
                   [](const CpuThreadRow& a, const CpuThreadRow& b) { return a.samples > b.samples; });
  if (m.threads.size() > kTopSampledThreads) m.threads.resize(kTopSampledThreads);
  m.functions_total = rows.size();
  std::sort(rows.begin(), rows.end(), [](const CpuFunctionRow& a, const CpuFunctionRow& b) {
    return std::tie(b.self, b.total, a.name) < std::tie(a.self, a.total, b.name);
  });
  if (rows.size() > kTopCpuFunctions) rows.resize(kTopCpuFunctions);
  m.functions = std::move(rows);
  return m;
}

void AppendCpuSamplesSection(const CpuSamplesModel& m, std::string* out) {
  if (!m.any()) return;
  *out += "<section id=\"cpu\"><h2>Host CPU samples (--cpu-sampling)</h2><p>" +
          Thousands(m.samples) + " native stack samples of " + U(m.threads_total) +
          (m.threads_total == 1 ? " thread" : " threads") + " at " + U(m.hz) + " Hz (" +
          m.backend + "), standing for " + FormatDuration(m.cpu_ns) + " of CPU time" +
          (m.dropped > 0 ? "; " + Thousands(m.dropped) + " lost" : std::string()) +
          ". A thread is sampled only while it runs on a CPU: a share is of the CPU time "
          "sampled, not of wall time; <i>self</i>, the function was the innermost frame, "
          "<i>total</i>, it was anywhere on the stack. The .cpu.folded file has every stack "
          "(flame graphs), <span class=\"mono\">gprof-run stats DIR --report cpu_sample_sum</span> "
          "every function, the traces each sample on its thread.</p>";
  *out += "<table class=\"rows\"><caption>Top host functions by self samples (" +
          U(m.functions.size()) + " of " + U(m.functions_total) +
          ")</caption><tr><th class=\"name\">Function</th><th>Self</th><th>Self %</th>"
          "<th>Self CPU</th><th>Total</th><th>Total %</th></tr>";
  for (const CpuFunctionRow& r : m.functions) {
    *out += "<tr><td class=\"name mono\" title=\"" + Html(r.name, kMaxTextChars) + "\">" +
            Html(r.name, 120) + "</td><td>" + Thousands(r.self) + "</td><td>" +
            PercentOf(r.self, m.samples) + "</td><td>" + FormatDuration(r.self_cpu_ns) +
            "</td><td>" + Thousands(r.total) + "</td><td>" + PercentOf(r.total, m.samples) +
            "</td></tr>";
  }
  *out += "</table>";
  if (m.threads_total > 1) {
    *out += "<table class=\"rows\"><caption>Sampled threads (" + U(m.threads.size()) + " of " +
            U(m.threads_total) + ")</caption><tr><th class=\"name\">Thread</th><th>Samples</th>"
            "<th>Share</th><th class=\"name\">Top function (self)</th><th>Of the thread</th></tr>";
    for (const CpuThreadRow& t : m.threads) {
      *out += "<tr><td class=\"name mono\">" + Html(ThreadLabel(t), 120) + "</td><td>" +
              Thousands(t.samples) + "</td><td>" + PercentOf(t.samples, m.samples) +
              "</td><td class=\"name mono\" title=\"" + Html(t.top_function, kMaxTextChars) +
              "\">" + Html(t.top_function, 120) + "</td><td>" +
              PercentOf(t.top_self, t.samples) + "</td></tr>";
    }
    *out += "</table>";
  }
  *out += "</section>";
}

}  // namespace gprof::html_internal
