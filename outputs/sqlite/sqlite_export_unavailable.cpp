// The SQLite export where gprof-run was built without libsqlite3 (CMake found no SQLite3): every
// call says so. Launcher process only.
#include <stdexcept>

#include "outputs/sqlite/sqlite_export.h"

namespace gprof {

bool SqliteExportAvailable() { return false; }

namespace {
[[noreturn]] void Unavailable(const std::string& path) {
  throw std::runtime_error("cannot write " + path +
                           ": this gprof-run was built without SQLite (install libsqlite3-dev "
                           "and rebuild)");
}
}  // namespace

SqliteExportStats WriteSqliteExport(const Profile&, const std::string& path) { Unavailable(path); }

void SqliteExportSurvey::Add(const Profile&) {}
struct SqliteExportStream::State {};
SqliteExportStream::SqliteExportStream(const Profile&, const SqliteExportSurvey&,
                                       const std::string& path) {
  Unavailable(path);
}
SqliteExportStream::~SqliteExportStream() = default;
void SqliteExportStream::Add(const Profile&) {}
SqliteExportStats SqliteExportStream::Close() { return {}; }

const std::vector<std::string_view>& SqliteExportSchema() {
  static const std::vector<std::string_view> kNone;
  return kNone;
}

std::string KernelShortName(std::string_view demangled) { return std::string(demangled); }

}  // namespace gprof
