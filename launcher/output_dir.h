// Output directory: expands the -o template and claims a directory that holds no profile yet.
// Launcher process only.
//
// %p is the pid of the profiled program (as nsys does): the launcher forks first, expands the
// template with the child's pid, creates the directory, and only then lets the child exec.
#pragma once

#include <map>
#include <string>

namespace gprof::launcher {

inline constexpr const char* kDefaultOutputTemplate = "./gprof_traces/%n.%h.%p";

struct TemplateValues {
  long pid = 0;
  std::string host;
  std::string program;                     // basename of the program as given
  std::map<std::string, std::string> env;  // for %q{VAR}; unset -> ""
};

// Returns "" and sets `out`, or returns a message naming the bad template part.
std::string ExpandOutputTemplate(const std::string& templ, const TemplateValues& values,
                                 std::string* out);

// True when `dir` holds a profile: a dump, a gprof-run manifest, or a rendered table/trace.
bool HoldsProfile(const std::string& dir);

// Creates `dir` (and its parents) unless it already holds a profile; then tries dir-1, dir-2, ...
// Returns "" and sets `chosen`, or returns why no directory could be created.
std::string ClaimOutputDir(const std::string& dir, std::string* chosen);

}  // namespace gprof::launcher
