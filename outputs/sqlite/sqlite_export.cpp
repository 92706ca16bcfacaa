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

#include "analysis/attribution/names.h"
#include "model/output_file.h"
#include "text/utf8.h"

namespace gprof {
namespace {

// The statements of [schema], verbatim, in its order. sqlite_export_test checks them against
// docs/nsys-sqlite-3.25.sql.
const std::vector<std::string_view> kSchema = {
    R"sql(CREATE TABLE StringIds (
    id                          INTEGER   NOT NULL   PRIMARY KEY,
    value                       TEXT      NOT NULL
))sql",
    R"sql(CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (
    start                       INTEGER   NOT NULL,
    end                         INTEGER   NOT NULL,
    deviceId                    INTEGER   NOT NULL,
    contextId                   INTEGER   NOT NULL,
    greenContextId              INTEGER,
    streamId                    INTEGER   NOT NULL,
    correlationId               INTEGER,
    globalPid                   INTEGER,
    demangledName               INTEGER   NOT NULL,
    shortName                   INTEGER   NOT NULL,
    mangledName                 INTEGER,
    launchType                  INTEGER,
    cacheConfig                 INTEGER,
    registersPerThread          INTEGER   NOT NULL,
    gridX                       INTEGER   NOT NULL,
    gridY                       INTEGER   NOT NULL,
    gridZ                       INTEGER   NOT NULL,
    blockX                      INTEGER   NOT NULL,
    blockY                      INTEGER   NOT NULL,
    blockZ                      INTEGER   NOT NULL,
    staticSharedMemory          INTEGER   NOT NULL,
    dynamicSharedMemory         INTEGER   NOT NULL,
    localMemoryPerThread        INTEGER   NOT NULL,
    localMemoryTotal            INTEGER   NOT NULL,
    gridId                      INTEGER   NOT NULL,
    sharedMemoryExecuted        INTEGER,
    graphNodeId                 INTEGER,
    sharedMemoryLimitConfig     INTEGER,
    qmdBulkReleaseDone          INTEGER,
    qmdPreexitDone              INTEGER,
    qmdLastCtaDone              INTEGER,
    graphId                     INTEGER,
    clusterX                    INTEGER,
    clusterY                    INTEGER,
    clusterZ                    INTEGER,
    clusterSchedulingPolicy     INTEGER,
    maxPotentialClusterSize     INTEGER,
    maxActiveClusters           INTEGER,
    sharedMemoryRequestedPercentage   INTEGER,
    tensorSizeMinusOneElements   TEXT      NOT NULL
))sql",
    R"sql(CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (
    start                       INTEGER   NOT NULL,
    end                         INTEGER   NOT NULL,
    eventClass                  INTEGER   NOT NULL,
    globalTid                   INTEGER,
    correlationId               INTEGER,
    nameId                      INTEGER   NOT NULL,
    returnValue                 INTEGER   NOT NULL,
    callchainId                 INTEGER
))sql",
    R"sql(CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (
    start                       INTEGER   NOT NULL,
    end                         INTEGER   NOT NULL,
    deviceId                    INTEGER   NOT NULL,
    contextId                   INTEGER   NOT NULL,
    greenContextId              INTEGER,
    streamId                    INTEGER   NOT NULL,
    correlationId               INTEGER,
    globalPid                   INTEGER,
    bytes                       INTEGER   NOT NULL,
    copyKind                    INTEGER   NOT NULL,
    deprecatedSrcId             INTEGER,
    srcKind                     INTEGER,
    dstKind                     INTEGER,
    srcDeviceId                 INTEGER,
    srcContextId                INTEGER,
    dstDeviceId                 INTEGER,
    dstContextId                INTEGER,
    migrationCause              INTEGER,
    graphNodeId                 INTEGER,
    virtualAddress              INTEGER,
    copyCount                   INTEGER
))sql",
    R"sql(CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (
    start                       INTEGER   NOT NULL,
    end                         INTEGER   NOT NULL,
    deviceId                    INTEGER   NOT NULL,
    contextId                   INTEGER   NOT NULL,
    greenContextId              INTEGER,
    streamId                    INTEGER   NOT NULL,
    correlationId               INTEGER,
    globalPid                   INTEGER,
    value                       INTEGER   NOT NULL,
    bytes                       INTEGER   NOT NULL,
    graphNodeId                 INTEGER,
    memKind                     INTEGER
))sql",
    R"sql(CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (
    start                       INTEGER   NOT NULL,
    end                         INTEGER   NOT NULL,
    deviceId                    INTEGER   NOT NULL,
    contextId                   INTEGER   NOT NULL,
    greenContextId              INTEGER,
    streamId                    INTEGER   NOT NULL,
    correlationId               INTEGER,
    globalPid                   INTEGER,
    deprecatedSyncType          INTEGER,
    syncType                    INTEGER   NOT NULL,
    eventId                     INTEGER   NOT NULL,
    eventSyncId                 INTEGER
))sql",
    R"sql(CREATE TABLE NVTX_EVENTS (
    start                       INTEGER   NOT NULL,
    end                         INTEGER,
    eventType                   INTEGER   NOT NULL,
    rangeId                     INTEGER,
    category                    INTEGER,
    color                       INTEGER,
    text                        TEXT,
    globalTid                   INTEGER,
    endGlobalTid                INTEGER,
    textId                      INTEGER,
    domainId                    INTEGER,
    uint64Value                 INTEGER,
    int64Value                  INTEGER,
    doubleValue                 REAL,
    uint32Value                 INTEGER,
    int32Value                  INTEGER,
    floatValue                  REAL,
    jsonTextId                  INTEGER,
    jsonText                    TEXT,
    binaryData                  TEXT
))sql",
    R"sql(CREATE TABLE ThreadNames (
    nameId                      INTEGER   NOT NULL,
    priority                    INTEGER,
    globalTid                   INTEGER
))sql",
    R"sql(CREATE TABLE PROCESSES (
    globalPid                   INTEGER,
    pid                         INTEGER,
    name                        TEXT
))sql",
    R"sql(CREATE TABLE TARGET_INFO_SESSION_START_TIME (
    utcEpochNs                  INTEGER,
    utcTime                     TEXT,
    localTime                   TEXT,
    systemClockNs               INTEGER
))sql",
    R"sql(CREATE TABLE ENUM_CUDA_MEMCPY_OPER (
    id                          INTEGER   NOT NULL   PRIMARY KEY,
    name                        TEXT,
    label                       TEXT
))sql",
    R"sql(CREATE TABLE ENUM_CUDA_MEM_KIND (
    id                          INTEGER   NOT NULL   PRIMARY KEY,
    name                        TEXT,
    label                       TEXT
))sql",
    R"sql(CREATE TABLE ENUM_CUPTI_SYNC_TYPE (
    id                          INTEGER   NOT NULL   PRIMARY KEY,
    name                        TEXT,
    label                       TEXT
))sql",
    R"sql(CREATE TABLE ENUM_NSYS_EVENT_TYPE (
    id                          INTEGER   NOT NULL   PRIMARY KEY,
    name                        TEXT,
    label                       TEXT
))sql",
    R"sql(CREATE TABLE META_DATA_EXPORT (
    name                        TEXT      NOT NULL,
    value                       TEXT
))sql",
};

