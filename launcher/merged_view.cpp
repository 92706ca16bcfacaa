// The merged view's groups and files (see merged_view.h). Launcher process only. This is where the
// merge touches files: it reads the dumps for analysis/ranks/merge.h segment by segment (twice:
// the survey, one dump at a time, then the trace, every dump at once) and writes the outputs
// through temporary files.
#include "launcher/merged_view.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "analysis/findings/findings.h"
#include "analysis/ranks/merge.h"
#include "analysis/ranks/merge_findings.h"
#include "launcher/python/python_stacks.h"
#include "launcher/python/torch_memory_file.h"
#include "launcher/report.h"
#include "model/dump.h"
#include "model/dump_segment_reader.h"
#include "model/output_file.h"
#include "outputs/html/html_report.h"
#include "outputs/table/merge_table.h"
#include "outputs/trace/merged_trace.h"

namespace gprof::launcher {
namespace {

namespace fs = std::filesystem;

// An output of the merged view (model/output_file.h); throws on failure.
class PendingFile {
 public:
  explicit PendingFile(const std::string& path) {
    if (std::string e = file_.Open(path, /*create_dirs=*/false); !e.empty()) {
      throw std::runtime_error(e);
    }
  }
  void Write(const char* data, size_t size) {
    if (!file_.Write(data, size)) throw std::runtime_error(file_.Close());
  }
  JsonSink Sink() {
    return JsonSink{this, [](void* ctx, const char* data, size_t size) {
                      static_cast<PendingFile*>(ctx)->Write(data, size);
                    }};
  }
  void Close() {
    if (std::string e = file_.Close(); !e.empty()) throw std::runtime_error(e);
  }
  void Commit() {
    if (std::string e = file_.Commit(); !e.empty()) throw std::runtime_error(e);
  }

 private:
  OutputFile file_;
};

std::string GroupTitle(const MergeGroup& g, const std::vector<MergeInput>& inputs) {
  if (!g.window) return "whole run";
  uint32_t first = UINT32_MAX, last = 0;
  for (const MergeInput& in : inputs) {
    first = std::min(first, in.info.first_step);
    last = std::max(last, in.info.last_step);
  }
  return "cycle " + std::to_string(g.cycle) + ", steps " + std::to_string(first) + "-" +
         std::to_string(last);
}

// The .pysamples beside dump `path` ("" when the name is not a dump's or there is none).
std::string PythonSamplesBeside(const std::string& path) {
  DumpName name;
  const fs::path p(path);
  if (!ParseDumpName(p.filename().string(), &name)) return "";
  const std::string samples = PythonSamplesPath(p.parent_path().string(), name);
  std::error_code ec;
  return fs::is_regular_file(samples, ec) ? samples : "";
}

// Fills `in`'s Python sample fields from the .pysamples beside its dump; a file that cannot be
// used is a warning in `notes`, never a failed merge.
void SurveyPythonSamples(const Profile& profile, MergeInput* in, std::string* notes) {
  const std::string path = PythonSamplesBeside(in->file);
  if (path.empty()) return;
  PythonSamples samples;
  std::string error;
  if (!ReadPythonSamplesOf(path, profile.info.pid, &samples, &error)) {
    *notes += "gprof-run: warning: " + error + "; the merged trace has no Python stacks for " +
              in->file + "\n";
    return;
  }
  for (const PythonSample& s : samples.samples) {
    if (s.ts_ns >= profile.info.start_ns && s.ts_ns <= profile.info.end_ns) ++in->python_samples;
  }
  in->python_hz = samples.hz;
  in->python_file = path;
}

// A dump's segments for the merged trace (model/dump_segment_reader.h).
class DumpSegments : public MergeSegments {
 public:
  explicit DumpSegments(const std::string& path) {
    std::string error;
    if (!reader_.Open(path, &error)) throw std::runtime_error(error);
  }
  const Profile* Next() override {
    std::string error;
    if (reader_.Next(&error)) {
      if (reader_.segments_read() == 1) AttachTorchMemoryBeside(path(), reader_.mutable_profile());
      return &reader_.profile();
    }
    if (!error.empty()) throw std::runtime_error(error);
    return nullptr;
  }

