// Unit tests for the SQLite export (sqlite_export.h): a hand-built profile with known values is
// exported, read back with the SQLite C API and queried as nsys users query nsys's exports. The
// expected tables, columns and enum rows come from docs/nsys-sqlite-3.25.sql (a copy of nsys's
// schema), not from the exporter's own statements.
#include "outputs/sqlite/sqlite_export.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace gprof {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kT0 = 1'700'000'000'000'000'000ull;  // 2023-11-14T22:13:20Z
constexpr uint32_t kPid = 4242;
constexpr int64_t kGlobalPid = int64_t{kPid} << 24;
constexpr int64_t kMainTid = kGlobalPid | kPid;
constexpr int64_t kLoaderTid = kGlobalPid | 4243;

Profile HandBuiltProfile() {
  Profile p;
  p.info.pid = kPid;
  p.info.program = "trainer";
  p.info.start_ns = kT0;
  p.info.end_ns = kT0 + 100'000;
  p.threads.push_back({kPid, p.strings.Intern("main")});
  p.threads.push_back({4243, p.strings.Intern("loader")});
  p.threads.push_back({4244, kNoString});  // unnamed: no ThreadNames row
  p.domains.push_back(p.strings.Intern("mydomain"));  // domain 1 (0, the default, is "")

  p.ranges.push_back({kT0 + 1'000, kT0 + 9'000, p.strings.Intern("step"), kPid, 0, 0, 0});
  p.ranges.push_back({kT0 + 2'000, kT0 + 5'000, p.strings.Intern("io"), 4243, 0, kRangeStartEnd,
                      7});
  p.ranges.push_back({kT0 + 3'000, kT0 + 4'000, p.strings.Intern("inner"), kPid, 1, 0, 0});
  p.marks.push_back({kT0 + 6'000, p.strings.Intern("ckpt"), kPid, 0, 0, 0});

  auto api = [&](uint64_t start, uint64_t end, uint32_t corr, uint16_t cbid, ApiDomain d,
                 int32_t rc) { p.api_calls.push_back({start, end, corr, kPid, cbid, d, 0, rc}); };
  api(kT0 + 1'100, kT0 + 1'200, 10, 211, ApiDomain::kRuntime, 0);
  api(kT0 + 1'120, kT0 + 1'180, 11, 307, ApiDomain::kDriver, 0);
  api(kT0 + 1'300, kT0 + 1'400, 12, 41, ApiDomain::kRuntime, 0);
  api(kT0 + 1'500, kT0 + 1'550, 13, 51, ApiDomain::kRuntime, 0);
  api(kT0 + 1'600, kT0 + 1'900, 14, 131, ApiDomain::kRuntime, 700);
  api(kT0 + 2'000, kT0 + 2'010, 15, 999, ApiDomain::kRuntime, 0);  // no ApiName: a made-up name
  api(kT0 + 2'100, kT0 + 2'200, 16, 211, ApiDomain::kRuntime, 0);
  p.api_names.push_back({211, ApiDomain::kRuntime, 0, p.strings.Intern("cudaLaunchKernel_v7000")});
  p.api_names.push_back({307, ApiDomain::kDriver, 0, p.strings.Intern("cuLaunchKernel")});
  p.api_names.push_back({41, ApiDomain::kRuntime, 0, p.strings.Intern("cudaMemcpyAsync_v3020")});
  p.api_names.push_back({51, ApiDomain::kRuntime, 0, p.strings.Intern("cudaMemsetAsync_v3020")});
  p.api_names.push_back(
      {131, ApiDomain::kRuntime, 0, p.strings.Intern("cudaStreamSynchronize_v3020")});

  LaunchConfig lc{};
  lc.grid[0] = 128, lc.grid[1] = 2, lc.grid[2] = 1;
  lc.block[0] = 256, lc.block[1] = 1, lc.block[2] = 1;
  lc.registers_per_thread = 32;
  lc.static_shared_bytes = 1024;
  lc.dynamic_shared_bytes = 2048;
  lc.context_id = 5;
  lc.device_id = 1;
  p.launch_configs.push_back(lc);
  lc.graph_id = 3;
  lc.graph_node_id = 77;
  p.launch_configs.push_back(lc);
  p.kernels.push_back({kT0 + 1'300, kT0 + 2'300, 10, p.strings.Intern("_ZN2ns4gemmIfLi4EEEvPfi"),
                       0, 7});
  p.kernels.push_back({kT0 + 2'400, kT0 + 2'500, 16, p.strings.Intern("plain_kernel"), 1, 9});

  Memcpy m{};
  m.start_ns = kT0 + 2'600;
  m.end_ns = kT0 + 2'700;
  m.bytes = 4096;
  m.correlation_id = 12;
  m.stream_id = 7;
  m.context_id = 5;
  m.device_id = 1;
  m.kind = CopyKind::kHtoD;
  m.src_kind = MemKind::kPageable;
  m.dst_kind = MemKind::kDevice;
  m.src_device = m.dst_device = 1;
  p.memcpys.push_back(m);
  m.start_ns = kT0 + 2'800;
  m.end_ns = kT0 + 2'900;
  m.kind = CopyKind::kPtoP;
  m.src_kind = m.dst_kind = MemKind::kDevice;
  m.dst_device = 2;
  m.correlation_id = 17;
  p.memcpys.push_back(m);

  Memset ms{};
  ms.start_ns = kT0 + 3'000;
  ms.end_ns = kT0 + 3'100;
  ms.bytes = 512;
  ms.correlation_id = 13;
  ms.stream_id = 7;
  ms.value = 0xAB;
  ms.device_id = 1;
  ms.mem_kind = MemKind::kDevice;
  p.memsets.push_back(ms);

  p.syncs.push_back({kT0 + 3'200, kT0 + 3'300, 14, 7, 5, SyncKind::kStreamSynchronize, {}});
  p.syncs.push_back({kT0 + 3'400, kT0 + 3'500, 0, 0xffffffffu, 6, SyncKind::kContextSynchronize,
                     {}});
  return p;
}

// A value of a result cell: NULL, an integer or a text.
struct Cell {
  int type = SQLITE_NULL;
  int64_t i = 0;
  std::string s;
  bool operator==(const Cell& o) const { return type == o.type && i == o.i && s == o.s; }
};
Cell I(int64_t v) { return {SQLITE_INTEGER, v, ""}; }
Cell S(std::string v) { return {SQLITE_TEXT, 0, std::move(v)}; }
const Cell kNull{};
std::ostream& operator<<(std::ostream& o, const Cell& c) {
  if (c.type == SQLITE_NULL) return o << "NULL";
  if (c.type == SQLITE_INTEGER) return o << c.i;
  return o << "'" << c.s << "'";
}
using Row = std::vector<Cell>;

class Db {
 public:
  explicit Db(const std::string& path) {
    EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK)
        << path;
  }
  ~Db() { sqlite3_close(db_); }
  std::vector<Row> Query(const std::string& sql) const {
    std::vector<Row> rows;
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
      ADD_FAILURE() << sqlite3_errmsg(db_) << " in " << sql;
      return rows;
    }
    while (sqlite3_step(st) == SQLITE_ROW) {
      Row row;
      for (int c = 0; c < sqlite3_column_count(st); ++c) {
        Cell cell;
        cell.type = sqlite3_column_type(st, c);
        if (cell.type == SQLITE_INTEGER) cell.i = sqlite3_column_int64(st, c);
        if (cell.type == SQLITE_TEXT) {
          cell.s = reinterpret_cast<const char*>(sqlite3_column_text(st, c));
        }
        row.push_back(cell);
      }
      rows.push_back(std::move(row));
    }
    sqlite3_finalize(st);
    return rows;
  }
  int64_t Count(const std::string& table) const {
    return Query("SELECT COUNT(*) FROM " + table).at(0).at(0).i;
  }

 private:
  sqlite3* db_ = nullptr;
};

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Squeeze(const std::string& sql) {
  return std::regex_replace(sql, std::regex(R"(\s+)"), " ");
}