// ---- codes ([schema]'s ENUM_* rows, [values]) ------------------------------------------------

constexpr int64_t kEventClassCudaRuntime = 0;  // TRACE_PROCESS_EVENT_CUDA_RUNTIME [values]
constexpr int64_t kEventClassCudaDriver = 1;   // TRACE_PROCESS_EVENT_CUDA_DRIVER [values]
constexpr int64_t kNvtxMark = 34;              // ENUM_NSYS_EVENT_TYPE NvtxMark [schema]
constexpr int64_t kNvtxPushPopRange = 59;      // NvtxPushPopRange [schema]
constexpr int64_t kNvtxStartEndRange = 60;     // NvtxStartEndRange [schema]
constexpr int64_t kNvtxDomainCreate = 75;      // NvtxDomainCreate [schema]

// ENUM_CUDA_MEMCPY_OPER [schema]: 0 unknown, 1 HtoD ... 10 PtoP, the same numbers as
// CUpti_ActivityMemcpyKind, which model/records.h's CopyKind mirrors.
int64_t CopyKindCode(CopyKind k) { return static_cast<int64_t>(k); }

// ENUM_CUDA_MEM_KIND [schema] counts from PAGEABLE = 0 and puts UNKNOWN last (7), while
// CUpti_ActivityMemoryKind (our MemKind) has UNKNOWN = 0, PAGEABLE = 1, ... MANAGED_STATIC = 7.
int64_t MemKindCode(MemKind k) {
  const int64_t cupti = static_cast<int64_t>(k);
  return cupti >= 1 && cupti <= 7 ? cupti - 1 : 7;
}

