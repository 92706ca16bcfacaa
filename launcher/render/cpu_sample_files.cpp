// --cpu-sampling's files beside a rendered dump (cpu_sample_files.h). Launcher process only.
#include "launcher/render/cpu_sample_files.h"

#include "model/output_file.h"

namespace gprof::launcher {

std::unique_ptr<CpuSampleNames> WriteCpuFolded(const Profile& profile, const std::string& dir,
                                               const std::string& stem,
                                               std::vector<std::string>* outputs,
                                               std::string* notes, std::FILE* err,
                                               const std::string* run_folded,
                                               uint64_t run_samples) {
  const uint64_t samples = run_folded != nullptr ? run_samples : profile.cpu_samples.size();
  if (samples == 0) return nullptr;
  auto names = profile.cpu_samples.empty()
                   ? nullptr
                   : std::make_unique<CpuSampleNames>(NameCpuSamples(profile));
  const std::string path = dir + "/" + stem + ".cpu.folded";
  const std::string text =
      run_folded != nullptr ? *run_folded : FoldedCpuStacks(profile, *names);
  if (WriteOutputFile(path, text, /*create_dirs=*/false).empty()) {
    outputs->push_back(path);
    const CpuSampleCounters& c = profile.cpu_sample_counters;
    *notes += "gprof-run: " + path + ": " + std::to_string(samples) +
              " CPU samples at " + std::to_string(c.hz) + " Hz (" +
              CpuSampleBackendName(c.backend) + ")" +
              (c.dropped > 0 ? ", " + std::to_string(c.dropped) + " dropped" : "") + "\n";
  } else {
    std::fprintf(err, "gprof-run: warning: cannot write %s\n", path.c_str());
  }
  return names;
}

}  // namespace gprof::launcher
