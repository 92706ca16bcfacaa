// The directories of a PATH-style list, as execvp reads them: split at ':', an empty element
// means the current directory, an unset or empty list means /usr/local/bin:/usr/bin:/bin. Used
// by the launcher (finding the program to run) and the collector (finding the interpreter named
// by argv[0]). Pure; allocation only for the strings handed to `f`.
#pragma once

#include <string>
#include <string_view>

namespace gprof {

inline constexpr std::string_view kDefaultSearchPath = "/usr/local/bin:/usr/bin:/bin";

// Calls f(dir) for each directory in order ("" for an empty element: the current directory);
// stops early when f returns true. Returns whether it stopped early.
template <typename F>
bool ForEachSearchDir(std::string_view list, F&& f) {
  if (list.empty()) list = kDefaultSearchPath;
  size_t start = 0;
  while (start <= list.size()) {
    size_t colon = list.find(':', start);
    if (colon == std::string_view::npos) colon = list.size();
    if (f(std::string(list.substr(start, colon - start)))) return true;
    start = colon + 1;
  }
  return false;
}

}  // namespace gprof