// docs/nsys-sqlite-3.25.sql: table -> its CREATE statement (without the ';'), and
// enum table -> its rows as "id|name|label".
struct Reference {
  std::map<std::string, std::string> creates;
  std::map<std::string, std::vector<std::string>> enum_rows;
};
Reference ReadReference() {
  Reference ref;
  const std::string text = ReadText(std::string(GPROF_SOURCE_DIR) + "/docs/nsys-sqlite-3.25.sql");
  const std::regex create(R"(CREATE TABLE (\w+) \([^;]*\))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), create);
       it != std::sregex_iterator(); ++it) {
    ref.creates[(*it)[1]] = (*it)[0];
  }
  std::istringstream lines(text);
  std::string line, current;
  const std::regex header(R"(^-- (ENUM_\w+)[ :].*\(id\|name\|label\)$)");
  const std::regex row(R"(^--   (\d+\|.*)$)");
  std::smatch m;
  while (std::getline(lines, line)) {
    if (std::regex_match(line, m, header)) {
      current = m[1];
    } else if (!current.empty() && std::regex_match(line, m, row)) {
      ref.enum_rows[current].push_back(m[1]);
    } else {
      current.clear();
    }
  }
  return ref;
}

class SqliteExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("gprof_sqlite_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "out.sqlite").string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  std::string path_;
};

