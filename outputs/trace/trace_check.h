// The trace checker: every violation of Perfetto's importer rules (REFERENCE.md §4) in a trace
// JSON file, for `gprof-run check` and the tests. May throw; callers (the launcher) catch in main.
#pragma once

#include <string>
#include <vector>

namespace gprof {

struct TraceViolation {
  std::string rule;     // short rule id, e.g. "nesting", "negative-ts", "flow-id-reused"
  std::string message;  // what and where (event index / name / pid / tid)
};

// Reads a trace JSON file (gzip-compressed or not) and reports every violation of REFERENCE.md
// §4. An unreadable or unparsable file is reported as a violation too.
std::vector<TraceViolation> CheckTrace(const std::string& path);
// The same for a trace already in memory (fuzz/trace_check_fuzz.cpp feeds it arbitrary bytes).
std::vector<TraceViolation> CheckTraceText(const std::string& text);

}  // namespace gprof
