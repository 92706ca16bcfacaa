// A pass over a long run's dump, one segment at a time (model/dump_segment_reader.h), for the
// segmented render and export: the reader's errors thrown as std::runtime_error. Launcher only.
#pragma once

#include <stdexcept>
#include <string>

#include "model/dump_segment_reader.h"

namespace gprof::launcher {

// Opens `path` for a pass; throws with the reader's message.
inline void OpenSegments(DumpSegmentReader* reader, const std::string& path) {
  std::string error;
  if (!reader->Open(path, &error)) throw std::runtime_error(error);
}

// Reads the next segment: false at the end; throws with the reader's message on a bad one.
inline bool NextSegment(DumpSegmentReader* reader) {
  std::string error;
  if (reader->Next(&error)) return true;
  if (!error.empty()) throw std::runtime_error(error);
  return false;
}

}  // namespace gprof::launcher
