// --cpu-sampling's files beside a rendered dump (cpu_sample_files.h). Launcher process only.
#include "launcher/render/cpu_sample_files.h"

#include "model/output_file.h"

namespace gprof::launcher {

std::unique_ptr<CpuSampleNames> WriteCpuFolded(const Profile& profile, const std::string& dir,
                                               const std::string& stem,
                                               std::vector<std::string>* outputs, std::FILE* err) {
  if (profile.cpu_samples.empty()) return nullptr;
  auto names = std::make_unique<CpuSampleNames>(NameCpuSamples(profile));
  const std::string path = dir + "/" + stem + ".cpu.folded";
  if (WriteOutputFile(path, FoldedCpuStacks(profile, *names), /*create_dirs=*/false).empty()) {
    outputs->push_back(path);
  } else {
    std::fprintf(err, "gprof-run: warning: cannot write %s\n", path.c_str());
  }
  return names;
}

}  // namespace gprof::launcher