// ENUM_CUPTI_SYNC_TYPE [schema]: 0 unknown, 1 event sync, 2 stream wait event, 3 stream sync,
// 4 context sync: CUpti_ActivitySynchronizationType's numbers, which SyncKind mirrors.
int64_t SyncKindCode(SyncKind k) { return static_cast<int64_t>(k); }

struct EnumRow {
  int64_t id;
  const char* name;
  const char* label;
};

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

// [ids]: the PID in bits 24..47, the TID in bits 0..23 (Linux pids stay below 2^22).
int64_t GlobalPid(uint32_t pid) { return static_cast<int64_t>(pid & 0xFFFFFFu) << 24; }
int64_t GlobalTid(uint32_t pid, uint32_t tid) { return GlobalPid(pid) | (tid & 0xFFFFFFu); }

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

bool ValidUtf8(std::string_view s) {
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

// [time]: the session starts at the profile's collection start, or at its first record when that
// is earlier (a window's API call begun before the window), so that no time is negative.
uint64_t SessionStartNs(const Profile& p) {
  uint64_t start = p.info.start_ns != 0 ? p.info.start_ns : std::numeric_limits<uint64_t>::max();
  auto take = [&](uint64_t t) { start = std::min(start, t); };
  for (const HostRange& r : p.ranges) take(r.start_ns);
  for (const HostMark& m : p.marks) take(m.ts_ns);
  for (const ApiCall& c : p.api_calls) take(c.start_ns);
  ForEachGpuKind(p, [&](GpuKind, const auto& records) {
    for (const auto& r : records) take(GpuRecordStartNs(r));
  });
  return start == std::numeric_limits<uint64_t>::max() ? 0 : start;
}

class Writer {
 public:
  Writer(const Profile& p, Database* db)
      : p_(p), db_(*db), strings_(p.strings), origin_(SessionStartNs(p)),
        global_pid_(GlobalPid(p.info.pid)) {
    for (const LaunchConfig& lc : p.launch_configs) {
      context_of_device_.Add(lc.device_id, lc.context_id);
      device_of_context_.Add(lc.context_id, lc.device_id);
    }
    for (const Memcpy& m : p.memcpys) {
      context_of_device_.Add(m.device_id, m.context_id);
      device_of_context_.Add(m.context_id, m.device_id);
    }
  }

  uint64_t WriteAll() {
    WriteKernels();
    WriteRuntime();
    WriteMemcpys();
    WriteMemsets();
    WriteSyncs();
    WriteNvtx();
    WriteProcess();
    WriteEnums();
    strings_.WriteTable(&db_, &rows_);  // last: the rows above add names to it
    return rows_;
  }

 private:
  int64_t T(uint64_t ns) const { return static_cast<int64_t>(ns) - static_cast<int64_t>(origin_); }

  struct KernelNames {
    uint32_t demangled = 0, short_name = 0;
    bool done = false;
  };
  const KernelNames& NamesOf(StringId mangled) {
    if (mangled >= kernel_names_.size()) kernel_names_.resize(mangled + size_t{1});
    KernelNames& n = kernel_names_[mangled];
    if (!n.done) {
      const std::string demangled = DemangleKernelName(p_.strings.Get(mangled));
      n.demangled = strings_.Id(demangled);
      n.short_name = strings_.Id(KernelShortName(demangled));
      n.done = true;
    }
    return n;
  }

  void WriteKernels() {
    // Columns not named are NULL; localMemoryPerThread, localMemoryTotal and gridId are NOT NULL
    // in nsys's schema and unknown to us: 0. tensorSizeMinusOneElements: '' (no tensor map).
    Insert ins(&db_,
               "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, "
               "streamId, correlationId, globalPid, demangledName, shortName, mangledName, "
               "registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, "
               "staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, "
               "localMemoryTotal, gridId, graphNodeId, graphId, tensorSizeMinusOneElements) "
               "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, 0, ?, ?, "
               "'')",
               &rows_);
    const LaunchConfig unknown{};
    for (const Kernel& k : p_.kernels) {
      const LaunchConfig& lc =
          k.launch_config < p_.launch_configs.size() ? p_.launch_configs[k.launch_config] : unknown;
      const KernelNames& names = NamesOf(k.name);
      ins.Int(T(k.start_ns)).Int(T(k.end_ns)).Int(KernelDeviceId(p_, k)).Int(lc.context_id);
      ins.Int(k.stream_id).Int(k.correlation_id).Int(global_pid_);
      ins.Int(names.demangled).Int(names.short_name).Int(k.name);
      ins.Int(lc.registers_per_thread);
      ins.Int(lc.grid[0]).Int(lc.grid[1]).Int(lc.grid[2]);
      ins.Int(lc.block[0]).Int(lc.block[1]).Int(lc.block[2]);
      ins.Int(lc.static_shared_bytes).Int(lc.dynamic_shared_bytes);
      ins.IntOr(lc.graph_node_id != 0, static_cast<int64_t>(lc.graph_node_id));
      ins.IntOr(lc.graph_id != 0, lc.graph_id);
      ins.Row();
    }
  }

  uint32_t ApiNameId(const ApiCall& c) {
    const uint32_t key = static_cast<uint32_t>(c.domain) << 16 | c.cbid;
    auto [it, inserted] = api_name_ids_.emplace(key, 0);
    if (inserted) {
      it->second = strings_.Id(api_names_.ApiCallName(c));
    }
    return it->second;
  }

  void WriteRuntime() {
    Insert ins(&db_,
               "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, "
               "correlationId, nameId, returnValue) VALUES (?, ?, ?, ?, ?, ?, ?)",
               &rows_);
    for (const ApiCall& c : p_.api_calls) {
      ins.Int(T(c.start_ns)).Int(T(c.end_ns));
      ins.Int(c.domain == ApiDomain::kDriver ? kEventClassCudaDriver : kEventClassCudaRuntime);
      ins.Int(GlobalTid(p_.info.pid, c.tid)).Int(c.correlation_id).Int(ApiNameId(c));
      ins.Int(c.return_code).Row();
    }
  }

  void WriteMemcpys() {
    Insert ins(&db_,
               "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, "
               "streamId, correlationId, globalPid, bytes, copyKind, srcKind, dstKind, "
               "srcDeviceId, dstDeviceId) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
               &rows_);
    for (const Memcpy& m : p_.memcpys) {
      const bool peer = m.kind == CopyKind::kPtoP;
      ins.Int(T(m.start_ns)).Int(T(m.end_ns)).Int(m.device_id).Int(m.context_id);
      ins.Int(m.stream_id).Int(m.correlation_id).Int(global_pid_);
      ins.Int(static_cast<int64_t>(m.bytes)).Int(CopyKindCode(m.kind));
      ins.Int(MemKindCode(m.src_kind)).Int(MemKindCode(m.dst_kind));
      ins.IntOr(peer, m.src_device).IntOr(peer, m.dst_device).Row();
    }
  }

  void WriteMemsets() {
    // A memset record carries no context: the device's, when the profile saw only one on it.
    Insert ins(&db_,
               "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, "
               "streamId, correlationId, globalPid, value, bytes, memKind) "
               "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
               &rows_);
    for (const Memset& m : p_.memsets) {
      ins.Int(T(m.start_ns)).Int(T(m.end_ns)).Int(m.device_id);
      ins.Int(context_of_device_.Get(m.device_id, 0));
      ins.Int(m.stream_id).Int(m.correlation_id).Int(global_pid_).Int(m.value);
      ins.Int(static_cast<int64_t>(m.bytes)).Int(MemKindCode(m.mem_kind)).Row();
    }
  }

  void WriteSyncs() {
    // A sync record carries no device: its context's. streamId stays CUPTI's (0xffffffff when
    // the sync is not on a stream); eventId is NOT NULL in nsys's schema and unknown to us: 0.
    Insert ins(&db_,
               "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, deviceId, "
               "contextId, streamId, correlationId, globalPid, syncType, eventId) "
               "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0)",
               &rows_);
    for (const Sync& s : p_.syncs) {
      ins.Int(T(s.start_ns)).Int(T(s.end_ns)).Int(device_of_context_.Get(s.context_id, 0));
      ins.Int(s.context_id).Int(s.stream_id).Int(s.correlation_id).Int(global_pid_);
      ins.Int(SyncKindCode(s.kind)).Row();
    }
  }

  void WriteNvtx() {
    // Messages go into `text` (nsys's textId is for registered strings, which we do not tell
    // apart); domainId is the profile's domain index, 0 being NVTX's default domain as in nsys.
    Insert ins(&db_,
               "INSERT INTO NVTX_EVENTS (start, end, eventType, category, text, globalTid, "
               "domainId) VALUES (?, ?, ?, ?, ?, ?, ?)",
               &rows_);
    const int64_t process_tid = GlobalTid(p_.info.pid, p_.info.pid);
    // A named domain: one NvtxDomainCreate row (its name in text, at the session start, on the
    // main thread), as nsys writes one per domain; queries join ranges to it by domainId.
    for (size_t d = 1; d < p_.domains.size(); ++d) {
      const std::string_view name = strings_.Text(p_.domains[d]);
      if (name.empty()) continue;
      ins.Int(0).Null().Int(kNvtxDomainCreate).Null().Text(name).Int(process_tid);
      ins.Int(static_cast<int64_t>(d)).Row();
    }
    for (const HostRange& r : p_.ranges) {
      ins.Int(T(r.start_ns)).Int(T(r.end_ns));
      ins.Int((r.flags & kRangeStartEnd) ? kNvtxStartEndRange : kNvtxPushPopRange);
      ins.IntOr(r.category != 0, r.category).Text(strings_.Text(r.name));
      ins.Int(GlobalTid(p_.info.pid, r.tid)).Int(r.domain).Row();
    }
    for (const HostMark& m : p_.marks) {
      ins.Int(T(m.ts_ns)).Null().Int(kNvtxMark).IntOr(m.category != 0, m.category);
      ins.Text(strings_.Text(m.name)).Int(GlobalTid(p_.info.pid, m.tid)).Int(m.domain).Row();
    }
  }

  void WriteProcess() {
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
  void WriteEnum(const char* table, const EnumRow (&rows)[N]) {
    const std::string sql = std::string("INSERT INTO ") + table + " (id, name, label) VALUES (?, ?, ?)";
    Insert ins(&db_, sql.c_str(), &rows_);
    for (const EnumRow& r : rows) ins.Int(r.id).Text(r.name).Text(r.label).Row();
  }

  void WriteEnums() {
    WriteEnum("ENUM_CUDA_MEMCPY_OPER", kMemcpyOper);
    WriteEnum("ENUM_CUDA_MEM_KIND", kMemKind);
    WriteEnum("ENUM_CUPTI_SYNC_TYPE", kSyncType);
    WriteEnum("ENUM_NSYS_EVENT_TYPE", kEventType);
  }

  const Profile& p_;
  Database& db_;
  Strings strings_;
  const uint64_t origin_;
  const int64_t global_pid_;
  uint64_t rows_ = 0;
  std::vector<KernelNames> kernel_names_;
  NameCache api_names_{p_};
  std::unordered_map<uint32_t, uint32_t> api_name_ids_;
  UniqueMap context_of_device_, device_of_context_;
};

}  // namespace

bool SqliteExportAvailable() { return true; }

const std::vector<std::string_view>& SqliteExportSchema() { return kSchema; }

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

SqliteExportStats WriteSqliteExport(const Profile& profile, const std::string& path) {
  // A temporary file renamed into place (model/output_file.h); SQLite opens it by its path and
  // writes only that file (journal_mode=OFF: no journal beside it). Uncommitted, it is removed.
  OutputFile file;
  if (std::string e = file.Open(path, /*create_dirs=*/false); !e.empty()) {
    throw std::runtime_error(e);
  }
  SqliteExportStats stats;
  {
    Database db(file.temp_path(), path);
    // One writer, a file nobody reads before the rename: no journal (no file beside ours, and a
    // failed export is deleted whole), no fsync per commit, sorts and indexes in memory.
    db.Exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA locking_mode=EXCLUSIVE; "
            "PRAGMA temp_store=MEMORY; PRAGMA cache_size=-65536;");
    db.Exec("BEGIN");
    for (std::string_view create : kSchema) db.Exec(std::string(create).c_str());
    Writer writer(profile, &db);
    stats.rows = writer.WriteAll();
    db.Exec("COMMIT");
    db.Close();
  }
  if (std::string e = file.Commit(); !e.empty()) throw std::runtime_error(e);
  std::error_code ec;
  stats.bytes = std::filesystem::file_size(path, ec);
  return stats;
}

}  // namespace gprof
