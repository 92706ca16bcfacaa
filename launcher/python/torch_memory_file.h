// The torch caching allocator events beside a dump (analysis/samples/torch_memory.h): reads
// <dir>/<program>.<pid>.torchmem, written by the Python hook with --profile-memory, and attaches
// the events of the dump's window to its Profile, for every command that shows the table's
// memory columns (report, stats, diff, the merged view, report.html). Launcher process only.
#pragma once

#include <string>

#include "launcher/report.h"
#include "model/profile.h"

namespace gprof::launcher {

// The allocator file of dump `name` in `dir` (whether or not it exists).
std::string TorchMemoryPath(const std::string& dir, const DumpName& name);

// Attaches the file's events to `profile` when there is a file. Returns the lines for stderr:
// what was attached, or a warning saying why the file was not used (unreadable, corrupt, another
// pid's); "" when there is no file. Never throws: the dump renders without it.
std::string AttachTorchMemoryOf(const std::string& dir, const DumpName& name, Profile* profile);
// The same for the dump at `dump_path` (nothing when its file name is not a dump's).
std::string AttachTorchMemoryBeside(const std::string& dump_path, Profile* profile);

}  // namespace gprof::launcher