TEST_F(SqliteExportTest, EveryTableIsCreatedWithNsysOwnStatement) {
  const SqliteExportStats stats = WriteSqliteExport(HandBuiltProfile(), path_);
  EXPECT_GT(stats.rows, 0u);
  EXPECT_EQ(stats.bytes, fs::file_size(path_));
  const Reference ref = ReadReference();
  ASSERT_EQ(ref.creates.size(), 15u);  // the reference holds 15 tables: the export makes them all
  const Db db(path_);
  const auto tables = db.Query("SELECT name, sql FROM sqlite_master WHERE type = 'table'");
  std::map<std::string, std::string> made;
  for (const Row& r : tables) made[r[0].s] = r[1].s;
  for (const auto& [name, create] : ref.creates) {
    ASSERT_EQ(made.count(name), 1u) << name << " missing";
    EXPECT_EQ(Squeeze(made[name]), Squeeze(create)) << name;
  }
  EXPECT_EQ(made.size(), ref.creates.size());
  // And no index: nsys's export has none.
  EXPECT_EQ(db.Query("SELECT name FROM sqlite_master WHERE type = 'index'").size(), 0u);
}

TEST_F(SqliteExportTest, EnumTablesHoldNsysRows) {
  WriteSqliteExport(HandBuiltProfile(), path_);
  const Reference ref = ReadReference();
  ASSERT_EQ(ref.enum_rows.size(), 4u);
  const Db db(path_);
  for (const auto& [table, rows] : ref.enum_rows) {
    std::vector<std::string> got;
    for (const Row& r : db.Query("SELECT id || '|' || name || '|' || label FROM " + table +
                                 " ORDER BY id")) {
      got.push_back(r[0].s);
    }
    EXPECT_EQ(got, rows) << table;
  }
}

