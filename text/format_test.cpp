// Unit tests: time and percentage formatting as torch prints them, trace microseconds and derived
// decimals (JsonWriter::Decimal).
#include "text/format.h"
#include "text/json_writer.h"

#include <gtest/gtest.h>

namespace gprof {
namespace {

TEST(FormatDuration, MicrosecondsBelowOneMillisecond) {
  EXPECT_EQ(FormatDuration(0), "0.000us");
  EXPECT_EQ(FormatDuration(1), "0.001us");
  EXPECT_EQ(FormatDuration(1234), "1.234us");
  EXPECT_EQ(FormatDuration(999'999), "999.999us");
}

TEST(FormatDuration, MillisecondsRoundedToMicroseconds) {
  EXPECT_EQ(FormatDuration(1'000'000), "1.000ms");
  EXPECT_EQ(FormatDuration(1'234'499), "1.234ms");
  EXPECT_EQ(FormatDuration(1'234'500), "1.235ms");
  EXPECT_EQ(FormatDuration(999'999'499), "999.999ms");
}

TEST(FormatDuration, SecondsAtAndAboveOneSecond) {
  EXPECT_EQ(FormatDuration(1'000'000'000), "1.000s");
  EXPECT_EQ(FormatDuration(61'234'567'890), "61.235s");
}

TEST(FormatPercent, TwoDecimalsAndNaNForEmptyTotal) {
  EXPECT_EQ(FormatPercent(1, 3), "33.33%");
  EXPECT_EQ(FormatPercent(2, 3), "66.67%");
  EXPECT_EQ(FormatPercent(5, 5), "100.00%");
  EXPECT_EQ(FormatPercent(0, 5), "0.00%");
  EXPECT_EQ(FormatPercent(0, 0), "NaN");
  // Large values do not overflow.
  EXPECT_EQ(FormatPercent(uint64_t{1} << 62, uint64_t{1} << 63), "50.00%");
}

TEST(FormatMicros, NanosecondExactWithTrailingZerosLeftOut) {
  char buf[32];
  EXPECT_EQ(std::string(buf, FormatMicros(0, buf)), "0");
  EXPECT_EQ(std::string(buf, FormatMicros(7, buf)), "0.007");
  EXPECT_EQ(std::string(buf, FormatMicros(70, buf)), "0.07");
  EXPECT_EQ(std::string(buf, FormatMicros(700, buf)), "0.7");
  EXPECT_EQ(std::string(buf, FormatMicros(1'234'567, buf)), "1234.567");
  EXPECT_EQ(std::string(buf, FormatMicros(1'234'560, buf)), "1234.56");
  EXPECT_EQ(std::string(buf, FormatMicros(1'234'507, buf)), "1234.507");
  EXPECT_EQ(std::string(buf, FormatMicros(1'234'000, buf)), "1234");
  // An epoch-sized value keeps nanosecond precision (a double would not).
  EXPECT_EQ(std::string(buf, FormatMicros(1'700'000'000'123'456'789ull, buf)),
            "1700000000123456.789");
}

void AppendTo(void* ctx, const char* data, size_t size) {
  static_cast<std::string*>(ctx)->append(data, size);
}

TEST(JsonWriterDecimal, RoundedThenTrailingZerosAndPointLeftOut) {
  std::string text;
  {
    JsonWriter w(JsonSink{&text, AppendTo});
    w.Decimal(4.0, 2).Char(' ').Decimal(2.5, 2).Char(' ').Decimal(2.666, 2).Char(' ');
    w.Decimal(100.0, 3).Char(' ').Decimal(0.0, 2).Char(' ').Decimal(10.004, 2);
    w.Close();
  }
  EXPECT_EQ(text, "4 2.5 2.67 100 0 10");
}

}  // namespace
}  // namespace gprof
