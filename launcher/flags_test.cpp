// Unit tests for the launcher's flag parser and help text (flags.h).
#include "launcher/flags.h"

#include <gtest/gtest.h>

#include "config/config.h"
#include "outputs/sqlite/sqlite_export.h"

namespace gprof::launcher {
namespace {

LaunchOptions Parse(const std::vector<std::string>& args, std::string* error = nullptr) {
  LaunchOptions o;
  const std::string e = ParseFlags(args, &o);
  if (error != nullptr) *error = e;
  else EXPECT_EQ(e, "");
  return o;
}

TEST(Flags, StopAtTheFirstNonOptionOrDoubleDash) {
  LaunchOptions o = Parse({"--no-cuda", "python", "train.py", "--no-nvtx", "-o", "x"});
  EXPECT_EQ(o.program, (std::vector<std::string>{"python", "train.py", "--no-nvtx", "-o", "x"}));
  EXPECT_EQ(o.gprof_env.at("GPROF_CUDA"), "0");
  EXPECT_EQ(o.gprof_env.count("GPROF_NVTX"), 0u);

  o = Parse({"-q", "--", "-weird-program", "arg"});
  EXPECT_TRUE(o.quiet);
  EXPECT_EQ(o.program, (std::vector<std::string>{"-weird-program", "arg"}));
}

TEST(Flags, ValuesAfterEqualsOrAsTheNextArgument) {
  LaunchOptions o = Parse({"--output=out/%p", "--activity-pool", "16", "-oother", "prog"});
  EXPECT_EQ(o.gprof_env.at("GPROF_OUTPUT_DIR"), "other");  // the last one wins
  EXPECT_EQ(o.gprof_env.at("GPROF_ACTIVITY_POOL"), "16");
  EXPECT_EQ(o.flag_of.at("GPROF_ACTIVITY_POOL"), "--activity-pool");
  o = Parse({"-o", "dir", "prog"});
  EXPECT_EQ(o.gprof_env.at("GPROF_OUTPUT_DIR"), "dir");
}

TEST(Flags, ScheduleParts) {
  LaunchOptions o = Parse({"--repeat", "2", "--active=3", "--skip-first", "1", "prog"});
  EXPECT_EQ(o.gprof_env.at("GPROF_SCHEDULE"), "skip_first=1,active=3,repeat=2");
  std::string error;
  Parse({"--schedule", "active=1", "--wait", "1", "prog"}, &error);
  EXPECT_NE(error.find("not both"), std::string::npos) << error;
  Parse({"--warmup", "x", "prog"}, &error);
  EXPECT_NE(error.find("--warmup"), std::string::npos) << error;
}

TEST(Flags, LauncherOnlyFlags) {
  LaunchOptions o = Parse({"--sort-by", "count", "--row-limit=5", "--force", "--preload", "p"});
  EXPECT_EQ(o.sort_by, "count");
  EXPECT_EQ(o.row_limit, 5);
  EXPECT_TRUE(o.force);
  EXPECT_TRUE(o.preload);
  EXPECT_TRUE(o.gprof_env.empty());
}

TEST(Flags, NoPythonHook) {
  EXPECT_TRUE(Parse({"python3", "train.py"}).python_hook);
  LaunchOptions o = Parse({"--no-python-hook", "python3", "train.py", "--no-python-hook"});
  EXPECT_FALSE(o.python_hook);
  EXPECT_TRUE(o.gprof_env.empty());  // launcher-only: no GPROF_* key
  EXPECT_EQ(o.program, (std::vector<std::string>{"python3", "train.py", "--no-python-hook"}));
  std::string error;
  Parse({"--no-python-hook=1", "p"}, &error);
  EXPECT_NE(error.find("takes no value"), std::string::npos) << error;
}

TEST(Flags, ExportSqliteOnlyAndBeforeTheRun) {
  EXPECT_FALSE(Parse({"prog"}).export_sqlite);
  if (!SqliteExportAvailable()) {  // a build without libsqlite3 refuses it up front
    std::string error;
    Parse({"--export", "sqlite", "prog"}, &error);
    EXPECT_NE(error.find("built without SQLite"), std::string::npos) << error;
    return;
  }
  LaunchOptions o = Parse({"--export", "sqlite", "prog"});
  EXPECT_TRUE(o.export_sqlite);
  EXPECT_TRUE(o.gprof_env.empty());  // launcher-only: the program never sees it
  EXPECT_TRUE(Parse({"--export=sqlite", "prog"}).export_sqlite);
  std::string error;
  Parse({"--export", "json", "prog"}, &error);
  EXPECT_NE(error.find("--export json: export type 'json' is not known"), std::string::npos)
      << error;
  EXPECT_NE(error.find("sqlite"), std::string::npos) << error;
}

TEST(Flags, UsageErrors) {
  std::string error;
  Parse({"--bogus", "p"}, &error);
  EXPECT_NE(error.find("unknown flag --bogus"), std::string::npos) << error;
  Parse({"--delay"}, &error);
  EXPECT_NE(error.find("needs a value"), std::string::npos) << error;
  Parse({"--force=1", "p"}, &error);
  EXPECT_NE(error.find("takes no value"), std::string::npos) << error;
  Parse({"--row-limit", "-2", "p"}, &error);
  EXPECT_NE(error.find("--row-limit"), std::string::npos) << error;
  Parse({"--sort-by", "speed", "p"}, &error);
  EXPECT_NE(error.find("self_cpu_time_total"), std::string::npos) << error;
}

TEST(Flags, CpuSamplingTakesAnOptionalRateAndABackend) {
  LaunchOptions o = Parse({"--cpu-sampling", "prog"});
  EXPECT_EQ(o.gprof_env.at("GPROF_CPU_SAMPLING"), "1000");  // the bare flag: 1000 Hz
  EXPECT_EQ(o.program.front(), "prog");  // a bare flag never takes the program as its rate
  o = Parse({"--cpu-sampling=250", "--cpu-sampling-backend", "timer", "prog"});
  EXPECT_EQ(o.gprof_env.at("GPROF_CPU_SAMPLING"), "250");
  EXPECT_EQ(o.gprof_env.at("GPROF_CPU_SAMPLING_BACKEND"), "timer");
}

TEST(Flags, EveryConfigKeyHasAFlagAndEveryFlagKeyExists) {
  for (const ConfigKey& key : ConfigKeys()) {
    bool found = false;
    for (const FlagSpec& f : Flags()) found = found || f.key == key.name;
    EXPECT_TRUE(found) << key.name << " has no flag";
  }
  for (const FlagSpec& f : Flags()) {
    if (f.key.empty()) continue;
    bool known = false;
    for (const ConfigKey& key : ConfigKeys()) known = known || f.key == key.name;
    EXPECT_TRUE(known) << "--" << f.long_name << " sets unknown key " << f.key;
  }
}

TEST(Flags, HelpMentionsEveryFlag) {
  const std::string help = HelpText();
  for (const FlagSpec& f : Flags()) {
    EXPECT_NE(help.find("--" + std::string(f.long_name)), std::string::npos) << f.long_name;
  }
}

TEST(Flags, PythonSamplingTakesAnOptionalValueAfterEqualsOnly) {
  LaunchOptions o = Parse({"--python-sampling", "python3", "prog.py"});
  EXPECT_EQ(o.gprof_env.at("GPROF_PYTHON_SAMPLING"), "1000");  // the bare flag: 1000 Hz
  EXPECT_EQ(o.program, (std::vector<std::string>{"python3", "prog.py"}));
  o = Parse({"--python-sampling=250", "python3", "prog.py"});
  EXPECT_EQ(o.gprof_env.at("GPROF_PYTHON_SAMPLING"), "250");
  EXPECT_EQ(o.flag_of.at("GPROF_PYTHON_SAMPLING"), "--python-sampling");
  EXPECT_EQ(o.program, (std::vector<std::string>{"python3", "prog.py"}));
  // The value is checked by ParseConfig, as every key's (exit 2 before the program starts).
  o = Parse({"--python-sampling=5000", "python3"});
  const ParseResult r = ParseConfig(o.gprof_env);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].key, "GPROF_PYTHON_SAMPLING");
  EXPECT_NE(HelpText().find("--python-sampling[=HZ]"), std::string::npos);
}

