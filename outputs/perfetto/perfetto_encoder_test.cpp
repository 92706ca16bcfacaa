// Unit tests: the protobuf wire encoding used by the Perfetto writer (varints, keys, fixed64,
// strings, nested messages with one- and multi-byte lengths).
#include <gtest/gtest.h>

#include <string>

#include "outputs/perfetto/perfetto_encoder.h"

namespace gprof::proto {
namespace {

std::string Bytes(std::initializer_list<int> b) {
  std::string s;
  for (int c : b) s.push_back(static_cast<char>(c));
  return s;
}

std::string VarintBytes(uint64_t v) {
  uint8_t buf[kMaxVarintSize];
  return std::string(reinterpret_cast<char*>(buf), PutVarint(buf, v) - buf);
}

TEST(ProtoVarint, SevenBitsPerByteLowFirstWithContinuationBits) {
  EXPECT_EQ(VarintBytes(0), Bytes({0x00}));
  EXPECT_EQ(VarintBytes(1), Bytes({0x01}));
  EXPECT_EQ(VarintBytes(127), Bytes({0x7f}));
  EXPECT_EQ(VarintBytes(128), Bytes({0x80, 0x01}));
  EXPECT_EQ(VarintBytes(300), Bytes({0xac, 0x02}));  // the protobuf documentation's example
  EXPECT_EQ(VarintBytes(16384), Bytes({0x80, 0x80, 0x01}));
  EXPECT_EQ(VarintBytes(UINT64_MAX),
            Bytes({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}));
  for (uint64_t v : std::initializer_list<uint64_t>{0, 127, 128, 16383, 16384, 1ull << 35,
                                                    1700000000000000000ull, UINT64_MAX}) {
    EXPECT_EQ(VarintSize(v), VarintBytes(v).size()) << v;
  }
}

TEST(ProtoEncoder, KeysCarryFieldNumberAndWireType) {
  ProtoEncoder e;
  e.AddVarint(1, 150);  // field 1, varint: key 0x08
  EXPECT_EQ(e.view(), Bytes({0x08, 0x96, 0x01}));
  e.clear();
  e.AddVarint(60, 1);  // field 60 needs a two-byte key: 60 << 3 = 480
  EXPECT_EQ(e.view(), Bytes({0xe0, 0x03, 0x01}));
  e.clear();
  e.AddFixed64(47, 0x0102030405060708ull);  // fixed64: wire type 1, little-endian
  EXPECT_EQ(e.view(), Bytes({0xf9, 0x02, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01}));
  e.clear();
  e.AddBytes(2, "hi");
  EXPECT_EQ(e.view(), Bytes({0x12, 0x02, 'h', 'i'}));
  e.clear();
  e.AddBool(2, true);
  EXPECT_EQ(e.view(), Bytes({0x10, 0x01}));
}

TEST(ProtoEncoder, NegativeIntsAreTenByteTwosComplement) {
  ProtoEncoder e;
  e.AddInt(12, -1);
  EXPECT_EQ(e.view(), Bytes({0x60, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}));
}

TEST(ProtoEncoder, DoubleIsLittleEndianIeee) {
  ProtoEncoder e;
  e.AddDouble(5, 1.0);  // 0x3ff0000000000000
  EXPECT_EQ(e.view(), Bytes({0x29, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f}));
}

TEST(ProtoEncoder, NestedMessagesGetTheirExactLength) {
  ProtoEncoder e;
  const size_t outer = e.BeginNested(1);
  e.AddVarint(8, 5);
  const size_t inner = e.BeginNested(11);
  e.AddVarint(9, 1);
  e.EndNested(inner);
  e.EndNested(outer);
  // 0a <len 6> | 40 05 | 5a <len 2> 48 01
  EXPECT_EQ(e.view(), Bytes({0x0a, 0x06, 0x40, 0x05, 0x5a, 0x02, 0x48, 0x01}));
}

TEST(ProtoEncoder, LongNestedBodiesMoveUpForMultiByteLengths) {
  for (size_t n : {125u, 126u, 127u, 128u, 300u, 20000u}) {
    ProtoEncoder e;
    const size_t outer = e.BeginNested(1);
    const size_t inner = e.BeginNested(2);
    const std::string body(n, 'x');
    e.AddBytes(3, body);
    e.EndNested(inner);
    e.EndNested(outer);

    ProtoEncoder field3;
    field3.AddBytes(3, body);
    ProtoEncoder msg2;
    msg2.AddMessage(2, field3.view());
    ProtoEncoder expected;
    expected.AddMessage(1, msg2.view());
    EXPECT_EQ(e.view(), expected.view()) << n;
    // And by hand: key, minimal varint length, body.
    const std::string v = std::string(e.view());
    EXPECT_EQ(v.substr(0, 1 + VarintSize(msg2.size())),
              Bytes({0x0a}) + VarintBytes(msg2.size()))
        << n;
  }
}

TEST(ProtoEncoder, ClearStartsAnEmptyMessage) {
  ProtoEncoder e;
  e.AddVarint(1, 1);
  e.clear();
  EXPECT_EQ(e.size(), 0u);
  e.AddVarint(2, 2);
  EXPECT_EQ(e.view(), Bytes({0x10, 0x02}));
}

}  // namespace
}  // namespace gprof::proto
