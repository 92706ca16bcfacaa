// `gprof-run export` and `gprof-run --export sqlite` as real processes, on dumps written with
// model/WriteDump and by the probe: where the files go, the exit codes, and that the run's file
// is the one `export` writes. The rows themselves: outputs/sqlite/sqlite_export_test.cpp; on a real
// program's run: sqlite_standin_test.cpp.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model/dump.h"
#include "tests/launcher/sample_profile.h"
#include "tests/launcher/sqlite_query.h"
#include "tests/support/long_run.h"
#include "tests/support/process.h"

namespace gprof::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const std::string kProbe = GPROF_PROBE_PATH;

std::string Bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> Sqlite(const std::string& dir) {
  std::vector<std::string> out;
  for (const std::string& name : ListDir(dir)) {
    if (name.ends_with(".sqlite")) out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

class ExportCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir(::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  ProcessResult Export(std::vector<std::string> args) {
    args.insert(args.begin(), {LauncherPath(), "export"});
    return RunProcess(args);
  }
  // gprof-run [args] in dir_, for the probe (which never loads the library: any file will do).
  ProcessResult Run(std::vector<std::string> args) {
    const std::string fake_lib = dir_ + "/libgprof_inject.so";
    std::ofstream(fake_lib) << "not a library\n";
    ProcessOptions o;
    o.cwd = dir_;
    o.set_env["GPROF_INJECT_LIB"] = fake_lib;
    o.unset_env = {"CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH", "LD_PRELOAD",
                   "GPROF_OUTPUT_DIR"};
    args.insert(args.begin(), LauncherPath());
    return RunProcess(args, o);
  }
  std::string dir_;
};

// SampleProfile: one kernel matmul of 500,000 ns launched by cudaLaunchKernel (100,000 ns), a
// 1 MiB HtoD copy, ranges train_step (5 ms) and forward (1 ms).
TEST_F(ExportCommandTest, EveryDumpOfADirectoryGetsItsFileBesideIt) {
  ASSERT_EQ(WriteDump(SampleProfile(77, "app"), dir_ + "/app.77.gpdump"), "");
  ASSERT_EQ(WriteDump(SampleProfile(77, "app"), dir_ + "/app.77.cycle1.steps1-2.gpdump"), "");
  const ProcessResult r = Export({"--type", "sqlite", dir_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Sqlite(dir_), (std::vector<std::string>{"app.77.cycle1.steps1-2.sqlite", "app.77.sqlite"}));
  EXPECT_THAT(r.err, HasSubstr("gprof-run: wrote " + dir_ + "/app.77.sqlite ("));
  for (const std::string& f : Sqlite(dir_)) {
    EXPECT_EQ(SqlQuery(dir_ + "/" + f,
                       "SELECT s.value, k.end - k.start, r.end - r.start "
                       "FROM CUPTI_ACTIVITY_KIND_KERNEL AS k "
                       "JOIN StringIds AS s ON s.id = k.demangledName "
                       "JOIN CUPTI_ACTIVITY_KIND_RUNTIME AS r ON r.correlationId = k.correlationId"),
              (std::vector<SqlRow>{{"matmul(float*, float*, float*, int)", "500000", "100000"}}))
        << f;
    EXPECT_EQ(SqlQuery(dir_ + "/" + f, "SELECT text, end - start FROM NVTX_EVENTS "
                                       "WHERE eventType = 59 ORDER BY start"),
              (std::vector<SqlRow>{{"train_step", "5000000"}, {"forward", "1000000"}}));
  }
}

TEST_F(ExportCommandTest, OneDumpBesideItOrToTheOutputFile) {
  const std::string dump = dir_ + "/app.77.gpdump";
  ASSERT_EQ(WriteDump(SampleProfile(77, "app"), dump), "");
  ProcessResult r = Export({dump, "-o", dir_ + "/mine.sqlite", "--quiet"});  // --type: sqlite
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(Sqlite(dir_), (std::vector<std::string>{"mine.sqlite"}));
  r = Export({dump});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Sqlite(dir_), (std::vector<std::string>{"app.77.sqlite", "mine.sqlite"}));
  EXPECT_EQ(Bytes(dir_ + "/app.77.sqlite"), Bytes(dir_ + "/mine.sqlite"));
}

TEST_F(ExportCommandTest, UsageErrorsExitTwoAndWriteNothing) {
  ASSERT_EQ(WriteDump(SampleProfile(77, "app"), dir_ + "/app.77.gpdump"), "");
  ProcessResult r = Export({"--type", "json", dir_});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--type json: export type 'json' is not known: gprof-run exports "
                               "sqlite"));
  r = Export({"--type=parquet", dir_});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--type parquet"));
  ASSERT_EQ(WriteDump(SampleProfile(78, "app"), dir_ + "/app.78.gpdump"), "");
  r = Export({dir_, "-o", dir_ + "/one.sqlite"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("holds 2 dumps"));
  EXPECT_EQ(Export({"--bogus", dir_}).exit_code, 2);
  EXPECT_EQ(Export({}).exit_code, 2);
  EXPECT_EQ(Export({dir_ + "/nothing-here"}).exit_code, 2);
  EXPECT_EQ(Sqlite(dir_), std::vector<std::string>{});
}

TEST_F(ExportCommandTest, NoDumpOrAnUnreadableOneExitsOneAndTheOthersAreWritten) {
  ProcessResult r = Export({dir_});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("no dump in"));
  ASSERT_EQ(WriteDump(SampleProfile(77, "app"), dir_ + "/app.77.gpdump"), "");
  std::ofstream(dir_ + "/app.78.gpdump") << "not a dump";
  r = Export({dir_});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("app.78.gpdump"));
  EXPECT_EQ(Sqlite(dir_), (std::vector<std::string>{"app.77.sqlite"}));
}