// --with-stack groups by torch's group_by_stack_n=5 and --group-by-stack N by N frames
// (1..1000); either turns sampling on at the bare flag's 1000 Hz unless a flag or the inherited
// environment already set GPROF_PYTHON_SAMPLING (an explicit 0 included).
TEST(Flags, WithStackGroupsByFiveFramesAndTurnsSamplingOnUnlessItIsSet) {
  LaunchOptions o = Parse({"--with-stack", "python3", "prog.py"});
  EXPECT_TRUE(o.with_stack);
  EXPECT_EQ(o.group_by_stack, 5u);
  std::map<std::string, std::string> env;
  TurnOnSamplingForStacks(o, &env);
  EXPECT_EQ(env.at("GPROF_PYTHON_SAMPLING"), "1000");
  env = {{"GPROF_PYTHON_SAMPLING", "200"}};  // inherited
  TurnOnSamplingForStacks(o, &env);
  EXPECT_EQ(env.at("GPROF_PYTHON_SAMPLING"), "200");

  o = Parse({"--python-sampling=0", "--with-stack", "--group-by-stack", "3", "python3"});
  EXPECT_EQ(o.group_by_stack, 3u);
  env = o.gprof_env;
  TurnOnSamplingForStacks(o, &env);
  EXPECT_EQ(env.at("GPROF_PYTHON_SAMPLING"), "0");  // the flag's value stands

  o = Parse({"--group-by-stack=2", "python3"});  // alone: grouping, and sampling on
  EXPECT_FALSE(o.with_stack);
  EXPECT_EQ(o.group_by_stack, 2u);
  env.clear();
  TurnOnSamplingForStacks(o, &env);
  EXPECT_EQ(env.at("GPROF_PYTHON_SAMPLING"), "1000");

  o = Parse({"python3", "prog.py"});  // neither: nothing changes
  EXPECT_EQ(o.group_by_stack, 0u);
  env.clear();
  TurnOnSamplingForStacks(o, &env);
  EXPECT_TRUE(env.empty());

  for (const char* bad : {"0", "1001", "x", "-1", "5frames", ""}) {
    std::string error;
    Parse({"--group-by-stack", bad, "python3"}, &error);
    EXPECT_NE(error.find("--group-by-stack"), std::string::npos) << bad;
    EXPECT_NE(error.find("1 to 1000"), std::string::npos) << bad << ": " << error;
  }
  EXPECT_NE(HelpText().find("--with-stack"), std::string::npos);
  EXPECT_NE(HelpText().find("--group-by-stack N"), std::string::npos);
}

}  // namespace
}  // namespace gprof::launcher

