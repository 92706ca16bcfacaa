#include "model/string_table.h"

namespace gprof {

StringTable::StringTable() { Intern(""); }

StringTable::StringTable(StringTable&& other) noexcept { *this = std::move(other); }

StringTable& StringTable::operator=(StringTable&& other) noexcept {
  // std::deque's move keeps element addresses, so the views and index stay valid.
  storage_ = std::move(other.storage_);
  views_ = std::move(other.views_);
  index_ = std::move(other.index_);
  other.Rebuild();
  return *this;
}

void StringTable::Rebuild() {
  storage_.clear();
  views_.clear();
  index_.clear();
  Intern("");
}

StringId StringTable::Intern(std::string_view s) {
  if (auto it = index_.find(s); it != index_.end()) return it->second;
  const std::string& stored = storage_.emplace_back(s);
  const auto id = static_cast<StringId>(views_.size());
  views_.push_back(stored);
  index_.emplace(views_.back(), id);
  return id;
}

std::string_view StringTable::Get(StringId id) const {
  return id < views_.size() ? views_[id] : std::string_view();
}

}  // namespace gprof
