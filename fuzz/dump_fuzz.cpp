// libFuzzer target: the dump reader (model/dump.h ParseDump) and, for every dump it accepts, the
// outputs a user gets from it (table, findings, report.html, the JSON and Perfetto traces). The
// input is the bodies of a dump's segments (format 6: a long run is written in several),
// separated by "GPROFSEG": the target gives each its 16-byte header and a trailer with the right
// checksum, so the fuzzer explores the sections and the chaining of segments (table bases,
// indices, a last segment cut short) rather than the checksum; every 16th input is also fed as
// is (header and trailer checks). A dump is a file anyone can hand to `gprof-run report`.
//
// Invariants, not only "no crash" (a broken one aborts, fuzz/fuzz_check.h):
//  - a rejected dump says why (a non-empty error);
//  - an accepted dump renders: SortedTableRows, RenderTable, FindFindings, FormatFindingsJson,
//    FormatHtmlReport, WriteTraceJson and WritePerfettoTrace all return. The only refusal these
//    document is std::runtime_error on I/O, and writing to /dev/null or a fresh file under
//    $TMPDIR cannot fail, so any exception is a dump that `gprof-run report` accepts and then
//    cannot show: a bug (the exception's what() is printed);
//  - the table names its header, the findings JSON parses, the page is one whole HTML document;
//  - the JSON trace written passes gprof-run's own trace check (CheckTraceText, REFERENCE.md §4)
//    but for "nesting": it is well-formed UTF-8 JSON with a traceEvents array, every flow has its
//    start, and so on. Partial overlaps on one track are the one thing a mutated dump can carry
//    into its trace by itself (two host calls of one thread whose recorded times overlap, or a
//    process whose pid is a device's), and the checker is what reports them to the user; a dump
//    the collector wrote never holds them (the collection and golden tests check its traces).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "analysis/findings/findings.h"
#include "fuzz/fuzz_check.h"
#include "model/dump.h"
#include "outputs/html/html_report.h"
#include "outputs/perfetto/perfetto_trace.h"
#include "outputs/table/table.h"
#include "outputs/trace/trace_check.h"
#include "outputs/trace/trace_json.h"

namespace {

// A file the traces are written to and read back from, one per process.
const std::string& TracePath() {
  static const std::string path = [] {
    const char* dir = std::getenv("TMPDIR");
    std::string t = std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") +
                    "/gprof_dump_fuzz.XXXXXX";
    const int fd = mkstemp(t.data());
    GPROF_FUZZ_CHECK(fd >= 0);
    close(fd);
    return t;
  }();
  return path;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void Render(const gprof::Profile& p) {
  try {
    const gprof::TableRows rows = gprof::SortedTableRows(p, gprof::TableOptions{});
    const std::string table = gprof::RenderTable(p, gprof::TableOptions{}, rows);
    GPROF_FUZZ_CHECK(table.find("Name") != std::string::npos);
    gprof::FindingsContext context;
    const std::vector<gprof::Finding> findings = gprof::FindFindings(p, &context);
    GPROF_FUZZ_CHECK(nlohmann::json::accept(gprof::FormatFindingsJson(findings)));
    gprof::HtmlReportInput page;
    page.profile = &p;
    page.findings = &findings;
    page.context = &context;
    page.table = &rows;
    const std::string html = gprof::FormatHtmlReport(page);
    GPROF_FUZZ_CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
    GPROF_FUZZ_CHECK(html.find("</html>") != std::string::npos);
    (void)gprof::WriteTraceJson(p, TracePath());
    const std::vector<gprof::TraceViolation> violations = gprof::CheckTraceText(ReadAll(TracePath()));
    for (const gprof::TraceViolation& v : violations) {
      if (v.rule == "nesting") continue;
      std::fprintf(stderr, "trace check: %s: %s\n", v.rule.c_str(), v.message.c_str());
      GPROF_FUZZ_CHECK(v.rule == "nesting");
    }
    (void)gprof::WritePerfettoTrace(p, "/dev/null");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "an accepted dump does not render: %s\n", e.what());
    GPROF_FUZZ_CHECK(!"an accepted dump renders");
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
  if (gprof::ParseDump(dump, "fuzz", &p, &error)) {
    Render(p);
  } else {
    GPROF_FUZZ_CHECK(!error.empty());
  }
  if (size % 16 == 0) {
    gprof::Profile raw;
    error.clear();
    if (gprof::ParseDump({reinterpret_cast<const char*>(data), size}, "fuzz", &raw, &error)) {
      Render(raw);
    } else {
      GPROF_FUZZ_CHECK(!error.empty());
    }
  }
  return 0;
}
