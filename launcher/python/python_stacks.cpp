// Sampled Python stacks of a dump (python_stacks.h). Launcher process only.
#include "launcher/python/python_stacks.h"

#include <cstdio>
#include <exception>
#include <filesystem>
#include <system_error>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "analysis/samples/python_samples.h"
#include "analysis/samples/python_sync.h"
#include "analysis/tables/op_stacks.h"
#include "model/dump.h"
#include "model/output_file.h"

namespace gprof::launcher {

std::string PythonSamplesPath(const std::string& dir, const DumpName& name) {
  return dir + "/" + name.program + "." + std::to_string(name.pid) + kPythonSamplesExtension;
}

namespace {

// The blocking CUDA calls by Python line (python_sync.h): python_syncs.txt for the main process's
// whole run, else <stem>.python_syncs.txt, when the dump has any on a sampled thread. Returns the
// note for stderr.
std::string WritePythonSyncs(const std::string& dir, const DumpName& name, bool is_main,
                             const PythonSyncs& syncs, std::vector<std::string>* outputs) {
  if (syncs.calls == 0) return "";
  const std::string path =
      dir + "/" + (is_main ? std::string("python_syncs.txt") : name.stem + ".python_syncs.txt");
  if (const std::string e = WriteOutputFile(path, FormatPythonSyncs(syncs), false); !e.empty()) {
    return "gprof-run: warning: " + e + "\n";
  }
  if (outputs != nullptr) outputs->push_back(path);
  if (syncs.lines.empty()) {
    return "gprof-run: " + std::to_string(syncs.calls) +
           " blocking CUDA calls, none near a Python sample (" + path + ")\n";
  }
  const PythonSyncLine& top = syncs.lines[0];
  char ms[32];
  std::snprintf(ms, sizeof ms, "%.3f", static_cast<double>(top.blocked_ns) / 1e6);
  return "gprof-run: most blocking CUDA time from Python: " + top.where + ": " +
         std::to_string(top.calls) + " of " + std::to_string(syncs.calls) + " calls, " + ms +
         " ms (sampled; " + path + ")\n";
}

}  // namespace

bool ReadPythonSamplesOf(const std::string& path, uint32_t pid, PythonSamples* out,
                         std::string* error) {
  if (!ReadPythonSamples(path, out, error)) return false;
  if (out->pid != pid) {
    *error = path + " is of pid " + std::to_string(out->pid) + ", the dump of pid " +
             std::to_string(pid);
    return false;
  }
  return true;
}

void AddApiPythonLines(const PythonSyncs& syncs, const PythonSamples& samples,
                       PythonSliceSet* into) {
  for (const auto& [call, line] : syncs.call_lines) {
    into->api_python_lines.emplace(call, syncs.lines[line].where);
  }
  // The stack of the sample behind each call, formatted once per distinct stack.
  std::unordered_map<uint32_t, std::string> stack_json;
  for (const auto& [call, stack] : syncs.call_stacks) {
    auto [it, fresh] = stack_json.try_emplace(stack);
    if (fresh) {
      nlohmann::json frames = nlohmann::json::array();
      for (const PythonFrame* f : ProgramFrames(samples, samples.stacks[stack])) {
        frames.push_back(f->function + " (" + f->file + ":" + std::to_string(f->line) + ")");
      }
      it->second = frames.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
    into->api_python_stacks.emplace(call, it->second);
  }
}

PythonStacks LoadPythonStacks(const std::string& dir, const DumpName& name, bool is_main,
                              const Profile& profile, std::vector<std::string>* outputs,
                              bool write_files, const PythonSyncs* run_syncs) {
  PythonStacks out;
  const std::string path = PythonSamplesPath(dir, name);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return out;
  const std::string shown = name.stem + kDumpExtension + ": ";
  try {
    auto samples = std::make_unique<PythonSamples>();
    std::string error;
    if (!ReadPythonSamples(path, samples.get(), &error)) {
      out.notes = "gprof-run: warning: " + error + "; no Python stacks for " + name.stem +
                  kDumpExtension + "\n";
      return out;
    }
    if (samples->pid != profile.info.pid) {
      out.notes = "gprof-run: warning: " + path + " is of pid " + std::to_string(samples->pid) +
                  ", the dump of pid " + std::to_string(profile.info.pid) +
                  "; no Python stacks for it\n";
      return out;
    }
    // A window dump covers its window only; the whole run, the collection's span.
    const uint64_t from = profile.info.start_ns, to = profile.info.end_ns;
    out.slices = std::make_unique<PythonSliceSet>(PythonSlicesFrom(*samples, from, to));
    out.syncs = run_syncs != nullptr ? *run_syncs : SyncsByPythonLine(profile, *samples, from, to);
    AddApiPythonLines(out.syncs, *samples, out.slices.get());  // the trace's args.python_line
    if (!write_files) {
      out.samples = std::move(samples);
      return out;
    }
    uint64_t counted = 0;
    const std::string folded = FoldedStacks(*samples, from, to, &counted);
    out.folded_path = dir + "/" + (is_main ? std::string("stacks.folded") : name.stem + ".stacks.folded");
    if (const std::string e = WriteOutputFile(out.folded_path, folded, false); !e.empty()) {
      out.notes += "gprof-run: warning: " + e + "; no folded stacks for " + name.stem + "\n";
      out.folded_path.clear();
    } else if (outputs != nullptr) {
      outputs->push_back(out.folded_path);
    }
    std::string note = "gprof-run: " + shown + std::to_string(counted) +
                       " Python stack samples at " + std::to_string(samples->hz) + " Hz";
    const bool outside = samples->sampler == "out-of-process";
    note += outside ? ", read out of process (without the GIL)" : ", taken in process";
    if (samples->missed > 0) {
      note += " (" + std::to_string(samples->missed) +
              (outside ? " ticks missed: the sampler process got the CPU late)"
                       : " ticks missed: the sampler got the GIL late, e.g. while a thread held "
                         "it in C code or computed)");
    }
    if (samples->torn > 0) {
      note += " (" + std::to_string(samples->torn) + " stacks dropped: changed while read)";
    }
    if (samples->dropped > 0) note += " (" + std::to_string(samples->dropped) + " dropped: cap)";
    if (counted < samples->samples.size()) {
      note += "; " + std::to_string(samples->samples.size() - counted) +
              " outside this dump's time range";
    }
    if (!out.folded_path.empty()) note += "; folded stacks " + out.folded_path;
    out.notes += note + "\n";
    out.notes += WritePythonSyncs(dir, name, is_main, out.syncs, outputs);
    out.samples = std::move(samples);
  } catch (const std::exception& e) {
    out.notes = "gprof-run: warning: " + path + ": " + e.what() + "; no Python stacks\n";
    out.slices.reset();
    out.samples.reset();
    out.syncs = PythonSyncs{};
  }
  return out;
}

}  // namespace gprof::launcher
