// The SQLite export with Nsight Systems' names (see sqlite_export.h, docs/EXPORT.md). Launcher
// process only.
//
// Where each number nsys stores comes from (every code below is checked against these):
//   [schema]  docs/nsys-sqlite-3.25.sql: a copy of the team's formats/nsys-sqlite-3.25.sql, the
//             tables, columns and ENUM_* rows of a real nsys 2026.2.1 export (schema 3.25.0).
//   [values]  Nsight Systems Analysis Guide, "SQLite Schema Event Values": eventClass 0 =
//             TRACE_PROCESS_EVENT_CUDA_RUNTIME, 1 = TRACE_PROCESS_EVENT_CUDA_DRIVER (both in
//             CUPTI_ACTIVITY_KIND_RUNTIME); NVTX eventType 34 NvtxMark, 59 NvtxPushPopRange,
//             60 NvtxStartEndRange, 75 NvtxDomainCreate.
//   [ids]     nsys export docs, "Serialized process and thread identifiers": PID =
//             globalTid / 0x1000000 % 0x1000000, TID = globalTid % 0x1000000; globalPid holds
//             only the PID ([schema]'s last line: globalPid = pid << 24, globalTid = that | tid).
//             The bits above 48 (hardware and VM ids in nsys) are 0: one machine, no VM.
//   [time]    nsys's timestamps are ns from the session start; TARGET_INFO_SESSION_START_TIME.
//             utcEpochNs is that start as UTC epoch ns (nsys users add the two for wall time).
//
// The export's parts: sqlite_schema.cpp ([schema]'s statements), sqlite_activity_tables.cpp (the
// CUPTI_ACTIVITY_KIND_* tables: kernels, runtime calls, copies, memsets, syncs) and
// sqlite_export.cpp (NVTX_EVENTS, the process, session and metadata tables, the ENUM_* tables
// and the export itself). Internal to outputs/sqlite.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/attribution/names.h"
#include "model/profile.h"
#include "text/utf8.h"

namespace gprof {
namespace sqlite_detail {

extern const std::vector<std::string_view> kSchema;  // sqlite_schema.cpp

// ---- codes ([schema]'s ENUM_* rows, [values]) ------------------------------------------------

constexpr int64_t kEventClassCudaRuntime = 0;  // TRACE_PROCESS_EVENT_CUDA_RUNTIME [values]
constexpr int64_t kEventClassCudaDriver = 1;   // TRACE_PROCESS_EVENT_CUDA_DRIVER [values]
constexpr int64_t kNvtxMark = 34;              // ENUM_NSYS_EVENT_TYPE NvtxMark [schema]
constexpr int64_t kNvtxPushPopRange = 59;      // NvtxPushPopRange [schema]
constexpr int64_t kNvtxStartEndRange = 60;     // NvtxStartEndRange [schema]
constexpr int64_t kNvtxDomainCreate = 75;      // NvtxDomainCreate [schema]

// ENUM_CUDA_MEMCPY_OPER [schema]: 0 unknown, 1 HtoD ... 10 PtoP, the same numbers as
// CUpti_ActivityMemcpyKind, which model/records.h's CopyKind mirrors.
inline int64_t CopyKindCode(CopyKind k) { return static_cast<int64_t>(k); }

// ENUM_CUDA_MEM_KIND [schema] counts from PAGEABLE = 0 and puts UNKNOWN last (7), while
// CUpti_ActivityMemoryKind (our MemKind) has UNKNOWN = 0, PAGEABLE = 1, ... MANAGED_STATIC = 7.
inline int64_t MemKindCode(MemKind k) {
  const int64_t cupti = static_cast<int64_t>(k);
  return cupti >= 1 && cupti <= 7 ? cupti - 1 : 7;
}

// ENUM_CUPTI_SYNC_TYPE [schema]: 0 unknown, 1 event sync, 2 stream wait event, 3 stream sync,
// 4 context sync: CUpti_ActivitySynchronizationType's numbers, which SyncKind mirrors.
inline int64_t SyncKindCode(SyncKind k) { return static_cast<int64_t>(k); }

struct EnumRow {
  int64_t id;
  const char* name;
  const char* label;
};

// [ids]: the PID in bits 24..47, the TID in bits 0..23 (Linux pids stay below 2^22).
inline int64_t GlobalPid(uint32_t pid) { return static_cast<int64_t>(pid & 0xFFFFFFu) << 24; }
inline int64_t GlobalTid(uint32_t pid, uint32_t tid) { return GlobalPid(pid) | (tid & 0xFFFFFFu); }

// ---- SQLite ------------------------------------------------------------------------------------

class Database {
 public:
  // `shown` names the file in messages (the final path, not the temporary one).
  Database(const std::string& path, std::string shown) : shown_(std::move(shown)) {
    // The temporary file exists already (created fresh, empty): never let SQLite create one.
    // NOMUTEX: one thread uses the connection, so no lock around every bind and step (8 % of
    // the export's time in the serialized mode).
    const int rc = sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
                                   nullptr);
    if (rc != SQLITE_OK) Fail("cannot open", rc);
  }
  ~Database() { sqlite3_close(db_); }
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  void Exec(const char* sql) {
    char* message = nullptr;
    const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &message);
    if (rc != SQLITE_OK) {
      const std::string text = message != nullptr ? message : sqlite3_errstr(rc);
      sqlite3_free(message);
      throw std::runtime_error("cannot write " + shown_ + ": " + text);
    }
  }
  void Close() {
    const int rc = sqlite3_close(db_);
    if (rc != SQLITE_OK) Fail("cannot close", rc);
    db_ = nullptr;
  }
  [[noreturn]] void Fail(const char* what, int rc) const {
    const char* detail = db_ != nullptr && sqlite3_errcode(db_) == rc ? sqlite3_errmsg(db_)
                                                                      : sqlite3_errstr(rc);
    throw std::runtime_error(std::string(what) + " " + shown_ + ": " + detail);
  }
  sqlite3* get() const { return db_; }

