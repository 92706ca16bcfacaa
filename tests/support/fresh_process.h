// Runs a test body in a fresh process (GoogleTest's "threadsafe" death tests re-execute the test
// binary for just this statement: a plain fork would inherit the parent's state), for tests that need
// process-wide state the product creates exactly once (the host event arena: InitThreadBuffers is
// once-only, as the injection library's init is). The child exits 0 when the body had no failure;
// any failure inside it fails the test, with the child's output in the message. ASSERT_* inside
// the body return from the body only.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>

namespace gprof::testing {

template <typename Body>
void InFreshProcess(Body body) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        body();
        std::exit(::testing::Test::HasFailure() ? 1 : 0);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace gprof::testing
