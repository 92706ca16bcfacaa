// gzip files for traces (`trace.json.gz`, which TensorBoard's profiler plugin and HTA read as
// they read Kineto's `.pt.trace.json.gz`): a streaming zlib deflate into an OutputFile
// (model/output_file.h: temporary name, renamed into place by Close), and a whole-file reader.
// Launcher process only.
#pragma once

#include <memory>
#include <string>

#include "text/json_writer.h"

namespace gprof {

// True when `path` names a gzip file by its extension.
bool IsGzipPath(const std::string& path);

class GzipFile {
 public:
  // Starts `path`; throws std::runtime_error naming the file when it cannot.
  explicit GzipFile(const std::string& path);
  ~GzipFile();
  GzipFile(const GzipFile&) = delete;
  GzipFile& operator=(const GzipFile&) = delete;

  // Compresses `n` bytes; throws std::runtime_error on a zlib or I/O error.
  void Write(const char* data, size_t n);
  // A sink for JsonWriter that writes here.
  JsonSink Sink();
  // Finishes the stream and renames the file into place; returns the compressed size.
  uint64_t Close();

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// Reads a whole file, inflating it when it is gzip (by its magic bytes, whatever its name).
// Throws std::runtime_error naming the file when it cannot.
std::string ReadMaybeGzip(const std::string& path);

}  // namespace gprof
