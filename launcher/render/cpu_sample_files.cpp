// --cpu-sampling's files beside a rendered dump (cpu_sample_files.h). Launcher process only.
#include "launcher/render/cpu_sample_files.h"

#include "model/output_file.h"

namespace gprof::launcher {

std::unique_ptr<CpuSampleNames> WriteCpuFolded(const Profile& profile, const std::string& dir,
                                               const std::string& stem,
                                               std::vector<std::string>* outputs,
                                               std::string* notes, std::FILE* err) {
  if (profile.cpu_samples.empty()) return nullptr;
  auto names = std::make_unique<CpuSampleNames>(NameCpuSamples(profile));
  const std::string path = dir + "/" + stem + ".cpu.folded";
  if (WriteOutputFile(path, FoldedCpuStacks(profile, *names), /*create_dirs=*/false).empty()) {
    outputs->push_back(path);
    const CpuSampleCounters& c = profile.cpu_sample_counters;
    *notes += "gprof-run: " + path + ": " + std::to_string(profile.cpu_samples.size()) +
              " CPU samples at " + std::to_string(c.hz) + " Hz (" +
              CpuSampleBackendName(c.backend) + ")" +
              (c.dropped > 0 ? ", " + std::to_string(c.dropped) + " dropped" : "") + "\n";
  } else {
    std::fprintf(err, "gprof-run: warning: cannot write %s\n", path.c_str());
  }
  return names;
}

}  // namespace gprof::launcher
