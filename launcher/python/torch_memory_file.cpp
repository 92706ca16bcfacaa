// The torch caching allocator events beside a dump (torch_memory_file.h). Launcher process only.
#include "launcher/python/torch_memory_file.h"

#include <exception>
#include <filesystem>
#include <system_error>

#include "analysis/samples/torch_memory.h"

namespace gprof::launcher {

std::string TorchMemoryPath(const std::string& dir, const DumpName& name) {
  return dir + "/" + name.program + "." + std::to_string(name.pid) + kTorchMemoryExtension;
}

std::string AttachTorchMemoryOf(const std::string& dir, const DumpName& name, Profile* profile) {
  const std::string path = TorchMemoryPath(dir, name);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return "";
  try {
    TorchMemoryFile file;
    std::string error;
    if (!ReadTorchMemory(path, &file, &error)) {
      return "gprof-run: warning: " + error + "; the memory columns go without torch's " +
             "allocator events\n";
    }
    if (file.pid != profile->info.pid) {
      return "gprof-run: warning: " + path + " is of pid " + std::to_string(file.pid) +
             ", the dump of pid " + std::to_string(profile->info.pid) + "; not used\n";
    }
    return TorchMemoryNote(AttachTorchMemory(file, profile), path);
  } catch (const std::exception& e) {  // bad_alloc on a huge file
    return "gprof-run: warning: " + path + ": " + e.what() + "; not used\n";
  }
}

std::string AttachTorchMemoryBeside(const std::string& dump_path, Profile* profile) {
  const std::filesystem::path p(dump_path);
  DumpName name;
  if (!ParseDumpName(p.filename().string(), &name)) return "";
  const std::string dir = p.has_parent_path() ? p.parent_path().string() : ".";
  return AttachTorchMemoryOf(dir, name, profile);
}

}  // namespace gprof::launcher
