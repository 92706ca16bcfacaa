// Dumps a killed program left behind. A whole run writes its dump in segments into
// `<program>.<pid>.gpdump.tmp.<pid>` as it goes (collector/lifecycle/spill.h) and renames it at
// exit; a program killed before (SIGKILL, the OOM killer, _exit) leaves the temporary file with
// its completed segments. Before rendering a directory, the launcher gives each such file of a
// process that no longer runs its dump's name, so that every command reads it; the reader then
// marks it incomplete (ProfileInfo::complete) and IncompleteDumpText says so.
#pragma once

#include <cstdio>
#include <string>

#include "model/profile.h"

namespace gprof::launcher {

// Renames, in `dir`, every left-behind segment file of a process that has ended and whose dump
// is missing to `<program>.<pid>.gpdump`, when it holds at least one complete segment, and
// prints one line for each on `err` (also for those that hold none, which stay as they are).
// Returns how many were recovered.
int RecoverPartialDumps(const std::string& dir, std::FILE* err);

// Whether `dir` holds a left-behind segment file (of any process, ended or not).
bool HasPartialDumps(const std::string& dir);

// "" for a complete dump; else one line (no newline) for `shown` (the dump's name): what is
// missing and why.
std::string IncompleteDumpText(const Profile& p, const std::string& shown);

}  // namespace gprof::launcher
