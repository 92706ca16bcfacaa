// The SQLite export where gprof-run was built without libsqlite3 (CMake found no SQLite3): every
// call says so. Launcher process only.
#include <stdexcept>

#include "outputs/sqlite/sqlite_export.h"

namespace gprof {

bool SqliteExportAvailable() { return false; }

SqliteExportStats WriteSqliteExport(const Profile&, const std::string& path) {
  throw std::runtime_error("cannot write " + path +
                           ": this gprof-run was built without SQLite (install libsqlite3-dev "
                           "and rebuild)");
}

const std::vector<std::string_view>& SqliteExportSchema() {
  static const std::vector<std::string_view> kNone;
  return kNone;
}

std::string KernelShortName(std::string_view demangled) { return std::string(demangled); }

}  // namespace gprof