 private:
  sqlite3* db_ = nullptr;
  std::string shown_;
};

// One prepared INSERT, bound column by column and stepped once per row.
class Insert {
 public:
  Insert(Database* db, const char* sql, uint64_t* rows) : db_(*db), rows_(*rows) {
    const int rc = sqlite3_prepare_v3(db_.get(), sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt_,
                                      nullptr);
    if (rc != SQLITE_OK) db_.Fail("cannot prepare an insert into", rc);
  }
  ~Insert() { sqlite3_finalize(stmt_); }
  Insert(const Insert&) = delete;
  Insert& operator=(const Insert&) = delete;

  Insert& Int(int64_t v) { return Check(sqlite3_bind_int64(stmt_, ++column_, v)); }
  Insert& Null() { return Check(sqlite3_bind_null(stmt_, ++column_)); }
  // The value or NULL.
  Insert& IntOr(bool present, int64_t v) { return present ? Int(v) : Null(); }
  // `s` must stay alive until Row().
  Insert& Text(std::string_view s) {
    return Check(sqlite3_bind_text64(stmt_, ++column_, s.data(), s.size(), SQLITE_STATIC,
                                     SQLITE_UTF8));
  }
  void Row() {
    if (bind_rc_ != SQLITE_OK) db_.Fail("cannot bind a value for", bind_rc_);
    const int rc = sqlite3_step(stmt_);
    if (rc != SQLITE_DONE) db_.Fail("cannot write", rc);
    sqlite3_reset(stmt_);
    column_ = 0;
    ++rows_;
  }

 private:
  Insert& Check(int rc) {
    if (rc != SQLITE_OK && bind_rc_ == SQLITE_OK) bind_rc_ = rc;
    return *this;
  }
  Database& db_;
  uint64_t& rows_;
  sqlite3_stmt* stmt_ = nullptr;
  int column_ = 0;
  int bind_rc_ = SQLITE_OK;
};

// ---- the rows ----------------------------------------------------------------------------------

