// Who this process is, for dump names and profile metadata: program name (the script for a Python
// interpreter), command line, host, rank and world size, pid; and the dump paths built from them.
// Pure helpers take explicit inputs (tests call them); Gather* reads /proc and the environment.
// Cold: init only.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model/profile.h"

namespace gprof::collector {

// Dump names. Whole run: `<dir>/<program>.<pid>.gpdump`; window:
// `<dir>/<program>.<pid>.cycle<C>.steps<A>-<B>.gpdump`; control capture (--start-paused, the
// window's cycle + 1): `<dir>/<program>.<pid>.capture<K>.gpdump`. `dir` "" means the current
// directory.
std::string WholeRunDumpPath(const std::string& dir, const ProfileInfo& info);
std::string WindowDumpPath(const std::string& dir, const ProfileInfo& info, bool capture = false);

// Program name for dump names: basename of the executable, or for a Python interpreter the
// script's basename (`python train.py` -> "train.py"), the module for `-m mod`, "python" for -c.
std::string ProgramNameFrom(const std::string& exe_path, const std::vector<std::string>& argv);
// The process's environment as a map (for ParseConfig and RankFromEnv, config/rank_env.h).
std::map<std::string, std::string> ReadEnvironment();
// This process's ProfileInfo at init: pid, parent pid, program, command line, host, rank, start
// time; gpu_status "not started" until GPU collection starts.
ProfileInfo GatherProcessInfo(const std::map<std::string, std::string>& env);
// What lining up this process's clock with other ranks' needs (ProcessPlacement): local rank and
// node from `env`, the boot id, the start clock pair and the kernel's NTP state.
ProcessPlacement GatherPlacement(const std::map<std::string, std::string>& env);
// Stamps the clock pair at the time a dump (or segment) is built: ProcessPlacement::clock_end.
void StampClockEnd(ProfileInfo* info);

}  // namespace gprof::collector