namespace gprof::launcher {
namespace {

// `--python-sampling 100 python3 x.py`: the rate as a separate word would be run as the program
// "100"; the parser stops with the flag's =VALUE form instead.
TEST(Flags, OptionalValueAsASeparateWordIsRefusedWithTheEqualsForm) {
  std::string error;
  Parse({"--python-sampling", "100", "python3", "x.py"}, &error);
  EXPECT_NE(error.find("--python-sampling takes its rate as --python-sampling=100"),
            std::string::npos)
      << error;
  // The bare flag before a program stays valid, and so does the =VALUE form.
  LaunchOptions o = Parse({"--python-sampling", "python3", "x.py"});
  EXPECT_EQ(o.gprof_env.at("GPROF_PYTHON_SAMPLING"), "1000");
  EXPECT_EQ(o.program, (std::vector<std::string>{"python3", "x.py"}));
  o = Parse({"--python-sampling=100", "python3"});
  EXPECT_EQ(o.gprof_env.at("GPROF_PYTHON_SAMPLING"), "100");
}

}  // namespace
}  // namespace gprof::launcher

namespace gprof::launcher {
namespace {

TEST(Flags, MisspelledFlagGetsDidYouMean) {
  std::string error;
  Parse({"--row-limt", "5", "prog"}, &error);
  EXPECT_NE(error.find("unknown flag --row-limt (did you mean --row-limit?)"), std::string::npos)
      << error;
  Parse({"--pyhton-sampling=10", "prog"}, &error);  // two letters swapped: one slip
  EXPECT_NE(error.find("did you mean --python-sampling?"), std::string::npos) << error;
  Parse({"--zzzz", "prog"}, &error);  // nothing close: no guess
  EXPECT_EQ(error.find("did you mean"), std::string::npos) << error;
}

}  // namespace
}  // namespace gprof::launcher
