// The HTML report's "Python stacks (sampled)" section (html_report_model.h): the top Python
// functions by samples, the Python lines behind the blocking CUDA calls (python_syncs.txt's
// rows), and the native stacks of the blocking calls (--backtrace) by blocked time. The numbers
// come from what the launcher read and computed for the dump's other outputs (the .pysamples,
// SyncsByPythonLine, SymbolizeStacks): a few linear passes and bounded lists here. Launcher
// process only.
#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "analysis/attribution/names.h"
#include "analysis/findings/findings_analysis.h"
#include "analysis/samples/native_symbols.h"
#include "analysis/samples/python_samples.h"
#include "model/api_name.h"
#include "outputs/html/html_report_model.h"
#include "text/format.h"

namespace gprof::html_internal {
namespace {

void AddPython(const Profile& p, const PythonSamples& s, StacksModel* m) {
  m->sampled = true;
  m->hz = s.hz;
  m->missed = s.missed;
  const uint64_t from = p.info.start_ns, to = p.info.end_ns;
  // A function is (file, function, first line), as in stacks.folded and the slices.
  std::map<std::tuple<std::string_view, std::string_view, uint32_t>, uint32_t> ids;
  std::vector<uint32_t> function_of(s.frames.size());
  std::vector<PythonFunctionRow> rows;
  for (size_t i = 0; i < s.frames.size(); ++i) {
    const PythonFrame& f = s.frames[i];
    auto [it, added] = ids.try_emplace({f.file, f.function, f.first_line},
                                       static_cast<uint32_t>(rows.size()));
    if (added) rows.push_back({f.function + " (" + f.file + ":" + U(f.first_line) + ")", 0, 0});
    function_of[i] = it->second;
  }
  std::vector<uint64_t> seen(rows.size(), UINT64_MAX);  // the last sample that counted a row
  std::vector<bool> thread_seen(s.threads.size(), false);
  for (uint64_t k = 0; k < s.samples.size(); ++k) {
    const PythonSample& sm = s.samples[k];
    if (sm.ts_ns < from || sm.ts_ns > to || sm.stack >= s.stacks.size() ||
        sm.thread >= s.threads.size()) {
      continue;
    }
    ++m->samples;
    thread_seen[sm.thread] = true;
    const std::vector<uint32_t>& stack = s.stacks[sm.stack];
    for (size_t d = 0; d < stack.size(); ++d) {
      if (stack[d] >= function_of.size()) break;
      const uint32_t r = function_of[stack[d]];
      if (seen[r] != k) {
        seen[r] = k;
        ++rows[r].total;
      }
      if (d + 1 == stack.size()) ++rows[r].self;
    }
  }
  m->threads = static_cast<size_t>(std::count(thread_seen.begin(), thread_seen.end(), true));
  std::erase_if(rows, [](const PythonFunctionRow& r) { return r.total == 0; });
  m->functions_total = rows.size();
  std::sort(rows.begin(), rows.end(), [](const PythonFunctionRow& a, const PythonFunctionRow& b) {
    return std::tie(b.self, b.total, a.name) < std::tie(a.self, a.total, b.name);
  });
  if (rows.size() > kTopPythonFunctions) rows.resize(kTopPythonFunctions);
  m->functions = std::move(rows);
}

void AddSyncs(const PythonSyncs& syncs, StacksModel* m) {
  m->sync_calls = syncs.calls;
  m->sync_blocked_ns = syncs.blocked_ns;
  m->sync_not_sampled = syncs.not_sampled;
  m->sync_lines_total = syncs.lines.size();
  const size_t shown = std::min(kTopSyncLines, syncs.lines.size());
  m->sync_lines.assign(syncs.lines.begin(),
                       syncs.lines.begin() + static_cast<std::ptrdiff_t>(shown));
}

// Rows by (API, the frames from the program's caller outwards): two stacks that differ only
// inside CUDA's or gprof-run's libraries (the runtime's internal call paths vary) are one row,
// since they are one place in the program.
void AddNative(const Profile& p, const SymbolizedStacks& sym, StacksModel* m) {
  if (p.api_stacks.empty()) return;
  const ApiStackIndex index(p);
  NameCache names(p);
  // The first frame shown of each stack, and each stack's row key (built on first use).
  const auto first_frame = [&](uint32_t stack) -> size_t {
    const int top = stack < sym.top_user_frame.size() ? sym.top_user_frame[stack] : -1;
    return top >= 0 ? static_cast<size_t>(top) : 0;
  };
  std::vector<std::string> key_of(sym.frames.size());
  std::map<std::string, NativeStackRow> rows;
  for (const ApiCall& c : p.api_calls) {
    const uint32_t stack = index.StackOf(c.correlation_id);
    if (stack == kNoStack || stack >= sym.frames.size()) continue;
    const std::string_view api = names.ApiCallName(c);
    const std::string_view base = BaseApiName(api);
    if (!findings_internal::IsSyncApi(base) && !findings_internal::IsSyncCopyApi(base)) continue;
    std::string& frames_key = key_of[stack];
    if (frames_key.empty()) {
      const std::vector<std::string>& frames = sym.frames[stack];
      for (size_t i = first_frame(stack); i < frames.size(); ++i) frames_key += frames[i] + '\n';
      frames_key += '\n';  // never empty, even for a stack without frames
    }
    const uint64_t blocked = c.end_ns > c.start_ns ? c.end_ns - c.start_ns : 0;
    auto [it, added] = rows.try_emplace(std::string(api) + '\n' + frames_key);
    NativeStackRow& r = it->second;
    if (added) {
      r.api = std::string(api);
      if (stack < sym.top_user_function.size()) r.caller = sym.top_user_function[stack];
      const std::vector<std::string>& frames = sym.frames[stack];
      for (size_t i = first_frame(stack); i < frames.size(); ++i) {
        if (r.frames.size() == kNativeFramesShown) {
          r.frames_hidden = frames.size() - i;
          break;
        }
        r.frames.push_back(frames[i]);
      }
    }
    ++r.calls;
    r.blocked_ns += blocked;
    ++m->native_calls;
    m->native_blocked_ns += blocked;
  }
  std::vector<NativeStackRow> out;
  for (auto& [key, r] : rows) out.push_back(std::move(r));
  m->native_total = out.size();
  std::stable_sort(out.begin(), out.end(), [](const NativeStackRow& a, const NativeStackRow& b) {
    return std::tie(b.blocked_ns, b.calls) < std::tie(a.blocked_ns, a.calls);
  });
  if (out.size() > kTopNativeStacks) out.resize(kTopNativeStacks);
  m->native = std::move(out);
}

}  // namespace

StacksModel BuildStacksModel(const Profile& p, const PythonSamples* samples,
                             const PythonSyncs* syncs, const SymbolizedStacks* native) {
  StacksModel m;
  if (samples != nullptr) AddPython(p, *samples, &m);
  if (samples != nullptr && syncs != nullptr) AddSyncs(*syncs, &m);
  if (native != nullptr) AddNative(p, *native, &m);
  return m;
}

void AppendStacksSection(const StacksModel& m, std::string* out) {
  if (!m.any()) return;
  *out += "<section id=\"stacks\"><h2>" +
          std::string(m.sampled ? "Python stacks (sampled)" : "Native stacks (--backtrace)") +
          "</h2>";
  if (m.sampled) {
    *out += "<p>" + Thousands(m.samples) + " samples of " + U(m.threads) +
            (m.threads == 1 ? " thread" : " threads") + " at " + U(m.hz) + " Hz" +
            (m.missed > 0 ? " (" + Thousands(m.missed) + " ticks missed: the sampler got the GIL "
                            "late)" : std::string()) +
            ". Wall-clock samples of every thread, running or waiting: a share is of all "
            "samples; <i>self</i>, the function was the innermost frame, <i>total</i>, it was "
            "anywhere on the stack. stacks.folded has every stack (flame graphs), the trace a "
            "sampled track per thread.</p>";
    if (m.functions.empty()) {
      *out += "<p class=\"muted\">No sample falls inside this profile's time range.</p>";
    } else {
      *out += "<table class=\"rows\"><caption>Top Python functions by self samples (" +
              U(m.functions.size()) + " of " + U(m.functions_total) +
              ")</caption><tr><th class=\"name\">Function</th><th>Self</th><th>Self %</th>"
              "<th>Total</th><th>Total %</th></tr>";
      for (const PythonFunctionRow& r : m.functions) {
        *out += "<tr><td class=\"name mono\" title=\"" + Html(r.name, kMaxTextChars) + "\">" +
                Html(r.name, 120) + "</td><td>" + Thousands(r.self) + "</td><td>" +
                PercentOf(r.self, m.samples) + "</td><td>" + Thousands(r.total) + "</td><td>" +
                PercentOf(r.total, m.samples) + "</td></tr>";
      }
      *out += "</table>";
    }
    if (m.sync_calls > 0) {
      *out += "<h3>Python lines behind blocking CUDA calls</h3><p>" + Thousands(m.sync_calls) +
              " blocking calls (a synchronize, or a copy without Async) on sampled threads, " +
              FormatDuration(m.sync_blocked_ns) + " blocked; each goes to the line its thread's "
              "sample during the call (or within one period) was running" +
              (m.sync_not_sampled > 0
                   ? "; " + Thousands(m.sync_not_sampled) + " with no sample near them"
                   : std::string()) +
              ". Sampled, not exact: python_syncs.txt has every line.</p>";
      if (!m.sync_lines.empty()) {
        *out += "<table class=\"rows\"><tr><th class=\"name\">Line</th><th>Calls</th>"
                "<th>Blocked</th><th>Share</th></tr>";
        for (const PythonSyncLine& l : m.sync_lines) {
          *out += "<tr><td class=\"name mono\" title=\"" + Html(l.where, kMaxTextChars) + "\">" +
                  Html(l.where, 120) + "</td><td>" + Thousands(l.calls) + "</td><td>" +
                  FormatDuration(l.blocked_ns) + "</td><td>" +
                  PercentOf(l.blocked_ns, m.sync_blocked_ns) + "</td></tr>";
        }
        *out += "</table>";
        if (m.sync_lines_total > m.sync_lines.size()) {
          *out += "<p class=\"muted\">" + U(m.sync_lines_total - m.sync_lines.size()) +
                  " more lines in python_syncs.txt.</p>";
        }
      }
    }
  }
  if (!m.native.empty()) {
    *out += std::string(m.sampled ? "<h3>Native stacks of blocking CUDA calls</h3>" : "") +
            "<p>" + Thousands(m.native_calls) + " blocking calls with a native stack "
            "(--backtrace), " + FormatDuration(m.native_blocked_ns) +
            " blocked, by API and stack; frames from the program's caller outwards (the trace "
            "has each call's whole stack, <span class=\"mono\">gprof-run stats DIR --report "
            "cuda_api_stack_sum</span> the totals per caller).</p><table class=\"rows\"><tr>"
            "<th class=\"name\">Call</th><th>Calls</th><th>Blocked</th><th>Share</th>"
            "<th class=\"name\">Stack</th></tr>";
    for (const NativeStackRow& r : m.native) {
      std::string frames;
      for (size_t i = 0; i < r.frames.size(); ++i) {
        frames += (i ? "<br>" : "") + Html(r.frames[i], 160);
      }
      if (r.frames_hidden > 0) frames += "<br><span class=\"muted\">... " + U(r.frames_hidden) +
                                         " more</span>";
      *out += "<tr><td class=\"name mono\">" + Html(r.api, 80) +
              (r.caller.empty() ? std::string() : "<br><span class=\"muted\">from " +
                                                      Html(r.caller, 120) + "</span>") +
              "</td><td>" + Thousands(r.calls) + "</td><td>" + FormatDuration(r.blocked_ns) +
              "</td><td>" + PercentOf(r.blocked_ns, m.native_blocked_ns) +
              "</td><td class=\"name mono\">" + frames + "</td></tr>";
    }
    *out += "</table>";
    if (m.native_total > m.native.size()) {
      *out += "<p class=\"muted\">" + U(m.native_total - m.native.size()) +
              " more rows (API, stack) in the trace.</p>";
    }
  }
  *out += "</section>";
}

}  // namespace gprof::html_internal
