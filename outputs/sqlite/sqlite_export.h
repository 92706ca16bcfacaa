// WriteSqliteExport: a profile as an SQLite database whose tables and columns are named, typed
// and ordered as Nsight Systems' `nsys export --type sqlite` names them (schema 3.25.0, the copy
// in docs/nsys-sqlite-3.25.sql), for the part of that data gprof-run has: a user's nsys queries
// run unchanged on the columns we fill. What is filled, what is NULL and what differs from nsys:
// docs/EXPORT.md. Launcher process only (`gprof-run export`, `gprof-run --export sqlite`).
//
// Tables (each with nsys's own CREATE TABLE statement): StringIds, CUPTI_ACTIVITY_KIND_KERNEL,
// CUPTI_ACTIVITY_KIND_RUNTIME (runtime and driver calls, told apart by eventClass),
// CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
// NVTX_EVENTS, ThreadNames, PROCESSES, TARGET_INFO_SESSION_START_TIME, META_DATA_EXPORT and the
// enum tables ENUM_CUDA_MEMCPY_OPER, ENUM_CUDA_MEM_KIND, ENUM_CUPTI_SYNC_TYPE,
// ENUM_NSYS_EVENT_TYPE.
//
// Times are nanoseconds from the session start, as nsys's: TARGET_INFO_SESSION_START_TIME holds
// that start as CLOCK_REALTIME ns (utcEpochNs), so utcEpochNs + start is a record's wall time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/profile.h"

namespace gprof {

struct SqliteExportStats {
  uint64_t rows = 0;   // rows inserted, every table
  uint64_t bytes = 0;  // size of the file written
};

// False when gprof-run was built without libsqlite3 (sqlite_export_unavailable.cpp): then
// WriteSqliteExport throws, saying so, and the launcher refuses --export sqlite up front.
bool SqliteExportAvailable();

// Writes the database to `path` through a temporary file in the same directory (the output
// directory rules of model/output_file.h: the directory walked a component at a time, the file
// created fresh, renamed into place when complete), in one transaction with prepared statements.
// Deterministic: the same profile (and TZ, for localTime) gives the same bytes. Throws
// std::runtime_error, naming the file, when it cannot be written; `path` is then left as it was.
SqliteExportStats WriteSqliteExport(const Profile& profile, const std::string& path);

// A long run's export, segment by segment, in memory bounded by a segment and the run's tables
// (launcher/render/segmented_export.h reads the dump): the same rows as WriteSqliteExport of the
// whole profile. Every segment goes to a survey first (the session start is the run's earliest
// record, and memsets and syncs take their context or device from any record of the run), then
// to the stream; each record is written once, in whichever segment holds it.
class SqliteExportSurvey {
 public:
  void Add(const Profile& segment);

 private:
  friend class SqliteExportStream;
  uint64_t start_ns_ = UINT64_MAX;
  std::vector<std::pair<uint32_t, uint32_t>> device_contexts_;  // distinct (device, context)
};

class SqliteExportStream {
 public:
  // `run`: the run's tables, info and counters (its records are not read); every segment's
  // string ids and table indices must point into them. Opens `path` as WriteSqliteExport does;
  // throws std::runtime_error naming the file.
  SqliteExportStream(const Profile& run, const SqliteExportSurvey& survey,
                     const std::string& path);
  ~SqliteExportStream();  // not closed: the file is removed, `path` left as it was
  SqliteExportStream(const SqliteExportStream&) = delete;
  SqliteExportStream& operator=(const SqliteExportStream&) = delete;
  // The records of `segment` (its tables are not read: the run's are).
  void Add(const Profile& segment);
  // Writes the run's tables, commits and renames the file into place.
  SqliteExportStats Close();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The CREATE TABLE statements the export runs, in order: nsys's text for each table.
const std::vector<std::string_view>& SqliteExportSchema();

// nsys's shortName of a kernel: the function's name without namespaces, template arguments,
// parameters or return type ("void ns::gemm<float, 4>(float*, int)" -> "gemm"); the whole name
// when it has no such shape.
std::string KernelShortName(std::string_view demangled);

}  // namespace gprof
