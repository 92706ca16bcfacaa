// Turns the dumps in an output directory into tables and traces, and prints the main table and a
// closing line. Shared by `gprof-run program...` (after the program exits) and
// `gprof-run report DIR`. Launcher process only; may throw internally but catches per dump, so a
// corrupt dump never stops the others from being rendered.
//
// Naming (agreed with the injection library):
//   <program>.<pid>.gpdump                              whole run of one process
//   <program>.<pid>.cycle<C>.steps<A>-<B>.gpdump        one schedule window
//   <program>.<pid>.capture<K>.gpdump                   one capture of --start-paused (window
//                                                       cycle K-1)
// The main process (pid in gprof-run.json; without a manifest, the only whole-run dump) gets
// <dir>/table.txt, <dir>/trace.json, <dir>/trace.pftrace (the same trace as Perfetto protobuf) and
// <dir>/findings.json / findings.txt and <dir>/report.html (launcher/html_page.h); every other
// dump <stem>.gpdump gets <stem>.table.txt, <stem>.trace.json, <stem>.pftrace,
// <stem>.findings.json / .txt and <stem>.report.html. With --export sqlite every dump also gets
// <stem>.sqlite (outputs/sqlite/sqlite_export.h), as `gprof-run export DIR` writes it.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "outputs/table/table.h"

namespace gprof::launcher {

struct DumpName {
  std::string stem;     // file name without .gpdump
  std::string program;
  long pid = 0;
  bool window = false;  // a schedule window (or a capture) rather than the whole run
  bool capture = false;  // a capture of --start-paused (`cycle` is its number - 1)
  uint32_t cycle = 0;
  uint32_t first_step = 0;
  uint32_t last_step = 0;
};

// False when `file_name` is not a dump name.
bool ParseDumpName(const std::string& file_name, DumpName* name);

// The dump files directly in `dir` (not in subdirectories), unordered.
std::vector<DumpName> DumpsIn(const std::string& dir);

// The dumps of output directory `dir` that count for its processes: per process its whole-run
// dump, else (a process that saved only windows) all its window dumps. Paths, ordered by pid,
// then cycle, then name. What `stats` sums and `diff` compares.
std::vector<std::string> ProcessDumps(const std::string& dir);

// Where `gprof-run export` and `--export sqlite` write the SQLite export of dump `name` in `dir`.
inline std::string SqliteExportPath(const std::string& dir, const DumpName& name) {
  return dir + "/" + name.stem + ".sqlite";
}

struct RenderSummary {
  int dumps = 0;     // dump files found
  int rendered = 0;  // dumps turned into table + trace
  int failed = 0;    // corrupt or unrenderable dumps (each reported)
  int ranked_processes = 0;  // processes whose dumps carry a rank (ProfileInfo::rank >= 0)
  std::vector<std::string> outputs;  // files written
  // "gprof-run: recorded ...", without the newline: the caller prints it last (the end of a run
  // adds the merged view to it). "" when nothing was rendered (the messages say why).
  std::string closing_line;
};

// Which traces each dump gets (--trace-format): trace.json, trace.json.gz (gzip, for TensorBoard
// and HTA), trace.pftrace (Perfetto protobuf); and the cap on a JSON trace (--max-trace-mb; 0 =
// none) above which it is written as time-cut parts (outputs/trace/trace_split.h).
// Dumps larger than this are rendered segment by segment (launcher/render/segmented_render.h)
// unless --segment-render-mb says otherwise: a whole render holds about five times the dump's
// size (bench figure 20: 315 MiB for a 64 MB dump), so 128 MiB keeps it under about 700 MiB.
inline constexpr uint64_t kSegmentedRenderBytes = uint64_t{128} << 20;

struct TraceOptions {
  bool json = true;
  bool json_gz = false;
  bool pftrace = true;
  uint64_t max_json_bytes = 0;
  uint64_t segmented_render_bytes = kSegmentedRenderBytes;  // --segment-render-mb
};
// Parses --trace-format's comma-separated, non-empty subset of json, json.gz, pftrace into
// `out`'s formats, and --max-trace-mb's whole number of MiB (>= 1). "" on success, else the
// message (a usage error).
std::string ParseTraceFormats(const std::string& text, TraceOptions* out);
std::string ParseMaxTraceMb(const std::string& text, TraceOptions* out);
// --segment-render-mb's whole number of MiB (0: every dump in segments).
std::string ParseSegmentRenderMb(const std::string& text, TraceOptions* out);

// A JSON trace larger than this opens poorly or not at all in Perfetto's UI (it loads the whole
// file into the browser tab): the run says so and points to the .pftrace.
inline constexpr uint64_t kJsonTraceComfortBytes = 1ull << 30;

// The main process's pid: gprof-run.json's, else that of the only whole-run dump; -1 when neither.
long MainPid(const std::string& dir, const std::vector<DumpName>& dumps);

// "1 dump", "3 dumps": `n` and the word for one or for many.
std::string Plural(uint64_t n, const char* one, const char* many);

// "" or "2 forked processes did not exec and were not profiled (pids 5, 6)": the fork markers
// (model/dump.h) in `dir` of processes without a dump of their own among `dumps`.
std::string ForkedWithoutExecText(const std::string& dir, const std::vector<DumpName>& dumps);

struct HtmlOptions;  // html_page.h

// Renders every dump in `dir`; writes messages and the main table (unless `quiet`) to `err`,
// and a progress line when that takes more than a second (launcher/progress.h). `html`: the
// report.html pages (by default written after each dump's other outputs; the second form).
// `export_sqlite`: also each dump's SQLite export (SqliteExportPath); one that cannot be written
// is a warning, never a failed dump. `only_stem`: render just that dump (`gprof-run capture`).
RenderSummary RenderDirectory(const std::string& dir, const TableOptions& table,
                              const TraceOptions& traces, bool quiet, std::FILE* err,
                              const HtmlOptions& html, bool export_sqlite = false,
                              const std::string& only_stem = "");

}  // namespace gprof::launcher
