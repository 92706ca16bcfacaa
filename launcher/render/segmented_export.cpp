// A long run's SQLite export, segment by segment (see segmented_export.h).
#include "launcher/render/segmented_export.h"

#include <stdexcept>

#include "launcher/render/segment_passes.h"
#include "model/dump_segment_reader.h"
#include "model/gpu_checks.h"

namespace gprof::launcher {
SqliteExportStats ExportDumpInSegments(const std::string& dump, const std::string& path) {
  SqliteExportSurvey survey;
  SegmentedGpuChecks checks;  // the run's GPU-vs-call counters, as ReadDump makes them
  DumpSegmentReader first;
  OpenSegments(&first, dump);
  while (NextSegment(&first)) {
    survey.Add(first.profile());
    checks.Add(first.profile());
  }
  Profile* run = first.mutable_profile();  // the run's tables and counters after the last
  DropRecords(run);
  if (first.segments_read() > 1 || !run->info.complete) checks.Finish(run);

  SqliteExportStream stream(*run, survey, path);
  DumpSegmentReader second;
  OpenSegments(&second, dump);
  uint32_t segments = 0;
  while (NextSegment(&second)) {
    stream.Add(second.profile());
    ++segments;
  }
  if (segments != first.segments_read()) {
    throw std::runtime_error(dump + " changed while it was being exported");
  }
  return stream.Close();
}

}  // namespace gprof::launcher