TEST_F(SqliteExportTest, KernelRowsAndTheirNames) {
  WriteSqliteExport(HandBuiltProfile(), path_);
  const Db db(path_);
  // Times are ns from the session start (the profile's start, kT0).
  const auto rows = db.Query(
      "SELECT start, end, deviceId, contextId, greenContextId, streamId, correlationId, "
      "globalPid, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, "
      "staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId, "
      "graphNodeId, graphId, launchType, clusterX, tensorSizeMinusOneElements "
      "FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], (Row{I(1300), I(2300), I(1), I(5), kNull, I(7), I(10), I(kGlobalPid), I(32),
                          I(128), I(2), I(1), I(256), I(1), I(1), I(1024), I(2048), I(0), I(0),
                          I(0), kNull, kNull, kNull, kNull, S("")}));
  EXPECT_EQ(rows[1][5], I(9));
  EXPECT_EQ(rows[1][20], I(77));  // graphNodeId
  EXPECT_EQ(rows[1][21], I(3));   // graphId

  const auto names = db.Query(
      "SELECT d.value, s.value, m.value FROM CUPTI_ACTIVITY_KIND_KERNEL AS k "
      "JOIN StringIds AS d ON d.id = k.demangledName JOIN StringIds AS s ON s.id = k.shortName "
      "JOIN StringIds AS m ON m.id = k.mangledName ORDER BY k.start");
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[0], (Row{S("void ns::gemm<float, 4>(float*, int)"), S("gemm"),
                           S("_ZN2ns4gemmIfLi4EEEvPfi")}));
  EXPECT_EQ(names[1], (Row{S("plain_kernel"), S("plain_kernel"), S("plain_kernel")}));
  // A string is stored once: the three names of plain_kernel are one id.
  EXPECT_EQ(db.Query("SELECT COUNT(*) FROM StringIds WHERE value = 'plain_kernel'")[0][0], I(1));
  EXPECT_EQ(db.Query("SELECT COUNT(*), COUNT(DISTINCT id) FROM StringIds")[0][0],
            db.Query("SELECT COUNT(*), COUNT(DISTINCT id) FROM StringIds")[0][1]);
}

TEST_F(SqliteExportTest, RuntimeAndDriverCallsWithNsysEventClassAndIds) {
  WriteSqliteExport(HandBuiltProfile(), path_);
  const Db db(path_);
  const auto rows = db.Query(
      "SELECT r.start, r.end, r.eventClass, r.globalTid, r.correlationId, s.value, "
      "r.returnValue, r.callchainId FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r "
      "JOIN StringIds AS s ON s.id = r.nameId ORDER BY r.start");
  ASSERT_EQ(rows.size(), 7u);
  EXPECT_EQ(rows[0], (Row{I(1100), I(1200), I(0), I(kMainTid), I(10),
                          S("cudaLaunchKernel_v7000"), I(0), kNull}));
  EXPECT_EQ(rows[1], (Row{I(1120), I(1180), I(1), I(kMainTid), I(11), S("cuLaunchKernel"), I(0),
                          kNull}));
  EXPECT_EQ(rows[4][5], S("cudaStreamSynchronize_v3020"));
  EXPECT_EQ(rows[4][6], I(700));
  EXPECT_EQ(rows[5][5], S("cuda_runtime cbid 999"));
  // The PID and TID as nsys's documentation extracts them.
  EXPECT_EQ(db.Query("SELECT DISTINCT globalTid / 0x1000000 % 0x1000000, globalTid % 0x1000000 "
                     "FROM CUPTI_ACTIVITY_KIND_RUNTIME"),
            (std::vector<Row>{{I(kPid), I(kPid)}}));
  // The usual join: each kernel with the call that launched it.
  EXPECT_EQ(db.Query("SELECT s.value, k.end - k.start FROM CUPTI_ACTIVITY_KIND_KERNEL AS k "
                     "JOIN CUPTI_ACTIVITY_KIND_RUNTIME AS r ON r.correlationId = k.correlationId "
                     "JOIN StringIds AS s ON s.id = r.nameId ORDER BY k.start"),
            (std::vector<Row>{{S("cudaLaunchKernel_v7000"), I(1000)},
                              {S("cudaLaunchKernel_v7000"), I(100)}}));
}

