// PNG reading for the browser test (see png_check.h), after the PNG specification (W3C, 2nd
// edition): chunks, zlib-compressed IDAT, the five scanline filters. Test-only.
#include "tests/report/png_check.h"

#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>
#include <vector>

namespace gprof::testing {
namespace {

uint32_t Be32(const unsigned char* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}

int Paeth(int a, int b, int c) {
  const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  if (pa <= pb && pa <= pc) return a;
  return pb <= pc ? b : c;
}

}  // namespace

PngSummary SummarizePng(const std::string& path) {
  PngSummary s;
  std::ifstream in(path, std::ios::binary);
  const std::vector<unsigned char> d((std::istreambuf_iterator<char>(in)),
                                     std::istreambuf_iterator<char>());
  static const unsigned char kSig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (d.size() < 8 || !std::equal(kSig, kSig + 8, d.begin())) {
    s.error = "not a PNG file: " + path;
    return s;
  }
  std::vector<unsigned char> idat;
  int depth = 0, color = -1, interlace = 0;
  for (size_t i = 8; i + 12 <= d.size();) {
    const uint32_t len = Be32(&d[i]);
    const std::string type(reinterpret_cast<const char*>(&d[i + 4]), 4);
    if (i + 12 + len > d.size()) break;
    const unsigned char* body = &d[i + 8];
    if (type == "IHDR" && len >= 13) {
      s.width = Be32(body);
      s.height = Be32(body + 4);
      depth = body[8];
      color = body[9];
      interlace = body[12];
    } else if (type == "IDAT") {
      idat.insert(idat.end(), body, body + len);
    }
    i += 12 + len;
  }
  const int channels = color == 2 ? 3 : color == 6 ? 4 : 0;
  if (depth != 8 || channels == 0 || interlace != 0 || s.width == 0 || s.height == 0) {
    s.error = "unsupported PNG (8-bit RGB/RGBA, not interlaced, only)";
    return s;
  }
  const size_t stride = size_t{s.width} * channels;
  std::vector<unsigned char> raw((stride + 1) * s.height);
  uLongf raw_len = raw.size();
  if (uncompress(raw.data(), &raw_len, idat.data(), idat.size()) != Z_OK ||
      raw_len != raw.size()) {
    s.error = "corrupt image data";
    return s;
  }
  std::vector<unsigned char> prev(stride, 0), cur(stride);
  std::set<uint32_t> colors;
  for (uint32_t y = 0; y < s.height; ++y) {
    const unsigned char* line = &raw[y * (stride + 1)];
    const int filter = line[0];
    for (size_t x = 0; x < stride; ++x) {
      const int a = x >= static_cast<size_t>(channels) ? cur[x - channels] : 0;
      const int b = prev[x];
      const int c = x >= static_cast<size_t>(channels) ? prev[x - channels] : 0;
      int v = line[1 + x];
      switch (filter) {
        case 1: v += a; break;
        case 2: v += b; break;
        case 3: v += (a + b) / 2; break;
        case 4: v += Paeth(a, b, c); break;
        default: break;
      }
      cur[x] = static_cast<unsigned char>(v);
    }
    for (uint32_t x = 0; x < s.width; ++x) {
      const unsigned char* px = &cur[size_t{x} * channels];
      ++s.pixels;
      if (px[0] < 240 || px[1] < 240 || px[2] < 240) ++s.not_white;
      if (colors.size() < 4096) colors.insert(uint32_t{px[0]} << 16 | uint32_t{px[1]} << 8 | px[2]);
    }
    prev.swap(cur);
  }
  s.colors = colors.size();
  return s;
}

}  // namespace gprof::testing