 private:
  std::string path() const { return reader_.path(); }
  DumpSegmentReader reader_;
};

}  // namespace

std::vector<std::string> DumpDirsUnder(const std::string& dir) {
  if (!DumpsIn(dir).empty()) return {dir};
  std::vector<std::string> subdirs;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name == "merged" || !e.is_directory(ec) || e.is_symlink(ec)) continue;
    if (!DumpsIn(e.path().string()).empty()) subdirs.push_back(dir + "/" + name);
  }
  std::sort(subdirs.begin(), subdirs.end());
  return subdirs;
}

std::vector<MergeGroup> FindMergeGroups(const std::vector<std::string>& given, std::string* error) {
  std::map<std::pair<bool, uint32_t>, MergeGroup> groups;  // (window, cycle): whole run first
  std::vector<std::string> dirs;
  for (const std::string& dir : given) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
      *error = dir + " is not a directory";
      return {};
    }
    for (std::string& d : DumpDirsUnder(dir)) dirs.push_back(std::move(d));
  }
  for (const std::string& dir : dirs) {
    std::vector<DumpName> dumps = DumpsIn(dir);
    std::sort(dumps.begin(), dumps.end(),
              [](const DumpName& a, const DumpName& b) { return a.stem < b.stem; });
    for (const DumpName& d : dumps) {
      MergeGroup& g = groups[{d.window, d.window ? d.cycle : 0}];
      g.window = d.window;
      g.cycle = d.window ? d.cycle : 0;
      g.prefix = d.window ? "cycle" + std::to_string(d.cycle) + "." : "";
      g.dumps.push_back(dir + "/" + d.stem + kDumpExtension);
    }
  }
  std::vector<MergeGroup> out;
  for (auto& [key, g] : groups) out.push_back(std::move(g));
  return out;
}

