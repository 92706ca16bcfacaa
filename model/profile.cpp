// Profile's constructor and its consistency check (see profile.h).
#include "model/profile.h"

#include <string>

namespace gprof {

Profile::Profile() { domains.push_back(kNoString); }

std::string CheckProfileReferences(const Profile& p) {
  const size_t strings = p.strings.size();
  const auto bad_string = [&](StringId id) { return id != kNoString && id >= strings; };
  const auto fail = [](const char* what, size_t i) {
    return std::string(what) + " " + std::to_string(i) + " refers to something the profile does "
           "not have";
  };
  for (size_t i = 0; i < p.domains.size(); ++i) {
    if (bad_string(p.domains[i])) return fail("domain", i);
  }
  const size_t domains = p.domains.empty() ? 1 : p.domains.size();
  for (size_t i = 0; i < p.ranges.size(); ++i) {
    const HostRange& r = p.ranges[i];
    if (bad_string(r.name) || bad_string(r.shapes) || r.domain >= domains) return fail("range", i);
  }
  for (size_t i = 0; i < p.marks.size(); ++i) {
    if (bad_string(p.marks[i].name) || p.marks[i].domain >= domains) return fail("mark", i);
  }
  for (size_t i = 0; i < p.threads.size(); ++i) {
    if (bad_string(p.threads[i].name)) return fail("thread", i);
  }
  for (size_t i = 0; i < p.devices.size(); ++i) {
    if (bad_string(p.devices[i].name)) return fail("device", i);
  }
  for (size_t i = 0; i < p.api_names.size(); ++i) {
    if (bad_string(p.api_names[i].name)) return fail("API name", i);
  }
  for (size_t i = 0; i < p.kernels.size(); ++i) {
    // An unknown launch config is allowed: the exporters show such a kernel on device 0.
    if (bad_string(p.kernels[i].name)) return fail("kernel", i);
  }
  return "";
}

}  // namespace gprof
