#include "model/string_table.h"

#include <gtest/gtest.h>

namespace gprof {
namespace {

TEST(StringTable, EmptyStringIsIdZeroAndInterningIsStable) {
  StringTable t;
  EXPECT_EQ(t.Intern(""), 0u);
  const StringId a = t.Intern("forward");
  const StringId b = t.Intern("backward");
  EXPECT_NE(a, b);
  EXPECT_EQ(t.Intern("forward"), a);
  EXPECT_EQ(t.Get(a), "forward");
  EXPECT_EQ(t.Get(b), "backward");
  EXPECT_EQ(t.Get(999), "");
}

TEST(StringTable, ViewsSurviveGrowthAndMove) {
  StringTable t;
  const StringId first = t.Intern("first");
  for (int i = 0; i < 10000; ++i) t.Intern("s" + std::to_string(i));
  StringTable moved = std::move(t);
  EXPECT_EQ(moved.Get(first), "first");
  EXPECT_EQ(moved.Intern("s9999"), moved.size() - 1);
  EXPECT_EQ(moved.Intern("first"), first);
}

}  // namespace
}  // namespace gprof
