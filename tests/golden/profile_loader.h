// Test-only loader: turns a readable JSON description of a Profile (tests/golden/README.md) into
// a gprof::Profile, so golden cases are small hand-written files instead of binary dumps.
#pragma once

#include <string>

#include "model/profile.h"
#include "outputs/table/table.h"

namespace gprof::golden {

struct GoldenCase {
  Profile profile;
  TableOptions table;
};

// Throws std::runtime_error naming the file and the field on malformed input.
GoldenCase LoadGoldenCase(const std::string& path);

// "\xNN" sequences in names become raw bytes (JSON cannot carry invalid UTF-8 itself).
std::string DecodeBytes(const std::string& s);

}  // namespace gprof::golden
