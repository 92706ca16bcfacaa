// "Did you mean" and the bare optional-value hint (see flag_suggest.h). Launcher process only.
#include "launcher/cli/flag_suggest.h"

#include <algorithm>

#include "launcher/child_process.h"

namespace gprof::launcher {
namespace {

// Levenshtein distance (insert, delete, substitute; a swap of neighbours counts 1, as in
// Damerau's restricted form: "--row-limti" is one slip, not two).
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

bool IsWholeNumber(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

std::string DidYouMean(std::string_view wrong, const std::vector<std::string_view>& known) {
  while (!wrong.empty() && wrong.front() == '-') wrong.remove_prefix(1);
  if (wrong.empty()) return "";
  // At most 2 edits, and fewer than a third of the name: "--out" is not "--quiet".
  const size_t limit = std::min<size_t>(2, std::max<size_t>(1, wrong.size() / 3));
  std::string_view best;
  size_t best_distance = limit + 1;
  for (std::string_view k : known) {
    const size_t distance = EditDistance(wrong, k);
    if (distance < best_distance) {
      best = k;
      best_distance = distance;
    }
  }
  return best.empty() ? "" : " (did you mean --" + std::string(best) + "?)";
}

std::vector<std::string_view> FlagsInUsage(std::string_view usage) {
  std::vector<std::string_view> flags;
  for (size_t pos = usage.find("--"); pos != std::string_view::npos;
       pos = usage.find("--", pos + 2)) {
    size_t end = pos + 2;
    while (end < usage.size() &&
           ((usage[end] >= 'a' && usage[end] <= 'z') || usage[end] == '-' ||
            (usage[end] >= '0' && usage[end] <= '9'))) {
      ++end;
    }
    const std::string_view name = usage.substr(pos + 2, end - pos - 2);
    if (!name.empty() && std::find(flags.begin(), flags.end(), name) == flags.end()) {
      flags.push_back(name);
    }
    pos = end - 2;
  }
  return flags;
}

std::string BareOptionalValueHint(std::string_view shown, std::string_view value_name,
                                  const std::string& next, const std::string& path_env) {
  if (value_name.empty() || value_name[0] != '[' || !IsWholeNumber(next)) return "";
  std::string path;
  int exit_code = 0;
  if (ResolveProgram(next, path_env, &path, &exit_code).empty()) return "";  // a real program
  std::string what(value_name.substr(value_name.find('=') + 1));
  if (!what.empty() && what.back() == ']') what.pop_back();
  if (what == "HZ") what = "rate";
  const std::string flag(shown);
  return flag + " takes its " + what + " as " + flag + "=" + next + " (a separate word is the " +
         "program to run, and there is no program " + next + "); the program was not started";
}

}  // namespace gprof::launcher
