#include "launcher/render/tensorboard_link.h"

#include <filesystem>
#include <system_error>

namespace gprof::launcher {

std::string TensorBoardWorker(const std::string& stem, const std::string& hostname) {
  const size_t dot = stem.rfind('.');
  if (dot == std::string::npos || dot + 1 == stem.size() ||
      stem.find_first_not_of("0123456789", dot + 1) != std::string::npos) {
    return stem;
  }
  return (hostname.empty() ? stem.substr(0, dot) : hostname) + "_" + stem.substr(dot + 1);
}

std::string TensorBoardLinkName(const std::string& worker, const std::string& trace_path) {
  const bool gz = trace_path.size() >= 3 && trace_path.compare(trace_path.size() - 3, 3, ".gz") == 0;
  return worker + ".pt.trace.json" + (gz ? ".gz" : "");
}

std::string LinkTraceForTensorBoard(const std::string& worker, const std::string& trace_path) {
  namespace fs = std::filesystem;
  const fs::path trace(trace_path);
  const fs::path dir = trace.parent_path() / kTensorBoardDir;
  const fs::path link = dir / TensorBoardLinkName(worker, trace_path);
  std::error_code ec;
  const fs::file_status folder = fs::symlink_status(dir, ec);
  if (fs::exists(folder) && !fs::is_directory(folder)) {
    return dir.string() + " exists and is not a folder: `tensorboard --logdir` will not list " +
           trace.filename().string();
  }
  if (!fs::exists(folder) && !fs::create_directory(dir, ec) && ec) {
    return "cannot create " + dir.string() + " (" + ec.message() +
           "): `tensorboard --logdir` will not list " + trace.filename().string();
  }
  const fs::file_status old = fs::symlink_status(link, ec);
  if (fs::exists(old)) {
    if (!fs::is_symlink(old)) {
      return link.string() + " exists and is not gprof-run's link: TensorBoard reads that file, "
             "not " + trace.filename().string();
    }
    fs::remove(link, ec);
  }
  fs::create_symlink(fs::path("..") / trace.filename(), link, ec);
  if (ec) {
    return "cannot link " + link.string() + " to " + trace.filename().string() + " (" +
           ec.message() + "): `tensorboard --logdir` will not list this trace";
  }
  return "";
}

void UnlinkTraceForTensorBoard(const std::string& worker, const std::string& trace_path) {
  namespace fs = std::filesystem;
  const fs::path link =
      fs::path(trace_path).parent_path() / kTensorBoardDir / TensorBoardLinkName(worker, trace_path);
  std::error_code ec;
  if (fs::is_symlink(fs::symlink_status(link, ec))) fs::remove(link, ec);
}

}  // namespace gprof::launcher
