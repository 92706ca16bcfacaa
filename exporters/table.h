// Table layout helpers behind RenderTable, exposed for unit tests (launcher process only).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gprof {

struct Profile;

inline constexpr size_t kMaxNameColumnWidth = 55;  // torch's MAX_NAME_COLUMN_WIDTH
inline constexpr size_t kMaxShapesColumnWidth = 80;  // torch's max_shapes_column_width
inline constexpr size_t kMaxSourceColumnWidth = 75;  // torch's max_src_column_width

// Name column width for these names: min(longest + 4, 55), as torch computes it.
size_t NameColumnWidth(const std::vector<std::string_view>& names);

// A name as it appears in the table: printable (invalid UTF-8 repaired, control characters shown
// as '?'), cut to width - 3 characters + "..." when longer than `width`.
std::string TableName(std::string_view name, size_t width);

// The lines after the footers: one per non-zero counter and one for a schedule window, each
// saying what it means for the profile.
std::vector<std::string> ProfileNotes(const Profile& profile);

}  // namespace gprof
