// libFuzzer target: the GPROF_* parser (config/config.h ParseConfig) and the rank variables
// (config/rank_env.h), on environments made from the input: lines "KEY=VALUE", keys drawn from
// the real key table's names when the line starts with a digit (so values of real keys are
// fuzzed), otherwise taken as written. Any crash or sanitizer report is a bug: the library parses
// whatever environment the program was started with.
// Invariants, not only "no crash" (fuzz/fuzz_check.h), each a promise of config.h / rank_env.h:
//  - ParseConfig reads only GPROF_* keys: every error names a GPROF_ key, says what is allowed,
//    and FormatError names the key; the key is one the environment set, with its value, or a
//    companion that a set key needs and the environment lacks (GPROF_CAPTURE_RANGE=nvtx without
//    GPROF_NVTX_CAPTURE), with an empty value;
//  - it is pure: the same environment parses to the same errors and warnings;
//  - a rank and a world size are -1 (unknown) or what the variable said (>= 0); RankLabel is ""
//    exactly when the rank is unknown, else digits only.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "config/config.h"
#include "config/rank_env.h"
#include "fuzz/fuzz_check.h"

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
  for (const gprof::ConfigError& e : r.errors) {
    GPROF_FUZZ_CHECK(e.key.rfind("GPROF_", 0) == 0);
    const auto it = env.find(e.key);
    GPROF_FUZZ_CHECK(it != env.end() ? e.value == it->second : e.value.empty());
    GPROF_FUZZ_CHECK(!e.message.empty());
    GPROF_FUZZ_CHECK(gprof::FormatError(e).find(e.key) != std::string::npos);
  }
  const gprof::ParseResult again = gprof::ParseConfig(env);
  GPROF_FUZZ_CHECK(again.errors.size() == r.errors.size());
  for (size_t i = 0; i < r.errors.size(); ++i) {
    GPROF_FUZZ_CHECK(again.errors[i].key == r.errors[i].key &&
                     again.errors[i].message == r.errors[i].message);
  }
  GPROF_FUZZ_CHECK(again.warnings == r.warnings);
  int32_t rank = 0, world = 0;
  gprof::RankFromEnv(env, &rank, &world);
  GPROF_FUZZ_CHECK(rank >= -1 && world >= -1);
  const std::string label = gprof::RankLabel(rank, world);
  GPROF_FUZZ_CHECK(label.empty() == (rank < 0));
  for (char c : label) GPROF_FUZZ_CHECK(c >= '0' && c <= '9');
  return 0;
}
