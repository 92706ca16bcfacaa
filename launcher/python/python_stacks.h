// The sampled Python stacks of one dump (docs/PYTHON_SAMPLING.md), for RenderDirectory
// (report.h): reads <dir>/<program>.<pid>.pysamples when the program wrote one, writes the
// dump's folded stacks (stacks.folded for the main process's whole run, else
// <stem>.stacks.folded) and python_syncs.txt, and returns the python_function slices for its
// traces (JSON and Perfetto; with each attributed blocking call's Python line for the JSON's
// args.python_line), the samples (the table's source locations, the findings) and the syncs
// (report.html). Launcher process only.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "analysis/samples/python_samples.h"
#include "analysis/samples/python_slices.h"
#include "analysis/samples/python_sync.h"
#include "launcher/report.h"
#include "model/profile.h"

namespace gprof::launcher {

struct PythonStacks {
  std::unique_ptr<PythonSliceSet> slices;  // nullptr: no samples for this dump
  std::unique_ptr<PythonSamples> samples;  // the file as read (nullptr with `slices`)
  PythonSyncs syncs;                       // the dump's blocking calls by Python line
  std::string folded_path;                 // "" when not written
  // Lines for stderr (each ending in '\n'): what was found, or why the file was not used.
  std::string notes;
};

// The samples file of dump `name` in `dir` (whether or not it exists).
std::string PythonSamplesPath(const std::string& dir, const DumpName& name);

// Never throws: an unreadable or corrupt file is a note (a warning), never a failed dump.
// `write_files` false: read only, writing neither stacks.folded nor python_syncs.txt (`report
// --html` rewrites the pages alone). `run_syncs`: the blocking calls by Python line of the whole
// run when `profile` holds only a part of it (a segmented render,
// launcher/render/segmented_render.h), used instead of the profile's own.
PythonStacks LoadPythonStacks(const std::string& dir, const DumpName& name, bool is_main,
                              const Profile& profile, std::vector<std::string>* outputs,
                              bool write_files = true, const PythonSyncs* run_syncs = nullptr);

// Each blocking call `syncs` attributed: its Python line and its sample's stack (the program's
// frames as a JSON array, innermost first) into `into`'s api_python_lines and api_python_stacks,
// by the calls' Profile::api_calls indices (the JSON trace's args.python_line / python_stack).
void AddApiPythonLines(const PythonSyncs& syncs, const PythonSamples& samples,
                       PythonSliceSet* into);

// The samples of `path` for a dump of pid `pid`: false, with `error` saying why (unreadable,
// corrupt, another pid's), else `out`. For the merged view (merged_view.cpp).
bool ReadPythonSamplesOf(const std::string& path, uint32_t pid, PythonSamples* out,
                         std::string* error);

}  // namespace gprof::launcher
