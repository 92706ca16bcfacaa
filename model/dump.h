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
// Version 5 added the native stack sections; version 6 segments: a dump is one or more segments
// one after another, each laid out as above (header, sections, trailer with its own checksum)
// and opened by a kSegment section (SegmentHeader). A long whole run writes a segment whenever
// its buffers fill or a time passes (collector/lifecycle/spill.h), so the program's memory stays
// bounded and a killed program leaves its completed segments. A segment holds its own records
// (ranges, calls, GPU records, ...), its loss counters (deltas), the full thread, device and
// module lists, and only the growth of the tables records index into (strings, domains, launch
// configs, API names, stacks, stack PCs): ids stay those of the whole run, so the reader
// appends and never remaps. A window dump or a short run is one segment.
// Within version 6, a section with a tag a reader does not know is skipped: the thread CPU
// samples (kThreadCpu, ThreadCpuSample records) came that way, present only when sampled, so
// older dumps read as having none and older readers read newer dumps without them.
// A reader rejects: a bad magic, a newer format version, a record size that does not match this
// build's struct, a checksum mismatch, a segment whose table bases do not follow the previous
// one's, a file with no complete segment. A file whose last segment is cut short or is not
// marked last is read up to its last complete segment and reported incomplete
// (ProfileInfo::complete).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "model/output_file.h"
#include "model/profile.h"

namespace gprof {

inline constexpr uint32_t kDumpFormatVersion = 6;

// A segment's place in its dump (the kSegment section, 40 bytes): its index, whether it is the
// run's last, and the sizes its tables had before it (where its table sections start).
enum SegmentFlags : uint32_t { kSegmentLast = 1 };
struct SegmentHeader {
  uint32_t index = 0;
  uint32_t flags = kSegmentLast;
  uint32_t strings = 0;
  uint32_t domains = 0;
  uint32_t launch_configs = 0;
  uint32_t api_names = 0;
  uint32_t stacks = 0;
  uint32_t pad0 = 0;
  uint64_t stack_pcs = 0;
};
static_assert(sizeof(SegmentHeader) == 40);
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

// A dump written in segments during the run: Open starts the temporary file (OutputFile: a
// fresh name in a vetted directory, `<name>.tmp.<pid>`), each Append writes one segment and
// hands it to the kernel (a killed process leaves it in the file), Publish renames the file into
// place. `profile` holds the run's tables whole (ids stay valid across segments) and only the
// records since the previous Append; each Append writes those and the tables' growth.
class SegmentedDumpWriter {
 public:
  std::string Open(const std::string& path);
  std::string Append(const Profile& profile, bool last);
  std::string Publish();
  // Removes the temporary file (a write failed before any segment was complete).
  void Discard() { file_.Discard(); }
  std::string temp_path() const { return file_.temp_path(); }
  uint32_t segments() const { return next_.index; }

 private:
  OutputFile file_;
  SegmentHeader next_{0, 0};
};

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
