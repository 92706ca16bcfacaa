// A .pftrace decoded to protobuf text with protoc and the Perfetto writer test's proto
// (outputs/perfetto/perfetto_trace_test.proto), for the process tests that check what a run's
// trace.pftrace holds. scripts/setup installs protoc; without it those tests skip, saying so.
#pragma once

#include <string>

#include "tests/support/process.h"

namespace gprof::testing {

inline bool ProtocInstalled() {
  return RunProcess({"/bin/sh", "-c", "command -v protoc"}).exit_code == 0;
}

// protoc --decode=perfetto.protos.Trace of the file at `path`: its text in `out`.
inline ProcessResult DecodePftrace(const std::string& path) {
  const std::string proto_dir = std::string(GPROF_SOURCE_DIR) + "/outputs/perfetto";
  ProcessOptions o;
  o.stdin_data = ReadFile(path);
  return RunProcess({"protoc", "--decode=perfetto.protos.Trace", "-I" + proto_dir,
                     proto_dir + "/perfetto_trace_test.proto"},
                    o);
}

// How many times `needle` occurs in `text`.
inline size_t CountOf(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace gprof::testing
