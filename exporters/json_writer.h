// JsonWriter: a buffered, hand-formatted JSON output stream for large traces (launcher process
// only). It writes text as it comes (no document in memory); the caller is responsible for the
// structure (commas, brackets). Strings are escaped and repaired: quotes and backslashes escaped,
// control characters as \u00XX, invalid UTF-8 replaced by U+FFFD.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace gprof {

class JsonWriter {
 public:
  // Opens `path` for writing; throws std::runtime_error naming the file when it cannot.
  explicit JsonWriter(const std::string& path);
  ~JsonWriter();
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;

  JsonWriter& Raw(std::string_view s) {
    if (s.size() > kBufferSize - used_) Flush();
    if (s.size() > kBufferSize) return WriteThrough(s);
    std::copy(s.begin(), s.end(), buf_.data() + used_);
    used_ += s.size();
    return *this;
  }
  JsonWriter& Char(char c) {
    if (used_ == kBufferSize) Flush();
    buf_[used_++] = c;
    return *this;
  }
  JsonWriter& Uint(uint64_t v);
  JsonWriter& Int(int64_t v);
  // Microseconds with exactly 3 decimals from nanoseconds (ts/dur).
  JsonWriter& Micros(uint64_t ns);
  // Fixed-point with `decimals` digits (for derived values such as bandwidth).
  JsonWriter& Fixed(double v, int decimals);
  // A quoted, escaped, UTF-8-repaired JSON string.
  JsonWriter& String(std::string_view s);

  // Writes out the buffer and closes the file; throws std::runtime_error on an I/O error.
  // Returns the number of bytes written in all.
  uint64_t Close();

 private:
  static constexpr size_t kBufferSize = 1 << 20;
  void Flush();
  JsonWriter& WriteThrough(std::string_view s);
  char* Reserve(size_t n) {
    if (kBufferSize - used_ < n) Flush();
    return buf_.data() + used_;
  }

  std::string path_;
  std::FILE* file_ = nullptr;
  std::vector<char> buf_;
  size_t used_ = 0;
  uint64_t written_ = 0;
};

}  // namespace gprof
