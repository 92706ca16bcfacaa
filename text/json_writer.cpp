// JsonWriter (see json_writer.h).
#include "text/json_writer.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "text/format.h"
#include "text/utf8.h"

namespace gprof {

JsonWriter::JsonWriter(const std::string& path)
    : path_(path), file_(std::make_unique<OutputFile>()), buf_(kBufferSize) {
  if (std::string e = file_->Open(path, /*create_dirs=*/false); !e.empty()) {
    throw std::runtime_error("cannot write trace '" + path + "': " + e);
  }
}

JsonWriter::JsonWriter(JsonSink sink) : path_("<memory>"), sink_(sink), buf_(kBufferSize) {}

JsonWriter::~JsonWriter() = default;

void JsonWriter::Emit(const char* data, size_t size) {
  if (file_ == nullptr) {
    if (sink_.write != nullptr) sink_.write(sink_.ctx, data, size);
  } else if (!file_->Write(data, size)) {
    throw std::runtime_error("cannot write trace '" + path_ + "': " + file_->Commit());
  }
  written_ += size;
}

void JsonWriter::Flush() {
  if (used_ == 0) return;
  Emit(buf_.data(), used_);
  used_ = 0;
}

JsonWriter& JsonWriter::WriteThrough(std::string_view s) {
  Flush();
  Emit(s.data(), s.size());
  return *this;
}

JsonWriter& JsonWriter::Uint(uint64_t v) {
  char* p = Reserve(24);
  used_ = static_cast<size_t>(std::to_chars(p, p + 24, v).ptr - buf_.data());
  return *this;
}

JsonWriter& JsonWriter::Int(int64_t v) {
  char* p = Reserve(24);
  used_ = static_cast<size_t>(std::to_chars(p, p + 24, v).ptr - buf_.data());
  return *this;
}

char* PutMicros(char* p, uint64_t ns) { return p + FormatMicros(ns, p); }

JsonWriter& JsonWriter::Micros(uint64_t ns) {
  char* p = Reserve(32);
  used_ += FormatMicros(ns, p);
  return *this;
}

JsonWriter& JsonWriter::Fixed(double v, int decimals) {
  if (!std::isfinite(v)) v = 0;  // "nan"/"inf" are not JSON
  char* p = Reserve(400);
  const auto r = std::to_chars(p, p + 400, v, std::chars_format::fixed, decimals);
  used_ = static_cast<size_t>(r.ptr - buf_.data());
  return *this;
}

JsonWriter& JsonWriter::Decimal(double v, int decimals) {
  Fixed(v, decimals);
  if (decimals <= 0) return *this;
  // Fixed wrote "I.FFF" at the end of the buffer (a flush can only come before it).
  size_t end = used_;
  while (buf_[end - 1] == '0') --end;
  if (buf_[end - 1] == '.') --end;
  used_ = end;
  return *this;
}

void AppendJsonString(std::string_view s, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  size_t i = 0;
  while (i < s.size()) {
    // Copy the longest run that needs no escaping in one go (the common case: the whole name).
    size_t j = i;
    while (j < s.size()) {
      const unsigned char c = static_cast<unsigned char>(s[j]);
      if (c < 0x20 || c == '"' || c == '\\' || c >= 0x80) break;
      ++j;
    }
    out->append(s.substr(i, j - i));
    i = j;
    if (i == s.size()) break;
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(static_cast<char>(c));
      ++i;
    } else if (c < 0x20) {
      switch (c) {
        case '\n': out->append("\\n"); break;
        case '\t': out->append("\\t"); break;
        case '\r': out->append("\\r"); break;
        default: {
          const char esc[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
          out->append(esc, 6);
        }
      }
      ++i;
    } else {
      const size_t n = Utf8SequenceLength(s, i);
      if (n == 0) {
        out->append("\xEF\xBF\xBD");
        ++i;
      } else {
        out->append(s.substr(i, n));
        i += n;
      }
    }
  }
  out->push_back('"');
}

JsonWriter& JsonWriter::String(std::string_view s) {
  // Fast path: nothing to escape (the common case: plain names).
  bool plain = true;
  for (const char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == '"' || c == '\\' || c >= 0x80) {
      plain = false;
      break;
    }
  }
  if (plain) return Char('"').Raw(s).Char('"');
  std::string escaped;
  AppendJsonString(s, &escaped);
  return Raw(escaped);
}

uint64_t JsonWriter::Close() {
  Flush();
  std::unique_ptr<OutputFile> f = std::move(file_);
  sink_ = {};
  if (f != nullptr) {
    if (std::string e = f->Commit(); !e.empty()) {
      throw std::runtime_error("cannot write trace '" + path_ + "': " + e);
    }
  }
  return written_;
}

}  // namespace gprof
