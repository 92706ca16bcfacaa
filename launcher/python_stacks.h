// The sampled Python stacks of one dump (docs/PYTHON_SAMPLING.md), for RenderDirectory
// (report.h): reads <dir>/<program>.<pid>.pysamples when the program wrote one, writes the
// dump's folded stacks (stacks.folded for the main process's whole run, else
// <stem>.stacks.folded) and python_syncs.txt, and returns the samples (for the table's source
// locations and the findings) and the python_function slices for its JSON trace. Launcher
// process only.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "exporters/python_slices.h"
#include "launcher/report.h"
#include "model/profile.h"

namespace gprof::launcher {

struct PythonStacks {
  std::unique_ptr<PythonSamples> samples;  // the file read; nullptr: no samples for this dump
  // python_function slices, and the Python line of each attributed blocking call (python_sync.h)
  // for the API events' args.python_line; nullptr: no samples for this dump.
  std::unique_ptr<PythonSliceSet> slices;
  std::string folded_path;                 // "" when not written
  // Lines for stderr (each ending in '\n'): what was found, or why the file was not used.
  std::string notes;
};

// The samples file of dump `name` in `dir` (whether or not it exists).
std::string PythonSamplesPath(const std::string& dir, const DumpName& name);

// Never throws: an unreadable or corrupt file is a note (a warning), never a failed dump.
PythonStacks LoadPythonStacks(const std::string& dir, const DumpName& name, bool is_main,
                              const Profile& profile, std::vector<std::string>* outputs);

}  // namespace gprof::launcher
