// Deterministic number formatting (see format.h).
#include "text/format.h"

#include <charconv>
#include <cstdio>
#include <string>

namespace gprof {
namespace {

// `units` (in 1/1000 of the display unit) as "I.FFF" followed by `suffix`.
std::string Thousandths(uint64_t thousandths, const char* suffix) {
  char buf[48];
  char* p = std::to_chars(buf, buf + 24, thousandths / 1000).ptr;
  *p++ = '.';
  const unsigned frac = static_cast<unsigned>(thousandths % 1000);
  *p++ = static_cast<char>('0' + frac / 100);
  *p++ = static_cast<char>('0' + frac / 10 % 10);
  *p++ = static_cast<char>('0' + frac % 10);
  return std::string(buf, p) + suffix;
}

uint64_t RoundDiv(uint64_t a, uint64_t b) { return a / b + (a % b * 2 >= b ? 1 : 0); }

}  // namespace

std::string FormatDuration(uint64_t ns) {
  if (ns >= 1'000'000'000ull) return Thousandths(RoundDiv(ns, 1'000'000), "s");
  if (ns >= 1'000'000ull) return Thousandths(RoundDiv(ns, 1'000), "ms");
  return Thousandths(ns, "us");
}

std::string FormatPercent(uint64_t part, uint64_t total) {
  if (total == 0) return "NaN";
  const unsigned __int128 num = static_cast<unsigned __int128>(part) * 10000u;
  const unsigned __int128 hundredths = (num * 2 + total) / (static_cast<unsigned __int128>(total) * 2);
  const uint64_t h = static_cast<uint64_t>(hundredths);
  char buf[48];
  char* p = std::to_chars(buf, buf + 24, h / 100).ptr;
  *p++ = '.';
  *p++ = static_cast<char>('0' + h % 100 / 10);
  *p++ = static_cast<char>('0' + h % 10);
  *p++ = '%';
  return std::string(buf, p);
}

size_t FormatMicros(uint64_t ns, char* out) {
  char* p = std::to_chars(out, out + 21, ns / 1000).ptr;
  unsigned frac = static_cast<unsigned>(ns % 1000);
  if (frac != 0) {
    *p++ = '.';
    *p++ = static_cast<char>('0' + frac / 100);
    frac %= 100;
    if (frac != 0) {
      *p++ = static_cast<char>('0' + frac / 10);
      frac %= 10;
      if (frac != 0) *p++ = static_cast<char>('0' + frac);
    }
  }
  return static_cast<size_t>(p - out);
}

std::string CsvQuote(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace gprof

namespace gprof {

std::string FormatMemory(int64_t bytes) {
  constexpr double kKb = 1024, kMb = 1024 * kKb, kGb = 1024 * kMb;
  const double b = static_cast<double>(bytes);
  const double mag = b < 0 ? -b : b;
  char buf[48];
  if (mag >= kGb) {
    std::snprintf(buf, sizeof buf, "%.2f GB", b / kGb);
  } else if (mag >= kMb) {
    std::snprintf(buf, sizeof buf, "%.2f MB", b / kMb);
  } else if (mag >= kKb) {
    std::snprintf(buf, sizeof buf, "%.2f KB", b / kKb);
  } else {
    return std::to_string(bytes) + " B";
  }
  return buf;
}

std::string FormatFixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

}  // namespace gprof
