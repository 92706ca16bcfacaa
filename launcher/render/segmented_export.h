// The SQLite export of a long run's dump, segment by segment, in memory bounded by a segment and
// the run's tables (as the segmented render's, segmented_render.h): `gprof-run export` and
// `--export sqlite` of a dump over --segment-render-mb. Launcher process only.
//
// Two passes over the segments (model/dump_segment_reader.h): the first finds the run's tables,
// its counters as a whole read makes them (model/gpu_checks.h) and what the export needs before
// its first row (SqliteExportSurvey: the session start, the devices' contexts); the second writes
// each segment's records (SqliteExportStream). The database holds the rows of the whole read's
// export (outputs/sqlite/sqlite_export.h).
#pragma once

#include <string>

#include "outputs/sqlite/sqlite_export.h"

namespace gprof::launcher {

// Writes the dump at `dump` to `path`. Throws std::runtime_error with the reader's or the
// writer's message; `path` is then left as it was.
SqliteExportStats ExportDumpInSegments(const std::string& dump, const std::string& path);

}  // namespace gprof::launcher
