// Replays fuzz inputs without libFuzzer: the main of each fuzz target's `_replay` build (ctest
// fuzz_corpus_replay_<target>, label fuzz), linked with the target's LLVMFuzzerTestOneInput.
// Every file named, or found directly in a directory named, is one input; a broken invariant
// aborts (fuzz/fuzz_check.h) and fails the test. No input at all fails too: a corpus that
// vanished must not pass.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  std::vector<std::filesystem::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path arg(argv[i]);
    if (std::filesystem::is_directory(arg)) {
      for (const auto& entry : std::filesystem::directory_iterator(arg)) {
        if (entry.is_regular_file()) inputs.push_back(entry.path());
      }
    } else {
      inputs.push_back(arg);
    }
  }
  size_t replayed = 0;
  for (const std::filesystem::path& path : inputs) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "replay: cannot read %s\n", path.c_str());
      return 1;
    }
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::printf("replay: %s (%zu bytes)\n", path.c_str(), bytes.size());
    std::fflush(stdout);
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    ++replayed;
  }
  if (replayed == 0) {
    std::fprintf(stderr, "replay: no input found: the corpus is empty or missing\n");
    return 1;
  }
  std::printf("replay: %zu inputs, every invariant held\n", replayed);
  return 0;
}
