// JsonWriter: a buffered, hand-formatted JSON output stream for large traces (launcher process
// only). It writes text as it comes into a 1 MiB buffer that it hands to a sink when full: a file
// (the product path) or a caller's callback (in-memory formatting, benchmarks). The caller is
// responsible for the structure (commas, brackets). Strings are escaped and repaired: quotes and
// backslashes escaped, control characters as \u00XX, invalid UTF-8 replaced by U+FFFD.
//
// Hot formatting code may Reserve() a bounded region and fill it with the Put* helpers below
// (no bounds check per field), then Commit() the end pointer.
#pragma once

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/output_file.h"

namespace gprof {

// Receives the formatted bytes in order, in chunks of at most 1 MiB. May throw to abort.
struct JsonSink {
  void* ctx = nullptr;
  void (*write)(void* ctx, const char* data, size_t size) = nullptr;
};

// Appends the quoted, escaped, UTF-8-repaired JSON form of `s` to `out`.
void AppendJsonString(std::string_view s, std::string* out);

// Raw formatting into a region the caller has reserved (see JsonWriter::Reserve).
inline char* PutRaw(char* p, std::string_view s) {
  std::memcpy(p, s.data(), s.size());
  return p + s.size();
}
inline char* PutUint(char* p, uint64_t v) { return std::to_chars(p, p + 20, v).ptr; }
// Microseconds from nanoseconds, exact, trailing zeros left out (format.h FormatMicros; at most
// 24 characters).
char* PutMicros(char* p, uint64_t ns);

class JsonWriter {
 public:
  // Opens `path` for writing (model/output_file.h: a temporary name, renamed into place by Close;
  // removed if Close is never reached); throws std::runtime_error naming the file when it cannot.
  explicit JsonWriter(const std::string& path);
  // Formats into memory: every full buffer (and the rest at Close) goes to `sink`.
  explicit JsonWriter(JsonSink sink);
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
  // Microseconds from nanoseconds, exact, trailing zeros left out (ts/dur; FormatMicros).
  JsonWriter& Micros(uint64_t ns);
  // Fixed-point with `decimals` digits (for derived values such as bandwidth).
  JsonWriter& Fixed(double v, int decimals);
  // `v` rounded to `decimals` digits like Fixed, then written without trailing zeros (and without
  // the point when none remain): 4.00 -> "4", 2.50 -> "2.5". For derived values whose readers
  // take any JSON number.
  JsonWriter& Decimal(double v, int decimals);
  // A quoted, escaped, UTF-8-repaired JSON string.
  JsonWriter& String(std::string_view s);

  // Room for `n` <= 64 KiB bytes at the returned pointer; fill it, then Commit(end).
  char* Reserve(size_t n) {
    if (kBufferSize - used_ < n) Flush();
    return buf_.data() + used_;
  }
  void Commit(char* end) { used_ = static_cast<size_t>(end - buf_.data()); }

  // Hands what is buffered to the file or sink now.
  void Flush();

  // Bytes formatted so far (handed on or still buffered).
  uint64_t bytes() const { return written_ + used_; }

  // Writes out the buffer and closes the file; throws std::runtime_error on an I/O error.
  // Returns the number of bytes written in all.
  uint64_t Close();

 private:
  static constexpr size_t kBufferSize = 1 << 20;
  JsonWriter& WriteThrough(std::string_view s);
  void Emit(const char* data, size_t size);

  std::string path_;
  std::unique_ptr<OutputFile> file_;  // the product path; renamed into place by Close
  JsonSink sink_;  // used when file_ is null
  std::vector<char> buf_;
  size_t used_ = 0;
  uint64_t written_ = 0;
};

}  // namespace gprof
