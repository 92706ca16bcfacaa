// The raw dump: one binary file per process and window, written by the injection library and
// read by `gprof-run report`. Versioned, checksummed, written atomically (temp file + rename).
//
// Layout (little-endian):
//   "GPROFDMP" u32 format_version u32 reserved
//   sections: u32 tag, u32 record_size, u64 count, payload (count * record_size bytes, or a
//             tag-specific byte blob when record_size == 1)
//   trailer:  u32 tag kEnd, u32 0, u64 XXH64 (seed 0) of every byte before the trailer, "GPROFEND"
// Version 2 replaced version 1's FNV-1a checksum with XXH64 (8x faster to write); version 1
// files are refused with a message saying so. Version 3 added the window counters to Counters;
// version 4 the GPU clock and completeness counters (gpu_records_incomplete,
// gpu_records_before_launch) and ProfileInfo's clock check.
// A reader rejects: a bad magic, a newer format version, a record size that does not match this
// build's struct, a truncated file, a checksum mismatch.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "model/profile.h"

namespace gprof {

inline constexpr uint32_t kDumpFormatVersion = 5;
inline constexpr const char* kDumpExtension = ".gpdump";
// `<dir>/<program>.<pid>.forked`: left by a process forked from a profiled one (it stays inert
// and is not profiled unless it execs); holds the parent's pid. The launcher lists those that
// never wrote a dump (a fork that execs keeps its pid and writes a dump of its own).
inline constexpr const char* kForkMarkerExtension = ".forked";

// Writes `profile` to `path` atomically and safely (model/output_file.h: a fresh temporary name,
// then rename; never through a planted link or into another user's directory), creating the
// directory. Returns "" on success, otherwise a one-line description of what failed (errno text
// included).
std::string WriteDump(const Profile& profile, const std::string& path);

// Reads a dump. On failure returns false and sets `error` to a one-line message that names the
// file and says what is wrong with it (truncated, corrupt, newer version, ...).
bool ReadDump(const std::string& path, Profile* profile, std::string* error);
// The same for a dump already in memory; `name` prefixes the error message.
bool ParseDump(std::span<const char> data, const std::string& name, Profile* profile,
               std::string* error);
// The dump's checksum (XXH64, seed 0) of `n` bytes: the trailer holds it over the header and
// every section. For tools that build or mutate dumps (fuzz/dump_fuzz.cpp).
uint64_t DumpChecksum(const void* data, size_t n);

}  // namespace gprof
