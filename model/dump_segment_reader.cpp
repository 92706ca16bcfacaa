// A dump read one segment at a time (see dump_segment_reader.h): the segment's bytes are found by
// walking its section headers with pread, read, checked and decoded by the same steps as ReadDump
// (dump_read.cpp), then released.
#include "model/dump_segment_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "model/dump.h"
#include "model/dump_codec.h"

namespace gprof {

using namespace dump_detail;

namespace {

bool ReadAt(int fd, void* into, size_t n, uint64_t at) {
  char* p = static_cast<char*>(into);
  while (n > 0) {
    const ssize_t got = ::pread(fd, p, n, static_cast<off_t>(at));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got, n -= static_cast<size_t>(got), at += static_cast<uint64_t>(got);
  }
  return true;
}

}  // namespace

void DropRecords(Profile* p) {
  const auto drop = [](auto& v) { std::decay_t<decltype(v)>().swap(v); };
  drop(p->ranges), drop(p->marks), drop(p->api_calls), drop(p->steps), drop(p->api_stacks);
  drop(p->cpu_samples), drop(p->thread_cpu), drop(p->torch_memory);
  ForEachGpuKind(*p, [&](GpuKind, auto& records) { drop(records); });
}

void AppendRecords(const Profile& from, Profile* into) {
  const auto append = [](const auto& a, auto* b) { b->insert(b->end(), a.begin(), a.end()); };
  append(from.ranges, &into->ranges), append(from.marks, &into->marks);
  append(from.api_calls, &into->api_calls), append(from.steps, &into->steps);
  append(from.api_stacks, &into->api_stacks), append(from.cpu_samples, &into->cpu_samples);
  append(from.thread_cpu, &into->thread_cpu);
  ForEachGpuKind(*into, [&](GpuKind, auto& to) {
    using T = typename std::decay_t<decltype(to)>::value_type;
    append(RecordsOf<T>(from), &to);
  });
}

uint64_t RecordCount(const Profile& p) {
  uint64_t n = p.ranges.size() + p.marks.size() + p.api_calls.size() + p.steps.size() +
               p.api_stacks.size() + p.cpu_samples.size() + p.thread_cpu.size();
  ForEachGpuKind(p, [&](GpuKind, const auto& records) { n += records.size(); });
  return n;
}

DumpSegmentReader::~DumpSegmentReader() {
  if (fd_ >= 0) ::close(fd_);
}

bool DumpSegmentReader::Fail(const std::string& why, std::string* error) {
  *error = path_ + ": " + why;
  return false;
}

bool DumpSegmentReader::Open(const std::string& path, std::string* error) {
  path_ = path;
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd_ < 0 || ::fstat(fd_, &st) != 0) {
    return Fail(std::string("cannot open: ") + std::strerror(errno), error);
  }
  size_ = static_cast<uint64_t>(st.st_size);
  profile_ = Profile{};
  profile_.domains.clear();  // the first segment brings the default domain with the others
  return true;
}

uint64_t DumpSegmentReader::FindEnd() {
  uint64_t p = pos_ + kDumpHeaderBytes;
  while (size_ - p >= 16 && p <= size_) {
    char head[16];
    if (!ReadAt(fd_, head, sizeof head, p)) return 0;
    uint32_t tag = 0, record_size = 0;
    uint64_t count = 0;
    std::memcpy(&tag, head, 4);
    std::memcpy(&record_size, head + 4, 4);
    std::memcpy(&count, head + 8, 8);
    if (tag == kEnd) return size_ - p >= kDumpTrailerBytes ? p + kDumpTrailerBytes : 0;
    p += 16;
    if (record_size == 0 || count > (size_ - p) / record_size) return 0;
    p += count * record_size;
  }
  return 0;
}

bool DumpSegmentReader::Next(std::string* error) {
  error->clear();
  if (last_ || pos_ >= size_) return index_ == 0 ? Fail("not a gprof-run dump (empty)", error)
                                                 : false;
  char head[kDumpHeaderBytes];
  const bool whole_header = size_ - pos_ >= kDumpHeaderBytes && ReadAt(fd_, head, sizeof head, pos_);
  if (!whole_header || std::memcmp(head, kMagic, sizeof kMagic) != 0) {
    if (index_ == 0) return Fail("not a gprof-run dump (bad magic)", error);
    if (!whole_header) return false;  // a segment cut short in its header: read up to it
    return Fail("corrupt (segment " + std::to_string(index_) + " has a bad magic)", error);
  }
  uint32_t version = 0;
  std::memcpy(&version, head + sizeof kMagic, 4);
  if (version != kDumpFormatVersion) {
    return Fail("dump format version " + std::to_string(version) + " where this gprof-run reads " +
                    std::to_string(kDumpFormatVersion) + " (read it with ReadDump for details)",
                error);
  }
  const uint64_t end = FindEnd();
  if (end == 0) {
    if (index_ == 0) {
      return Fail("truncated (no end marker): the writing process probably died mid-write", error);
    }
    return false;  // a last segment cut short: read up to the one before
  }
  buffer_.resize(end - pos_);
  if (!ReadAt(fd_, buffer_.data(), buffer_.size(), pos_)) {
    return Fail(std::string("cannot read: ") + std::strerror(errno), error);
  }
  const size_t body_end = buffer_.size() - kDumpTrailerBytes;
  uint64_t stored_hash = 0;
  std::memcpy(&stored_hash, buffer_.data() + body_end + 8, 8);
  if (std::memcmp(buffer_.data() + buffer_.size() - sizeof kEndMagic, kEndMagic,
                  sizeof kEndMagic) != 0) {
    return index_ == 0 ? Fail("truncated (no end marker)", error) : false;
  }
  if (Checksum(buffer_.data(), body_end) != stored_hash) {
    return Fail("corrupt (checksum mismatch in segment " + std::to_string(index_) + ")", error);
  }
  DropRecords(&profile_);
  SegmentHeader seg;
  std::string why;
  if (!ReadSegment(buffer_.data(), kDumpHeaderBytes, body_end, index_ == 0, &profile_, &seg,
                   &why)) {
    return Fail(why, error);
  }
  if (seg.index != index_) {
    return Fail("corrupt (segment " + std::to_string(index_) + " says it is segment " +
                    std::to_string(seg.index) + ")",
                error);
  }
  largest_ = std::max<uint64_t>(largest_, buffer_.size());
  std::vector<char>().swap(buffer_);  // the decoded records are what stays
  ++index_;
  pos_ = end;
  last_ = (seg.flags & kSegmentLast) != 0;
  SortRangesAndMarks(&profile_);
  profile_.info.segments = index_;
  profile_.info.complete = last_;
  if (const std::string bad = CheckProfile(profile_); !bad.empty()) {
    return Fail("corrupt (" + bad + ")", error);
  }
  return true;
}

}  // namespace gprof
