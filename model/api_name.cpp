// BaseApiName / DisplayApiName (see api_name.h).
#include "model/api_name.h"

#include <algorithm>
#include <cstddef>

namespace gprof {

std::string_view DisplayApiName(std::string_view name) {
  size_t v = name.rfind("_v");
  if (v != std::string_view::npos && v + 2 < name.size() &&
      std::all_of(name.begin() + static_cast<std::ptrdiff_t>(v) + 2, name.end(),
                  [](char c) { return c >= '0' && c <= '9'; })) {
    name = name.substr(0, v);
  }
  return name;
}

std::string_view BaseApiName(std::string_view name) {
  name = DisplayApiName(name);
  for (std::string_view suffix : {"_ptsz", "_ptds"}) {
    if (name.size() > suffix.size() && name.substr(name.size() - suffix.size()) == suffix) {
      name = name.substr(0, name.size() - suffix.size());
    }
  }
  return name;
}

}  // namespace gprof
