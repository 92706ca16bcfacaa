// The byte reader of the fuzz targets that decode a structured input (activity_decoder_fuzz,
// nvtx_registry_fuzz): reads past the end give zeros, so every input is a valid program of
// operations and the fuzzer never wastes an execution on a rejected one.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace gprof::fuzz {

class FuzzReader {
 public:
  FuzzReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool empty() const { return at_ >= size_; }
  uint8_t Byte() { return at_ < size_ ? data_[at_++] : 0; }
  void Bytes(void* out, size_t n) {
    if (n == 0) return;
    const size_t have = at_ < size_ ? std::min(n, size_ - at_) : 0;
    if (have != 0) std::memcpy(out, data_ + at_, have);
    std::memset(static_cast<char*>(out) + have, 0, n - have);
    at_ += have;
  }
  template <typename T>
  T Get() {
    T v;
    Bytes(&v, sizeof v);
    return v;
  }
  // [u16 length % 2048][bytes]: the bytes, NUL-terminated (c_str()).
  std::string Text() {
    std::string s(Get<uint16_t>() % 2048, '\0');
    Bytes(s.data(), s.size());
    return s;
  }
  // [u16 units % 600][units]: the units and a terminating 0.
  std::vector<wchar_t> Wide() {
    std::vector<wchar_t> w(Get<uint16_t>() % 600 + 1, L'\0');
    Bytes(w.data(), (w.size() - 1) * sizeof(wchar_t));
    w.back() = L'\0';
    return w;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

}  // namespace gprof::fuzz