TEST_F(SqliteExportTest, CopiesMemsetsAndSyncsWithNsysCodes) {
  WriteSqliteExport(HandBuiltProfile(), path_);
  const Db db(path_);
  // ENUM_CUDA_MEM_KIND numbers pageable 0 and device 2 (CUPTI: 1 and 3).
  EXPECT_EQ(db.Query("SELECT m.start, m.deviceId, m.contextId, m.streamId, m.correlationId, "
                     "m.globalPid, m.bytes, m.copyKind, o.label, m.srcKind, m.dstKind, "
                     "m.srcDeviceId, m.dstDeviceId, m.srcContextId "
                     "FROM CUPTI_ACTIVITY_KIND_MEMCPY AS m "
                     "JOIN ENUM_CUDA_MEMCPY_OPER AS o ON o.id = m.copyKind ORDER BY m.start"),
            (std::vector<Row>{{I(2600), I(1), I(5), I(7), I(12), I(kGlobalPid), I(4096), I(1),
                               S("Host-to-Device"), I(0), I(2), kNull, kNull, kNull},
                              {I(2800), I(1), I(5), I(7), I(17), I(kGlobalPid), I(4096), I(10),
                               S("Peer-to-Peer"), I(2), I(2), I(1), I(2), kNull}}));
  EXPECT_EQ(db.Query("SELECT s.start, s.end, s.deviceId, s.contextId, s.streamId, "
                     "s.correlationId, s.value, s.bytes, k.label FROM CUPTI_ACTIVITY_KIND_MEMSET "
                     "AS s JOIN ENUM_CUDA_MEM_KIND AS k ON k.id = s.memKind"),
            (std::vector<Row>{{I(3000), I(3100), I(1), I(5), I(7), I(13), I(0xAB), I(512),
                               S("Device")}}));
  // Context 5 is device 1's; context 6 was never seen with a device.
  EXPECT_EQ(db.Query("SELECT s.start, s.deviceId, s.contextId, s.streamId, s.correlationId, "
                     "t.label, s.eventId, s.eventSyncId "
                     "FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION AS s "
                     "JOIN ENUM_CUPTI_SYNC_TYPE AS t ON t.id = s.syncType ORDER BY s.start"),
            (std::vector<Row>{{I(3200), I(1), I(5), I(7), I(14), S("Stream sync"), I(0), kNull},
                              {I(3400), I(0), I(6), I(0xffffffff), I(0), S("Context sync"), I(0),
                               kNull}}));
}

TEST_F(SqliteExportTest, NvtxRangesMarksAndDomains) {
  WriteSqliteExport(HandBuiltProfile(), path_);
  const Db db(path_);
  EXPECT_EQ(db.Query("SELECT start, end, eventType, category, text, globalTid, domainId, "
                     "textId, rangeId, endGlobalTid FROM NVTX_EVENTS ORDER BY start, eventType"),
            (std::vector<Row>{
                {I(0), kNull, I(75), kNull, S("mydomain"), I(kMainTid), I(1), kNull, kNull, kNull},
                {I(1000), I(9000), I(59), kNull, S("step"), I(kMainTid), I(0), kNull, kNull,
                 kNull},
                {I(2000), I(5000), I(60), I(7), S("io"), I(kLoaderTid), I(0), kNull, kNull, kNull},
                {I(3000), I(4000), I(59), kNull, S("inner"), I(kMainTid), I(1), kNull, kNull,
                 kNull},
                {I(6000), kNull, I(34), kNull, S("ckpt"), I(kMainTid), I(0), kNull, kNull,
                 kNull}}));
  // nsys's recipe for a range's name with its domain.
  EXPECT_EQ(db.Query("WITH domain AS (SELECT domainId, text FROM NVTX_EVENTS WHERE eventType = 75)"
                     " SELECT e.text || coalesce('@' || d.text, '') FROM NVTX_EVENTS AS e "
                     "LEFT JOIN domain AS d ON e.domainId = d.domainId "
                     "WHERE e.eventType IN (59, 60) ORDER BY e.start"),
            (std::vector<Row>{{S("step")}, {S("io")}, {S("inner@mydomain")}}));
}

