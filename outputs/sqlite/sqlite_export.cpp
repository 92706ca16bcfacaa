// The SQLite export with Nsight Systems' names (see sqlite_export.h, docs/EXPORT.md; the sources
// of every number: sqlite_internal.h). Launcher process only. Here: NVTX_EVENTS, the process,
// session and metadata tables, the ENUM_* tables, and the export itself.
#include "outputs/sqlite/sqlite_export.h"

#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <deque>
#include <filesystem>
#include <limits>
#include <map>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include "model/output_file.h"
#include "outputs/sqlite/sqlite_internal.h"

namespace gprof {
namespace sqlite_detail {
namespace {

constexpr EnumRow kMemcpyOper[] = {
    {0, "CUDA_MEMCPY_KIND_UNKNOWN", "Unknown"},
    {1, "CUDA_MEMCPY_KIND_HTOD", "Host-to-Device"},
    {2, "CUDA_MEMCPY_KIND_DTOH", "Device-to-Host"},
    {3, "CUDA_MEMCPY_KIND_HTOA", "Host-to-Array"},
    {4, "CUDA_MEMCPY_KIND_ATOH", "Array-to-Host"},
    {5, "CUDA_MEMCPY_KIND_ATOA", "Array-to-Array"},
    {6, "CUDA_MEMCPY_KIND_ATOD", "Array-to-Device"},
    {7, "CUDA_MEMCPY_KIND_DTOA", "Device-to-Array"},
    {8, "CUDA_MEMCPY_KIND_DTOD", "Device-to-Device"},
    {9, "CUDA_MEMCPY_KIND_HTOH", "Host-to-Host"},
    {10, "CUDA_MEMCPY_KIND_PTOP", "Peer-to-Peer"},
    {11, "CUDA_MEMCPY_KIND_UVM_HTOD", "Unified Host-to-Device"},
    {12, "CUDA_MEMCPY_KIND_UVM_DTOH", "Unified Device-to-Host"},
    {13, "CUDA_MEMCPY_KIND_UVM_DTOD", "Unified Device-to-Device"},
};
constexpr EnumRow kMemKind[] = {
    {0, "CUDA_MEMOPR_MEMORY_KIND_PAGEABLE", "Pageable"},
    {1, "CUDA_MEMOPR_MEMORY_KIND_PINNED", "Pinned"},
    {2, "CUDA_MEMOPR_MEMORY_KIND_DEVICE", "Device"},
    {3, "CUDA_MEMOPR_MEMORY_KIND_ARRAY", "Array"},
    {4, "CUDA_MEMOPR_MEMORY_KIND_MANAGED", "Managed"},
    {5, "CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC", "Device Static"},
    {6, "CUDA_MEMOPR_MEMORY_KIND_MANAGED_STATIC", "Managed Static"},
    {7, "CUDA_MEMOPR_MEMORY_KIND_UNKNOWN", "Unknown"},
};
constexpr EnumRow kSyncType[] = {
    {0, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN", "Unknown"},
    {1, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE", "Event sync"},
    {2, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT", "Stream wait sync"},
    {3, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE", "Stream sync"},
    {4, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE", "Context sync"},
};
// The NVTX rows of ENUM_NSYS_EVENT_TYPE, the only ones [schema] lists.
constexpr EnumRow kEventType[] = {
    {32, "NvtxEvents", "NvtxEvents"},
    {33, "NvtxCategory", "NvtxCategory"},
    {34, "NvtxMark", "NvtxMark"},
    {35, "NvtxPushRange", "NvtxPushRange"},
    {36, "NvtxPopRange", "NvtxPopRange"},
    {37, "NvtxStartRange", "NvtxStartRange"},
    {38, "NvtxEndRange", "NvtxEndRange"},
    {39, "NvtxThread", "NvtxThread"},
    {59, "NvtxPushPopRange", "NvtxPushPopRange"},
    {60, "NvtxStartEndRange", "NvtxStartEndRange"},
    {64, "NvtxtCategory", "NvtxtCategory"},
    {65, "NvtxtMark", "NvtxtMark"},
    {66, "NvtxtPushRange", "NvtxtPushRange"},
    {67, "NvtxtPopRange", "NvtxtPopRange"},
    {68, "NvtxtStartRange", "NvtxtStartRange"},
    {69, "NvtxtEndRange", "NvtxtEndRange"},
    {70, "NvtxtPushPopRange", "NvtxtPushPopRange"},
    {71, "NvtxtStartEndRange", "NvtxtStartEndRange"},
    {72, "NvtxtMetaThread", "NvtxtMetaThread"},
    {73, "NvtxtMetaProcess", "NvtxtMetaProcess"},
    {74, "NvtxtMetaFileDisplay", "NvtxtMetaFileDisplay"},
    {75, "NvtxDomainCreate", "NvtxDomainCreate"},
    {76, "NvtxDomainDestroy", "NvtxDomainDestroy"},
    {97, "NvtxNameCudaDevice", "NvtxNameCudaDevice"},
    {98, "NvtxNameCudaContext", "NvtxNameCudaContext"},
    {99, "NvtxNameCudaStream", "NvtxNameCudaStream"},
};

// "2023-11-14T22:13:20.000000001Z" (UTC) or "...+01:00" (the local time, from TZ).
std::string IsoTime(uint64_t ns, bool utc) {
  const time_t secs = static_cast<time_t>(ns / 1'000'000'000u);
  struct tm tm {};
  if ((utc ? gmtime_r(&secs, &tm) : localtime_r(&secs, &tm)) == nullptr) return "";
  char date[40];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[80];
  if (utc) {
    std::snprintf(out, sizeof out, "%s.%09uZ", date, static_cast<unsigned>(ns % 1'000'000'000u));
  } else {
    const long off = tm.tm_gmtoff / 60;
    std::snprintf(out, sizeof out, "%s.%09u%c%02ld:%02ld", date,
                  static_cast<unsigned>(ns % 1'000'000'000u), off < 0 ? '-' : '+',
                  (off < 0 ? -off : off) / 60, (off < 0 ? -off : off) % 60);
  }
  return out;
}

}  // namespace

void Writer::WriteNvtx(const Profile& r) {
  // Messages go into `text` (nsys's textId is for registered strings, which we do not tell
  // apart); domainId is the profile's domain index, 0 being NVTX's default domain as in nsys.
  Insert ins(&db_,
             "INSERT INTO NVTX_EVENTS (start, end, eventType, category, text, globalTid, "
             "domainId) VALUES (?, ?, ?, ?, ?, ?, ?)",
             &rows_);
  const int64_t process_tid = GlobalTid(p_.info.pid, p_.info.pid);
  // A named domain: one NvtxDomainCreate row (its name in text, at the session start, on the
  // main thread), as nsys writes one per domain; queries join ranges to it by domainId.
  for (size_t d = 1; !domains_written_ && d < p_.domains.size(); ++d) {
    const std::string_view name = strings_.Text(p_.domains[d]);
    if (name.empty()) continue;
    ins.Int(0).Null().Int(kNvtxDomainCreate).Null().Text(name).Int(process_tid);
    ins.Int(static_cast<int64_t>(d)).Row();
  }
  domains_written_ = true;
  for (const HostRange& h : r.ranges) {
    ins.Int(T(h.start_ns)).Int(T(h.end_ns));
    ins.Int((h.flags & kRangeStartEnd) ? kNvtxStartEndRange : kNvtxPushPopRange);
    ins.IntOr(h.category != 0, h.category).Text(strings_.Text(h.name));
    ins.Int(GlobalTid(p_.info.pid, h.tid)).Int(h.domain).Row();
  }
  for (const HostMark& m : r.marks) {
    ins.Int(T(m.ts_ns)).Null().Int(kNvtxMark).IntOr(m.category != 0, m.category);
    ins.Text(strings_.Text(m.name)).Int(GlobalTid(p_.info.pid, m.tid)).Int(m.domain).Row();
  }
}

void Writer::WriteProcess() {
  {
    Insert ins(&db_, "INSERT INTO ThreadNames (nameId, globalTid) VALUES (?, ?)", &rows_);
    for (const ThreadInfo& t : p_.threads) {
      if (t.name != kNoString) ins.Int(t.name).Int(GlobalTid(p_.info.pid, t.tid)).Row();
    }
  }
  {
    Insert ins(&db_, "INSERT INTO PROCESSES (globalPid, pid, name) VALUES (?, ?, ?)", &rows_);
    const std::string name = RepairUtf8(p_.info.program);
    ins.Int(global_pid_).Int(p_.info.pid).Text(name).Row();
  }
  {
    // Our one clock is CLOCK_REALTIME: the system clock's reading at the start is utcEpochNs.
    const std::string utc = IsoTime(origin_, true), local = IsoTime(origin_, false);
    Insert ins(&db_,
               "INSERT INTO TARGET_INFO_SESSION_START_TIME (utcEpochNs, utcTime, localTime, "
               "systemClockNs) VALUES (?, ?, ?, ?)",
               &rows_);
    ins.Int(static_cast<int64_t>(origin_)).Text(utc).Text(local);
    ins.Int(static_cast<int64_t>(origin_)).Row();
  }
  {
    Insert ins(&db_, "INSERT INTO META_DATA_EXPORT (name, value) VALUES (?, ?)", &rows_);
    ins.Text("EXPORT_SCHEMA_VERSION").Text("3.25.0").Row();
    ins.Text("GPROF_RUN_EXPORT").Text("a subset of nsys's tables, see gprof-run docs/EXPORT.md")
        .Row();
    // Losses are never silent: every counter of the profile (model/profile.h), zeros too, so
    // that a query finds the key whatever the run lost.
    std::vector<std::pair<std::string, std::string>> counters;
    ForEachCounter(p_.counters, [&](const char* name, uint64_t value, const char*) {
      counters.emplace_back(std::string("GPROF_RUN_COUNTER_") + name, std::to_string(value));
    });
    for (const auto& [name, value] : counters) ins.Text(name).Text(value).Row();
  }
}

template <size_t N>
void Writer::WriteEnum(const char* table, const EnumRow (&rows)[N]) {
  const std::string sql = std::string("INSERT INTO ") + table + " (id, name, label) VALUES (?, ?, ?)";
  Insert ins(&db_, sql.c_str(), &rows_);
  for (const EnumRow& r : rows) ins.Int(r.id).Text(r.name).Text(r.label).Row();
}

void Writer::WriteEnums() {
  WriteEnum("ENUM_CUDA_MEMCPY_OPER", kMemcpyOper);
  WriteEnum("ENUM_CUDA_MEM_KIND", kMemKind);
  WriteEnum("ENUM_CUPTI_SYNC_TYPE", kSyncType);
  WriteEnum("ENUM_NSYS_EVENT_TYPE", kEventType);
}

}  // namespace sqlite_detail

using namespace sqlite_detail;

bool SqliteExportAvailable() { return true; }

std::string KernelShortName(std::string_view demangled) {
  std::string_view s = demangled;
  // Cuts the bracketed group that ends `s` (its last character is `close`); false when unbalanced.
  auto cut_group = [&s](char open, char close) {
    int depth = 0;
    for (size_t i = s.size(); i-- > 0;) {
      if (s[i] == close) {
        ++depth;
      } else if (s[i] == open && --depth == 0) {
        s = s.substr(0, i);
        return true;
      }
    }
    return false;
  };
  if (!s.empty() && s.back() == ')' && !cut_group('(', ')')) return std::string(demangled);
  if (!s.empty() && s.back() == '>' && !cut_group('<', '>')) return std::string(demangled);
  size_t begin = s.size();
  while (begin > 0 && (std::isalnum(static_cast<unsigned char>(s[begin - 1])) ||
                       s[begin - 1] == '_')) {
    --begin;
  }
  if (begin == s.size()) return std::string(demangled);
  return std::string(s.substr(begin));
}

void SqliteExportSurvey::Add(const Profile& segment) {
  start_ns_ = std::min(start_ns_, SessionStartNs(segment));
  for (const Memcpy& m : segment.memcpys) {
    const std::pair<uint32_t, uint32_t> pair{m.device_id, m.context_id};
    if (std::find(device_contexts_.begin(), device_contexts_.end(), pair) ==
        device_contexts_.end()) {
      device_contexts_.push_back(pair);
    }
  }
}

struct SqliteExportStream::State {
  OutputFile file;
  std::string path;
  std::unique_ptr<Database> db;
  std::unique_ptr<Writer> writer;
};

SqliteExportStream::SqliteExportStream(const Profile& run, const SqliteExportSurvey& survey,
                                       const std::string& path)
    : state_(std::make_unique<State>()) {
  // A temporary file renamed into place (model/output_file.h); SQLite opens it by its path and
  // writes only that file (journal_mode=OFF: no journal beside it). Uncommitted, it is removed.
  State& s = *state_;
  s.path = path;
  if (std::string e = s.file.Open(path, /*create_dirs=*/false); !e.empty()) {
    throw std::runtime_error(e);
  }
  s.db = std::make_unique<Database>(s.file.temp_path(), path);
  // One writer, a file nobody reads before the rename: no journal (no file beside ours, and a
  // failed export is deleted whole), no fsync per commit, sorts and indexes in memory.
  s.db->Exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA locking_mode=EXCLUSIVE; "
             "PRAGMA temp_store=MEMORY; PRAGMA cache_size=-65536;");
  s.db->Exec("BEGIN");
  for (std::string_view create : kSchema) s.db->Exec(std::string(create).c_str());
  // A run without records starts at its collection start (0 when unknown), as SessionStartNs.
  const uint64_t origin = survey.start_ns_ != UINT64_MAX ? survey.start_ns_ : SessionStartNs(run);
  s.writer = std::make_unique<Writer>(run, s.db.get(), origin);
  for (const auto& [device, context] : survey.device_contexts_) {
    s.writer->NoteContext(device, context);
  }
}

SqliteExportStream::~SqliteExportStream() = default;

void SqliteExportStream::Add(const Profile& segment) { state_->writer->WriteRecords(segment); }

SqliteExportStats SqliteExportStream::Close() {
  State& s = *state_;
  SqliteExportStats stats;
  stats.rows = s.writer->Finish();
  s.writer.reset();
  s.db->Exec("COMMIT");
  s.db->Close();
  s.db.reset();
  if (std::string e = s.file.Commit(); !e.empty()) throw std::runtime_error(e);
  std::error_code ec;
  stats.bytes = std::filesystem::file_size(s.path, ec);
  return stats;
}

SqliteExportStats WriteSqliteExport(const Profile& profile, const std::string& path) {
  SqliteExportSurvey survey;
  survey.Add(profile);
  SqliteExportStream stream(profile, survey, path);
  stream.Add(profile);
  return stream.Close();
}

}  // namespace gprof
