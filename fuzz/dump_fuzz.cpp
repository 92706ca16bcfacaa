// libFuzzer target: the dump reader (model/dump.h ParseDump) and, for every dump it accepts, the
// outputs a user gets from it (table, findings, report.html, trace JSON to /dev/null). The input is
// the bodies of a dump's segments (format 6: a long run is written in several), separated by
// "GPROFSEG": the target gives each its 16-byte header and a trailer with the right checksum, so
// the fuzzer explores the sections and the chaining of segments (table bases, indices, a last
// segment cut short) rather than the checksum; every 16th input is also fed as is (header and
// trailer checks). Any crash, hang or sanitizer report is a bug: a
// dump is a file anyone can hand to `gprof-run report`.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "analysis/findings/findings.h"
#include "model/dump.h"
#include "outputs/html/html_report.h"
#include "outputs/table/table.h"
#include "outputs/trace/trace_json.h"

namespace {

void Render(const gprof::Profile& p) {
  try {
    const gprof::TableRows rows = gprof::SortedTableRows(p, gprof::TableOptions{});
    (void)gprof::RenderTable(p, gprof::TableOptions{}, rows);
    gprof::FindingsContext context;
    const std::vector<gprof::Finding> findings = gprof::FindFindings(p, &context);
    (void)gprof::FormatFindingsJson(findings);
    gprof::HtmlReportInput page;
    page.profile = &p;
    page.findings = &findings;
    page.context = &context;
    page.table = &rows;
    (void)gprof::FormatHtmlReport(page);
    (void)gprof::WriteTraceJson(p, "/dev/null");
  } catch (const std::exception&) {
    // Exporters may throw on I/O (documented); a throw is not a crash.
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<char> dump;
  const char magic[8] = {'G', 'P', 'R', 'O', 'F', 'D', 'M', 'P'};
  const uint32_t version = gprof::kDumpFormatVersion, zero = 0, end_tag = 0xffffffffu;
  const char end_magic[8] = {'G', 'P', 'R', 'O', 'F', 'E', 'N', 'D'};
  const char separator[8] = {'G', 'P', 'R', 'O', 'F', 'S', 'E', 'G'};
  auto put = [&](const void* p, size_t n) {
    const char* c = static_cast<const char*>(p);
    dump.insert(dump.end(), c, c + n);
  };
  const char* body = reinterpret_cast<const char*>(data);
  const char* const end = body + size;
  for (;;) {
    const char* next = end;
    for (const char* q = body; q + sizeof separator <= end; ++q) {
      if (std::memcmp(q, separator, sizeof separator) == 0) {
        next = q;
        break;
      }
    }
    const size_t start = dump.size();
    put(magic, 8);
    put(&version, 4);
    put(&zero, 4);
    put(body, static_cast<size_t>(next - body));
    const uint64_t hash = gprof::DumpChecksum(dump.data() + start, dump.size() - start);
    put(&end_tag, 4);
    put(&zero, 4);
    put(&hash, 8);
    put(end_magic, 8);
    if (next == end) break;
    body = next + sizeof separator;
  }
  gprof::Profile p;
  std::string error;
  if (gprof::ParseDump(dump, "fuzz", &p, &error)) Render(p);
  if (size % 16 == 0) {
    gprof::Profile raw;
    if (gprof::ParseDump({reinterpret_cast<const char*>(data), size}, "fuzz", &raw, &error)) {
      Render(raw);
    }
  }
  return 0;
}