TEST_F(SqliteExportTest, ProcessThreadsAndSessionStart) {
  WriteSqliteExport(HandBuiltProfile(), path_);
  const Db db(path_);
  EXPECT_EQ(db.Query("SELECT s.value, t.globalTid, t.priority FROM ThreadNames AS t "
                     "JOIN StringIds AS s ON s.id = t.nameId ORDER BY t.globalTid"),
            (std::vector<Row>{{S("main"), I(kMainTid), kNull},
                              {S("loader"), I(kLoaderTid), kNull}}));
  EXPECT_EQ(db.Query("SELECT globalPid, pid, name FROM PROCESSES"),
            (std::vector<Row>{{I(kGlobalPid), I(kPid), S("trainer")}}));
  const auto start = db.Query(
      "SELECT utcEpochNs, utcTime, systemClockNs FROM TARGET_INFO_SESSION_START_TIME");
  EXPECT_EQ(start, (std::vector<Row>{{I(static_cast<int64_t>(kT0)),
                                      S("2023-11-14T22:13:20.000000000Z"),
                                      I(static_cast<int64_t>(kT0))}}));
  const std::string local = db.Query("SELECT localTime FROM TARGET_INFO_SESSION_START_TIME")[0][0].s;
  EXPECT_TRUE(std::regex_match(
      local, std::regex(R"(2023-11-1[45]T\d\d:\d\d:20\.000000000[+-]\d\d:\d\d)")))
      << local;
  EXPECT_EQ(db.Query("SELECT value FROM META_DATA_EXPORT WHERE name = 'EXPORT_SCHEMA_VERSION'"),
            (std::vector<Row>{{S("3.25.0")}}));
}

TEST_F(SqliteExportTest, LossCountersAreInMetaData) {
  Profile p = HandBuiltProfile();
  p.counters.cupti_dropped_records = 7;
  WriteSqliteExport(p, path_);
  const Db db(path_);
  EXPECT_EQ(db.Query("SELECT value FROM META_DATA_EXPORT "
                     "WHERE name = 'GPROF_RUN_COUNTER_cupti_dropped_records'"),
            (std::vector<Row>{{S("7")}}));
  size_t counters = 0;
  ForEachCounter(p.counters, [&](const char*, uint64_t, const char*) { ++counters; });
  EXPECT_EQ(db.Query("SELECT COUNT(*) FROM META_DATA_EXPORT WHERE name LIKE 'GPROF_RUN_COUNTER_%'"),
            (std::vector<Row>{{I(static_cast<int64_t>(counters))}}));
}

// A record before the profile's start (a window's call begun before the window) moves the
// session start back to it: no time is negative, and utcEpochNs + start stays the wall time.
TEST_F(SqliteExportTest, SessionStartsAtTheEarliestRecord) {
  Profile p = HandBuiltProfile();
  p.api_calls.push_back({kT0 - 500, kT0 + 10, 20, kPid, 211, ApiDomain::kRuntime, 0, 0});
  WriteSqliteExport(p, path_);
  const Db db(path_);
  EXPECT_EQ(db.Query("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME")[0][0],
            I(static_cast<int64_t>(kT0 - 500)));
  EXPECT_EQ(db.Query("SELECT MIN(start) FROM CUPTI_ACTIVITY_KIND_RUNTIME")[0][0], I(0));
  EXPECT_EQ(db.Query("SELECT start FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start LIMIT 1")[0][0],
            I(1800));
}

// Every row of every table the export writes, sorted (row order is not part of the format).
std::map<std::string, std::vector<std::string>> AllRows(const std::string& path) {
  const Db db(path);
  std::map<std::string, std::vector<std::string>> tables;
  for (const Row& t : db.Query("SELECT name FROM sqlite_master WHERE type = 'table'")) {
    std::vector<std::string>& rows = tables[t[0].s];
    for (const Row& r : db.Query("SELECT * FROM " + t[0].s)) {
      std::ostringstream line;
      for (const Cell& c : r) line << c << "|";
      rows.push_back(line.str());
    }
    std::sort(rows.begin(), rows.end());
  }
  return tables;
}

