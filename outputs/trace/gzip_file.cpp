// GzipFile and ReadMaybeGzip (see gzip_file.h). zlib (Debian zlib1g-dev): the format every
// reader of .json.gz traces expects, streamed so that a large trace is never held whole.
#include "outputs/trace/gzip_file.h"

#include <zlib.h>

#include <cstdint>
#include <fstream>
#include <algorithm>
#include <iterator>
#include <stdexcept>
#include <vector>

#include "model/output_file.h"

namespace gprof {
namespace {

// Level 1: traces compress about 10x at it, and the writer stays near the JSON formatter's
// speed (bench figure 6); higher levels gain little on this kind of text.
constexpr int kLevel = 1;
constexpr size_t kChunk = 1 << 18;

}  // namespace

bool IsGzipPath(const std::string& path) {
  return path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
}

struct GzipFile::State {
  std::string path;
  OutputFile file;
  z_stream z{};
  bool z_open = false;
  std::vector<unsigned char> out = std::vector<unsigned char>(kChunk);
  uint64_t bytes = 0;

  void Fail(const std::string& what) {
    throw std::runtime_error("cannot write '" + path + "': " + what);
  }
  // Runs deflate with `flush` until the input is used up (and, at Z_FINISH, the stream ends).
  void Deflate(int flush) {
    for (;;) {
      z.next_out = out.data();
      z.avail_out = static_cast<uInt>(out.size());
      const int rc = deflate(&z, flush);
      if (rc == Z_STREAM_ERROR) Fail("zlib stream error");
      const size_t produced = out.size() - z.avail_out;
      if (produced != 0) {
        if (!file.Write(out.data(), produced)) Fail(file.Close());
        bytes += produced;
      }
      if (flush == Z_FINISH ? rc == Z_STREAM_END : z.avail_out != 0) return;
    }
  }
};

GzipFile::GzipFile(const std::string& path) : s_(std::make_unique<State>()) {
  s_->path = path;
  if (std::string e = s_->file.Open(path, /*create_dirs=*/false); !e.empty()) s_->Fail(e);
  // windowBits 15 + 16: a gzip header and trailer rather than a bare zlib stream.
  if (deflateInit2(&s_->z, kLevel, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    s_->Fail("zlib init failed");
  }
  s_->z_open = true;
}

GzipFile::~GzipFile() {
  if (s_->z_open) deflateEnd(&s_->z);
}

void GzipFile::Write(const char* data, size_t n) {
  while (n > 0) {
    const size_t take = std::min<size_t>(n, 1u << 30);
    s_->z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
    s_->z.avail_in = static_cast<uInt>(take);
    s_->Deflate(Z_NO_FLUSH);
    data += take;
    n -= take;
  }
}

JsonSink GzipFile::Sink() {
  return JsonSink{this, [](void* ctx, const char* data, size_t size) {
                    static_cast<GzipFile*>(ctx)->Write(data, size);
                  }};
}

uint64_t GzipFile::Close() {
  s_->z.next_in = nullptr;
  s_->z.avail_in = 0;
  s_->Deflate(Z_FINISH);
  deflateEnd(&s_->z);
  s_->z_open = false;
  if (std::string e = s_->file.Commit(); !e.empty()) s_->Fail(e);
  return s_->bytes;
}

std::string ReadMaybeGzip(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read '" + path + "'");
  std::string raw{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (raw.size() < 2 || static_cast<unsigned char>(raw[0]) != 0x1f ||
      static_cast<unsigned char>(raw[1]) != 0x8b) {
    return raw;
  }
  if (raw.size() > UINT32_MAX) throw std::runtime_error("'" + path + "': over 4 GiB compressed");
  z_stream z{};
  if (inflateInit2(&z, 15 + 32) != Z_OK) throw std::runtime_error("zlib init failed");
  z.next_in = reinterpret_cast<Bytef*>(raw.data());
  z.avail_in = static_cast<uInt>(raw.size());
  std::string text;
  std::vector<char> out(kChunk);
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    rc = inflate(&z, Z_NO_FLUSH);
    text.append(out.data(), out.size() - z.avail_out);
    if (rc == Z_BUF_ERROR && z.avail_in == 0) break;  // truncated input
  }
  const std::string why = z.msg != nullptr ? z.msg : "truncated";
  inflateEnd(&z);
  if (rc != Z_STREAM_END) {
    throw std::runtime_error("'" + path + "' is not a complete gzip file (" + why + ")");
  }
  return text;
}

}  // namespace gprof
