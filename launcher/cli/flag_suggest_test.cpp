// Unit tests for "did you mean" and the flag names read from a usage text (flag_suggest.h).
#include "launcher/cli/flag_suggest.h"

#include <gtest/gtest.h>

namespace gprof::launcher {
namespace {

TEST(FlagSuggest, DidYouMeanPicksTheClosestWithinTwoEdits) {
  const std::vector<std::string_view> known = {"format", "report", "by-step"};
  EXPECT_EQ(DidYouMean("--fromat", known), " (did you mean --format?)");  // a swap
  EXPECT_EQ(DidYouMean("--repot", known), " (did you mean --report?)");   // a deletion
  EXPECT_EQ(DidYouMean("--by-steps", known), " (did you mean --by-step?)");
  EXPECT_EQ(DidYouMean("--bogus", known), "");
  // A short name allows one edit only: "--out" (3 letters) is not "--quiet" nor "--output".
  EXPECT_EQ(DidYouMean("--out", {"quiet", "output"}), "");
}

TEST(FlagSuggest, FlagsInUsageListsEachLongFlagOnce) {
  const std::vector<std::string_view> flags =
      FlagsInUsage("Usage: gprof-run stats PATH [--report NAME]... [--format table|csv]\n"
                   "  --report NAME  ... --by-step\n");
  EXPECT_EQ(flags, (std::vector<std::string_view>{"report", "format", "by-step"}));
}

}  // namespace
}  // namespace gprof::launcher
