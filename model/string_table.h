// StringTable: interns strings to dense ids. Id 0 is always the empty string. Not thread-safe:
// the collector interns off the hot path (at registration time or while building a Profile).
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gprof {

using StringId = uint32_t;

class StringTable {
 public:
  StringTable();
  StringTable(const StringTable&) = delete;
  StringTable& operator=(const StringTable&) = delete;
  StringTable(StringTable&& other) noexcept;
  StringTable& operator=(StringTable&& other) noexcept;

  StringId Intern(std::string_view s);
  // Returns the string for `id`, or "" when out of range.
  std::string_view Get(StringId id) const;
  size_t size() const { return views_.size(); }

 private:
  void Rebuild();
  std::deque<std::string> storage_;  // deque: stable addresses for the views
  std::vector<std::string_view> views_;
  std::unordered_map<std::string_view, StringId> index_;
};

}  // namespace gprof
