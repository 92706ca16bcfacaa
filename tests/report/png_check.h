// Reads a PNG screenshot (8-bit RGB or RGBA, non-interlaced, as Chromium writes them) and says
// how much of it is drawn: the browser test's check that a page did not render blank. Test-only.
#pragma once

#include <cstdint>
#include <string>

namespace gprof::testing {

struct PngSummary {
  std::string error;       // "" when the file was read
  uint32_t width = 0, height = 0;
  uint64_t pixels = 0;
  uint64_t not_white = 0;  // pixels with some channel below 240
  uint64_t colors = 0;     // distinct RGB values (up to 4096 counted)
};

PngSummary SummarizePng(const std::string& path);

}  // namespace gprof::testing
