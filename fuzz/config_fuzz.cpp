// libFuzzer target: the GPROF_* parser (config/config.h ParseConfig) and the rank variables
// (config/rank_env.h), on environments made from the input: lines "KEY=VALUE", keys drawn from
// the real key table's names when the line starts with a digit (so values of real keys are
// fuzzed), otherwise taken as written. Any crash or sanitizer report is a bug: the library parses
// whatever environment the program was started with.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "config/config.h"
#include "config/rank_env.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const char* const kKeys[] = {
      "GPROF_OUTPUT_DIR", "GPROF_LOG_LEVEL", "GPROF_CUDA", "GPROF_NVTX", "GPROF_API_FILTER",
      "GPROF_ACTIVITY_BUFFER_KIB", "GPROF_ACTIVITY_POOL", "GPROF_HOST_BUFFER_MIB",
      "GPROF_SCHEDULE", "GPROF_STEP", "GPROF_CAPTURE_RANGE", "GPROF_NVTX_CAPTURE",
      "GPROF_CAPTURE_RANGE_END", "GPROF_DELAY", "GPROF_DURATION", "GPROF_RECORD_SHAPES",
      "GPROF_TORCH_OPS", "GPROF_TORCH_ITT", "GPROF_TORCH_STEPS", "RANK", "WORLD_SIZE",
      "OMPI_COMM_WORLD_RANK", "SLURM_NTASKS"};
  std::map<std::string, std::string> env;
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  while (!rest.empty()) {
    const size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    std::string key(line.substr(0, eq));
    if (!key.empty() && key[0] >= '0' && key[0] <= '9') {
      key = kKeys[static_cast<size_t>(key[0] - '0') * 3 % (sizeof kKeys / sizeof kKeys[0])];
    }
    env[key] = std::string(line.substr(eq + 1));
  }
  const gprof::ParseResult r = gprof::ParseConfig(env);
  for (const gprof::ConfigError& e : r.errors) (void)gprof::FormatError(e);
  int32_t rank = 0, world = 0;
  gprof::RankFromEnv(env, &rank, &world);
  (void)gprof::RankLabel(rank, world);
  return 0;
}