// A long run exported segment by segment (SqliteExportStream) has its whole export's rows. The
// cases that need the whole run before the first row: the run's earliest record (an API call at
// kT0 - 500, the session start) is in the second segment, and a memset of device 2 in the first
// takes its context (9) from a copy on device 2 in the second.
Profile WithAnotherDeviceAndAnEarlierCall() {
  Profile whole = HandBuiltProfile();
  Memset on2 = whole.memsets[0];
  on2.device_id = 2;
  on2.correlation_id = 30;
  whole.memsets.push_back(on2);
  Memcpy copy2 = whole.memcpys[0];
  copy2.device_id = 2;
  copy2.context_id = 9;
  copy2.correlation_id = 31;
  whole.memcpys.push_back(copy2);
  whole.api_calls.push_back({kT0 - 500, kT0 + 10, 20, kPid, 211, ApiDomain::kRuntime, 0, 0});
  return whole;
}

TEST_F(SqliteExportTest, ARunExportedInSegmentsHasItsWholeExportsRows) {
  WriteSqliteExport(WithAnotherDeviceAndAnEarlierCall(), path_);

  // Segment 1: the kernels, the memsets, the ranges; segment 2: the rest.
  Profile run = WithAnotherDeviceAndAnEarlierCall();
  Profile first = WithAnotherDeviceAndAnEarlierCall();
  Profile second = WithAnotherDeviceAndAnEarlierCall();
  run.ranges.clear(), run.marks.clear(), run.api_calls.clear(), run.kernels.clear();
  run.memcpys.clear(), run.memsets.clear(), run.syncs.clear();
  first.marks.clear(), first.api_calls.clear(), first.memcpys.clear(), first.syncs.clear();
  second.ranges.clear(), second.kernels.clear(), second.memsets.clear();
  const std::string segmented = (dir_ / "segmented.sqlite").string();
  SqliteExportSurvey survey;
  survey.Add(first);
  survey.Add(second);
  SqliteExportStream stream(run, survey, segmented);
  stream.Add(first);
  stream.Add(second);
  const SqliteExportStats stats = stream.Close();

  const auto expected = AllRows(path_);
  EXPECT_EQ(AllRows(segmented), expected);
  EXPECT_GT(expected.at("CUPTI_ACTIVITY_KIND_KERNEL").size(), 0u);
  uint64_t rows = 0;
  for (const auto& [table, r] : expected) rows += r.size();
  EXPECT_EQ(stats.rows, rows);
  const Db db(segmented);
  EXPECT_EQ(db.Query("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME")[0][0],
            I(static_cast<int64_t>(kT0 - 500)));
  EXPECT_EQ(db.Query("SELECT start FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start LIMIT 1")[0][0],
            I(1800));  // kT0 + 1300, from kT0 - 500
  EXPECT_EQ(db.Query("SELECT contextId FROM CUPTI_ACTIVITY_KIND_MEMSET WHERE correlationId = 30"),
            (std::vector<Row>{{I(9)}}));
}

// A stream never closed (an exception between its segments) leaves nothing at its path.
TEST_F(SqliteExportTest, AnUnclosedStreamLeavesNoFile) {
  const Profile p = HandBuiltProfile();
  {
    SqliteExportSurvey survey;
    survey.Add(p);
    SqliteExportStream stream(p, survey, path_);
    stream.Add(p);
  }
  EXPECT_TRUE(fs::is_empty(dir_));
}

// The program's names are arbitrary bytes; the export's text is valid UTF-8 (each bad byte
// U+FFFD), as its readers (Python's sqlite3, pandas) require.
TEST_F(SqliteExportTest, InvalidUtf8NamesAreRepaired) {
  Profile p = HandBuiltProfile();
  p.ranges.push_back({kT0 + 7'000, kT0 + 8'000, p.strings.Intern("bad\xff name"), kPid, 0, 0, 0});
  p.kernels.push_back({kT0 + 7'100, kT0 + 7'200, 0, p.strings.Intern("k\xc3"), 0, 7});
  p.info.program = "tr\x80iner";
  WriteSqliteExport(p, path_);
  const Db db(path_);
  EXPECT_EQ(db.Query("SELECT text FROM NVTX_EVENTS WHERE start = 7000"),
            (std::vector<Row>{{S("bad\xef\xbf\xbd name")}}));
  EXPECT_EQ(db.Query("SELECT d.value, s.value, m.value FROM CUPTI_ACTIVITY_KIND_KERNEL AS k "
                     "JOIN StringIds AS d ON d.id = k.demangledName "
                     "JOIN StringIds AS s ON s.id = k.shortName "
                     "JOIN StringIds AS m ON m.id = k.mangledName WHERE k.start = 7100"),
            (std::vector<Row>{{S("k\xef\xbf\xbd"), S("k\xef\xbf\xbd"), S("k\xef\xbf\xbd")}}));
  EXPECT_EQ(db.Query("SELECT name FROM PROCESSES"), (std::vector<Row>{{S("tr\xef\xbf\xbdiner")}}));
  EXPECT_EQ(db.Query("SELECT COUNT(*) FROM StringIds WHERE value LIKE '%' || char(65533) || '%'"),
            (std::vector<Row>{{I(2)}}));
}

