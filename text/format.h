// Number formatting for the exporters (launcher process only). Everything is integer arithmetic
// on nanoseconds so that outputs are deterministic and golden files stable.
#pragma once

#include <cstdint>
#include <string>

namespace gprof {

// torch's _format_time: >= 1 s -> "1.234s", >= 1 ms -> "1.234ms", else "1.234us" (3 decimals,
// rounded half up).
std::string FormatDuration(uint64_t ns);
// Bytes as torch's _format_memory writes them (profiler_util.py, torch 2.15): "2.00 GB",
// "1.50 MB", "3.00 KB" (two decimals, 1024-based), else "512 B"; negative for net frees.
std::string FormatMemory(int64_t bytes);

// A CSV field (RFC 4180): as it is, or in double quotes with quotes doubled when it holds a
// comma, quote or line break.
std::string CsvQuote(const std::string& s);

// torch's _format_time_share: "12.34%" of `total`; "NaN" when total is 0 (torch prints the same).
std::string FormatPercent(uint64_t part, uint64_t total);

// Microseconds from integer nanoseconds, exact: up to 3 decimals with the trailing zeros left out
// (1234567 -> "1234.567", 1234500 -> "1234.5", 1234000 -> "1234"), the same number as Kineto's
// fixed 3 decimals in fewer characters. Writes into `out` (at least 24 bytes) and returns the
// number of characters written.
size_t FormatMicros(uint64_t ns, char* out);

// `v` with `decimals` decimals, as printf's "%.*f".
std::string FormatFixed(double v, int decimals);

}  // namespace gprof
