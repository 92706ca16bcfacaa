// UTF-8 helpers shared by the exporters (offline code, launcher process only; may allocate).
// Names recorded by the profiled program are arbitrary bytes: the trace writer and the table
// must never emit invalid UTF-8, and the trace checker must find it in files written by others.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gprof {

// Length of the valid UTF-8 sequence starting at s[i], or 0 when the bytes there are not valid
// UTF-8 (overlong forms, surrogates and code points above U+10FFFF are invalid).
size_t Utf8SequenceLength(std::string_view s, size_t i);

// `s` with every invalid byte replaced by U+FFFD (one replacement per invalid byte).
std::string RepairUtf8(std::string_view s);

}  // namespace gprof