TEST_F(SqliteExportTest, EmptyProfileHasEveryTableAndNoActivityRows) {
  Profile p;
  p.info.pid = 1;
  p.info.program = "empty";
  WriteSqliteExport(p, path_);
  const Db db(path_);
  for (const char* t : {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME",
                        "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
                        "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "NVTX_EVENTS", "ThreadNames"}) {
    EXPECT_EQ(db.Count(t), 0) << t;
  }
  EXPECT_EQ(db.Count("PROCESSES"), 1);
  EXPECT_EQ(db.Count("StringIds"), 1);  // id 0, ""
}

TEST_F(SqliteExportTest, SameProfileSameBytesAndNoTemporaryFileLeft) {
  const Profile p = HandBuiltProfile();
  WriteSqliteExport(p, path_);
  const std::string first = ReadText(path_);
  WriteSqliteExport(p, path_);  // replaces the file
  EXPECT_EQ(ReadText(path_), first);
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename().string());
  EXPECT_EQ(names, (std::vector<std::string>{"out.sqlite"}));
}

TEST_F(SqliteExportTest, ReplacesAnExistingFileAndALinkAtTheName) {
  { std::ofstream(path_) << "not a database"; }
  const std::string target = (dir_ / "elsewhere").string();
  { std::ofstream(target) << "keep me"; }
  const std::string link = (dir_ / "link.sqlite").string();
  fs::create_symlink(target, link);
  WriteSqliteExport(HandBuiltProfile(), path_);
  WriteSqliteExport(HandBuiltProfile(), link);
  EXPECT_EQ(Db(path_).Count("CUPTI_ACTIVITY_KIND_KERNEL"), 2);
  EXPECT_FALSE(fs::is_symlink(link));  // the link was replaced, never written through
  EXPECT_EQ(ReadText(target), "keep me");
}

TEST_F(SqliteExportTest, MissingDirectoryThrowsNamingItAndWritesNothing) {
  const std::string path = (dir_ / "missing" / "out.sqlite").string();
  try {
    WriteSqliteExport(HandBuiltProfile(), path);
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("missing"));
  }
  EXPECT_FALSE(fs::exists(dir_ / "missing"));
}

TEST(KernelShortName, StripsNamespacesTemplatesParametersAndReturnType) {
  EXPECT_EQ(KernelShortName("void ns::gemm<float, 4>(float*, int)"), "gemm");
  EXPECT_EQ(KernelShortName("plain_kernel"), "plain_kernel");
  EXPECT_EQ(KernelShortName("plain_kernel()"), "plain_kernel");
  EXPECT_EQ(KernelShortName("(anonymous namespace)::helper(int*)"), "helper");
  EXPECT_EQ(KernelShortName("void at::native::vectorized_elementwise_kernel<4, "
                            "at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, "
                            "at::native::FillFunctor<float>, at::detail::Array<char*, 1>)"),
            "vectorized_elementwise_kernel");
  EXPECT_EQ(KernelShortName("void k<(int)3>(float (*) [4])"), "k");
  // No name shape: the whole text.
  EXPECT_EQ(KernelShortName("weird)"), "weird)");
  EXPECT_EQ(KernelShortName(""), "");
}

}  // namespace
}  // namespace gprof