TEST_F(ExportCommandTest, RunWithExportSqliteWritesWhatExportWritesAndSaysWhere) {
  const ProcessResult r = Run({"-q", "-o", "out", "--export", "sqlite", kProbe, "dump"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string out = fs::canonical(dir_ + "/out").string();
  const std::vector<std::string> files = Sqlite(out);
  ASSERT_EQ(files.size(), 1u) << r.err;
  const std::string sqlite = out + "/" + files[0];
  EXPECT_THAT(r.err, HasSubstr(", SQLite " + sqlite + "\n"));
  EXPECT_EQ(SqlQuery(sqlite, "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"),
            (std::vector<SqlRow>{{"1"}}));
  // The same dump through `gprof-run export`: the same bytes.
  const ProcessResult e = Export({out, "-o", dir_ + "/again.sqlite"});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_EQ(Bytes(dir_ + "/again.sqlite"), Bytes(sqlite));
}

// A dump rendered segment by segment after the run (--segment-render-mb 0: every dump) is
// exported segment by segment too (launcher/render/segmented_export.h): the probe's one-segment
// dump gives the bytes of the whole read's export.
TEST_F(ExportCommandTest, RunWithExportSqliteOfADumpRenderedInSegmentsWritesTheWholeReadsBytes) {
  const ProcessResult r = Run({"-q", "-o", "out", "--segment-render-mb", "0", "--export",
                               "sqlite", kProbe, "dump"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string out = fs::canonical(dir_ + "/out").string();
  const std::vector<std::string> files = Sqlite(out);
  ASSERT_EQ(files.size(), 1u) << r.err;
  EXPECT_EQ(SqlQuery(out + "/" + files[0], "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"),
            (std::vector<SqlRow>{{"1"}}));
  const ProcessResult e = Export({out, "-o", dir_ + "/whole.sqlite"});  // a small dump: whole
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_EQ(Bytes(dir_ + "/whole.sqlite"), Bytes(out + "/" + files[0]));
}

// Every table's rows, sorted (row order is not part of the format).
std::vector<SqlRow> AllRows(const std::string& path) {
  std::vector<SqlRow> all;
  for (const SqlRow& t : SqlQuery(path, "SELECT name FROM sqlite_master WHERE type = 'table'")) {
    for (SqlRow row : SqlQuery(path, "SELECT * FROM " + t[0])) {
      row.insert(row.begin(), t[0]);
      all.push_back(std::move(row));
    }
  }
  std::sort(all.begin(), all.end());
  return all;
}

// A long run's dump (tests/support/long_run.h: 5 segments of 3 launches, the last launch's
// kernel of each segment stored in the next, an "epoch" range over the run stored in the last,
// a kernel "k_lost" with no launch in segment 1) exported segment by segment has the rows of its
// whole export, and what a user would query, counted by hand: 16 kernels (15 k_a, k_lost), 15
// launches each joined to its kernel, 6 ranges (5 steps, epoch, 50 ms - 2 us), the session from
// the run's start, and k_lost counted as a GPU record without its call.
TEST_F(ExportCommandTest, ALongRunExportedSegmentBySegmentHasItsWholeExportsRows) {
  const std::string dump = WriteLongRun(dir_, 5, 3);
  ProcessResult r = Export({dump, "-o", dir_ + "/whole.sqlite"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Export({dump, "-o", dir_ + "/segments.sqlite", "--segment-render-mb", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string db = dir_ + "/segments.sqlite";
  EXPECT_EQ(AllRows(db), AllRows(dir_ + "/whole.sqlite"));
  EXPECT_EQ(SqlQuery(db, "SELECT s.value, COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL AS k "
                         "JOIN StringIds AS s ON s.id = k.demangledName GROUP BY s.value "
                         "ORDER BY s.value"),
            (std::vector<SqlRow>{{"k_a", "15"}, {"k_lost", "1"}}));
  EXPECT_EQ(SqlQuery(db, "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r "
                         "JOIN CUPTI_ACTIVITY_KIND_KERNEL AS k USING (correlationId)"),
            (std::vector<SqlRow>{{"15"}}));
  EXPECT_EQ(SqlQuery(db, "SELECT text, COUNT(*), MAX(end - start) FROM NVTX_EVENTS "
                         "GROUP BY text ORDER BY text"),
            (std::vector<SqlRow>{{"epoch", "1", "49998000"}, {"step", "5", "9980000"}}));
  EXPECT_EQ(SqlQuery(db, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME"),
            (std::vector<SqlRow>{{std::to_string(kLongRunT0)}}));
  EXPECT_EQ(SqlQuery(db, "SELECT value FROM META_DATA_EXPORT "
                         "WHERE name = 'GPROF_RUN_COUNTER_gpu_records_uncorrelated'"),
            (std::vector<SqlRow>{{"1"}}));
}

TEST_F(ExportCommandTest, RunWithAnUnknownExportTypeExitsTwoBeforeTheProgramStarts) {
  const std::string marker = dir_ + "/ran";
  const ProcessResult r = Run({"--export", "csv", kProbe, "touch", marker});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--export csv: export type 'csv' is not known"));
  EXPECT_FALSE(fs::exists(marker));
}

}  // namespace
}  // namespace gprof::testing
