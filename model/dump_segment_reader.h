// A dump read one segment at a time (model/dump.h: a long run's dump is a sequence of
// segments), for readers whose memory must not grow with the run: `gprof-run merge` holds one
// segment per rank. Each segment comes as a Profile holding that segment's records only, with
// the run's tables (strings, domains, launch configs, API names, stacks, threads, devices,
// modules) as they stand after it and its counters summed over the segments read so far.
// Launcher process and benchmarks only.
//
// What a whole read (ReadDump) adds and a segment alone cannot: GPU records matched to the
// launching calls of earlier segments (ProfileInfo's incomplete counts), and ranges sorted across
// segments (each segment's are sorted). A last segment cut short ends the read as ReadDump does
// (complete() false); a bad checksum, magic or version is an error.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/profile.h"

namespace gprof {

class DumpSegmentReader {
 public:
  DumpSegmentReader() = default;
  ~DumpSegmentReader();
  DumpSegmentReader(const DumpSegmentReader&) = delete;
  DumpSegmentReader& operator=(const DumpSegmentReader&) = delete;

  // Opens `path`; false with `error` (naming the file) when it cannot be opened.
  bool Open(const std::string& path, std::string* error);
  // Reads the next segment into profile(), dropping the previous segment's records. False at the
  // end (error empty) or on a bad segment (error names the file and what is wrong).
  bool Next(std::string* error);
  const Profile& profile() const { return profile_; }
  Profile* mutable_profile() { return &profile_; }
  uint32_t segments_read() const { return index_; }
  const std::string& path() const { return path_; }
  // Whether the last segment read is marked the run's last.
  bool complete() const { return last_; }
  // The bytes of the largest segment read so far (what one Next holds at once, besides the
  // decoded records).
  uint64_t largest_segment_bytes() const { return largest_; }

 private:
  bool Fail(const std::string& why, std::string* error);
  // The end of the segment at pos_ (0: cut short), walking its section headers with pread.
  uint64_t FindEnd();

  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
  uint64_t pos_ = 0;
  uint32_t index_ = 0;
  bool last_ = false;
  uint64_t largest_ = 0;
  Profile profile_;
  std::vector<char> buffer_;
};

// Drops `profile`'s records (ranges, marks, calls, steps, GPU records, samples) and keeps its
// tables and counters: what stays between two segments.
void DropRecords(Profile* profile);
// Appends `from`'s records (those DropRecords drops, torch_memory aside) to `into`'s, in order:
// segments appended in their order make the run's records (ranges sorted again by the caller).
void AppendRecords(const Profile& from, Profile* into);
// The records DropRecords drops, counted (ranges, marks, calls, steps, GPU records, samples).
uint64_t RecordCount(const Profile& profile);

}  // namespace gprof