MergeResult WriteMergedView(const std::vector<MergeGroup>& groups, const std::string& out_dir,
                            int row_limit, bool html, const MergedTraceChoice& choice) {
  MergeResult result;
  // 1. The survey of every group, segment by segment: a dump that cannot be read stops the
  // merge before any output.
  std::vector<std::vector<MergeInput>> surveyed;
  for (const MergeGroup& g : groups) {
    std::vector<MergeInput> inputs;
    for (const std::string& path : g.dumps) {
      DumpSegmentReader reader;
      std::string error;
      MergeInput in;
      in.file = path;
      bool ok = reader.Open(path, &error);
      while (ok && reader.Next(&error)) {
        // torch's memory records (a file beside the dump) go with the first segment.
        if (reader.segments_read() == 1) {
          result.notes += AttachTorchMemoryBeside(path, reader.mutable_profile());
        }
        AddSegmentToMerge(reader.profile(), reader.segments_read() == 1, &in);
      }
      if (!error.empty()) {
        result.error = error;
        result.bad_input = true;
        return result;
      }
      SurveyPythonSamples(reader.profile(), &in, &result.notes);
      result.events += in.events;
      inputs.push_back(std::move(in));
    }
    SortMergeInputs(&inputs);
    AlignMergeClocks(&inputs);
    surveyed.push_back(std::move(inputs));
  }
  // 2. Every output into a temporary file; renamed only when all are complete.
  try {
    int dir_fd = -1;
    if (std::string e = OpenOutputDir(out_dir, /*create=*/true, &dir_fd); !e.empty()) {
      throw std::runtime_error(e);
    }
    ::close(dir_fd);
    std::vector<std::unique_ptr<PendingFile>> files;
    for (size_t i = 0; i < groups.size(); ++i) {
      const std::vector<MergeInput>& inputs = surveyed[i];
      MergedGroupOutput out;
      out.title = GroupTitle(groups[i], inputs);
      out.processes = inputs.size();
      out.trace_path = out_dir + "/" + groups[i].prefix + "trace.json";
      out.table_path = out_dir + "/" + groups[i].prefix + "table.txt";
      auto& trace = files.emplace_back(std::make_unique<PendingFile>(out.trace_path));
      // Read again here, all inputs at once, one segment each (the survey kept the count only).
      const MergeSource source = [&inputs](size_t k) -> std::unique_ptr<MergeSegments> {
        return std::make_unique<DumpSegments>(inputs[k].file);
      };
      const auto python = [&inputs](size_t k,
                                    const Profile& profile) -> std::unique_ptr<PythonSliceSet> {
        if (inputs[k].python_samples == 0) return nullptr;
        PythonSamples samples;
        std::string error;
        if (!ReadPythonSamplesOf(inputs[k].python_file, profile.info.pid, &samples, &error)) {
          throw std::runtime_error(error);
        }
        return std::make_unique<PythonSliceSet>(
            PythonSlicesFrom(samples, profile.info.start_ns, profile.info.end_ns));
      };
      out.python_sampled = MergeInputsWithPythonSamples(inputs);
      MergedTracePlan plan = PlanMergedTrace(inputs, choice);
      result.notes += plan.note;
      WriteMergedTrace(inputs, source, fs::path(out.trace_path).filename().string(),
                       trace->Sink(), python, plan.content);
      trace->Close();
      const std::string table_text =
          FormatMergedTable(inputs, "Merged table: " + out.title, row_limit);
      auto& table = files.emplace_back(std::make_unique<PendingFile>(out.table_path));
      table->Write(table_text.data(), table_text.size());
      table->Close();
      // The distributed findings, from the survey alone.
      std::vector<Finding> findings = MergedFindings(inputs);
      if (plan.finding) findings.push_back(std::move(*plan.finding));
      const std::string json_path = out_dir + "/" + groups[i].prefix + "findings.json";
      out.findings_path = out_dir + "/" + groups[i].prefix + "findings.txt";
      for (const auto& [path, text] :
           {std::pair{json_path, FormatFindingsJson(findings)},
            std::pair{out.findings_path, FormatFindingsText(findings)}}) {
        auto& file = files.emplace_back(std::make_unique<PendingFile>(path));
        file->Write(text.data(), text.size());
        file->Close();
      }
      if (html) {
        // The merged page, from the survey alone (no further read of any dump).
        MergedHtmlReportInput page;
        page.inputs = &inputs;
        page.findings = &findings;
        page.title = out.title;
        page.links.trace = groups[i].prefix + "trace.json";
        page.links.table = groups[i].prefix + "table.txt";
        page.links.findings_text = groups[i].prefix + "findings.txt";
        page.links.findings_json = groups[i].prefix + "findings.json";
        page.version = GPROF_VERSION;
        const std::string text = FormatMergedHtmlReport(page);
        out.page_path = out_dir + "/" + groups[i].prefix + "report.html";
        auto& file = files.emplace_back(std::make_unique<PendingFile>(out.page_path));
        file->Write(text.data(), text.size());
        file->Close();
      }
      out.table = table_text + FormatFindingsSummary(findings, "Merged findings");
      result.groups.push_back(std::move(out));
    }
    for (auto& f : files) f->Commit();
  } catch (const std::exception& e) {
    // Files renamed before a failed rename stay: they are complete, only the set is not.
    result.error = e.what();
    result.groups.clear();
  }
  return result;
}

std::string MergedViewText(const MergeResult& r) {
  std::string out;
  for (const MergedGroupOutput& g : r.groups) {
    if (!out.empty()) out += "; ";
    out += g.title + " of " + std::to_string(g.processes) +
           (g.processes == 1 ? " process" : " processes") + ": trace " + g.trace_path +
           ", table " + g.table_path + ", findings " + g.findings_path +
           (g.page_path.empty() ? "" : ", report " + g.page_path) +
           (g.python_sampled.empty() ? ""
                                     : " (sampled Python stacks of " + g.python_sampled + ")");
  }
  return "merged view: " + out;
}

}  // namespace gprof::launcher