inline bool ValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = Utf8SequenceLength(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

// StringIds: the profile's own strings keep their ids; names the export makes (demangled and
// short kernel names, names of API calls the profile has none for) get ids after them. Text
// columns are declared UTF-8, and readers such as Python's sqlite3 fail on anything else: the
// program's names are arbitrary bytes, so an invalid one is stored repaired (RepairUtf8: each
// bad byte U+FFFD), as the trace writers do.
class Strings {
 public:
  explicit Strings(const StringTable& table) : table_(table), base_(table.size()) {
    index_.reserve(table.size() * 2);
    for (StringId id = 0; id < table.size(); ++id) {
      if (!ValidUtf8(table.Get(id))) repaired_.emplace(id, RepairUtf8(table.Get(id)));
      index_.emplace(Text(id), id);
    }
  }
  // The text of a profile string, valid UTF-8.
  std::string_view Text(StringId id) const {
    if (!repaired_.empty()) {
      if (auto it = repaired_.find(id); it != repaired_.end()) return it->second;
    }
    return table_.Get(id);
  }
  uint32_t Id(std::string_view s) {
    std::string clean;
    if (!ValidUtf8(s)) {
      clean = RepairUtf8(s);
      s = clean;
    }
    if (auto it = index_.find(s); it != index_.end()) return it->second;
    extra_.emplace_back(s);
    const uint32_t id = base_ + static_cast<uint32_t>(extra_.size() - 1);
    index_.emplace(extra_.back(), id);
    return id;
  }
  void WriteTable(Database* db, uint64_t* rows) const {
    Insert ins(db, "INSERT INTO StringIds (id, value) VALUES (?, ?)", rows);
    for (StringId id = 0; id < base_; ++id) ins.Int(id).Text(Text(id)).Row();
    for (size_t i = 0; i < extra_.size(); ++i) ins.Int(base_ + i).Text(extra_[i]).Row();
  }

 private:
  const StringTable& table_;
  const uint32_t base_;
  std::unordered_map<StringId, std::string> repaired_;  // node map: stable for the index's views
  std::deque<std::string> extra_;  // deque: stable addresses for the index's views
  std::unordered_map<std::string_view, uint32_t> index_;
};

// One value per key when the profile shows exactly one (a device's context, a context's device).
class UniqueMap {
 public:
  void Add(uint32_t key, uint32_t value) {
    auto [it, inserted] = values_.emplace(key, value);
    if (!inserted && it->second != value) it->second = kAmbiguous;
  }
  // The value, or `otherwise` when none or several were seen.
  uint32_t Get(uint32_t key, uint32_t otherwise) const {
    const auto it = values_.find(key);
    return it == values_.end() || it->second == kAmbiguous ? otherwise : it->second;
  }

 private:
  static constexpr uint32_t kAmbiguous = std::numeric_limits<uint32_t>::max();
  std::map<uint32_t, uint32_t> values_;
};

// [time]: the session's start (sqlite_activity_tables.cpp).
uint64_t SessionStartNs(const Profile& p);

// Every table's rows, into one open database: the records of one or more profiles (a whole
// profile, or a long run's segments) under one run's tables.
class Writer {
 public:
  // `run`: the tables, info and counters; `origin`: the session start ([time]).
  Writer(const Profile& run, Database* db, uint64_t origin);
  // A device's context seen in a record (memcpys carry both), for memsets and syncs.
  void NoteContext(uint32_t device, uint32_t context) {
    context_of_device_.Add(device, context);
    device_of_context_.Add(context, device);
  }
  // The records of `r` (its string ids and table indices: the run's).
  void WriteRecords(const Profile& r);
  // The process, session, metadata and enum tables, then StringIds; the rows written in all.
  uint64_t Finish();

 private:
  int64_t T(uint64_t ns) const { return static_cast<int64_t>(ns) - static_cast<int64_t>(origin_); }

  struct KernelNames {
    uint32_t demangled = 0, short_name = 0;
    bool done = false;
  };
  const KernelNames& NamesOf(StringId mangled);
  // sqlite_activity_tables.cpp
  void WriteKernels(const Profile& r);
  uint32_t ApiNameId(const ApiCall& c);
  void WriteRuntime(const Profile& r);
  void WriteMemcpys(const Profile& r);
  void WriteMemsets(const Profile& r);
  void WriteSyncs(const Profile& r);
  // sqlite_export.cpp
  void WriteNvtx(const Profile& r);  // the run's domains too, before the first records' rows
  void WriteProcess();
  template <size_t N>
  void WriteEnum(const char* table, const EnumRow (&rows)[N]);
  void WriteEnums();

  const Profile& p_;  // the run: tables, info, counters
  Database& db_;
  Strings strings_;
  const uint64_t origin_;
  const int64_t global_pid_;
  uint64_t rows_ = 0;
  bool domains_written_ = false;
  std::vector<KernelNames> kernel_names_;
  NameCache api_names_{p_};
  std::unordered_map<uint32_t, uint32_t> api_name_ids_;
  UniqueMap context_of_device_, device_of_context_;
};

}  // namespace sqlite_detail
}  // namespace gprof
