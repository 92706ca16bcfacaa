// Help for a mistyped command line: "did you mean --X?" for a misspelled flag, and the hint for a
// flag whose optional value was given as a separate word. Launcher process only.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gprof::launcher {

// " (did you mean --X?)" when one of `known` (long names without "--") is within a small edit
// distance of `wrong` (the flag as written, with its dashes, without "=value"), else "".
std::string DidYouMean(std::string_view wrong, const std::vector<std::string_view>& known);

// The long flag names ("--name", without the dashes) that a usage text mentions: a subcommand's
// usage string is its flag list.
std::vector<std::string_view> FlagsInUsage(std::string_view usage);

// A flag that takes its value only as --flag=VALUE (`value_name` "[=...]"), written bare and
// followed by `next`: when `next` parses as a value (a whole number) and is no program that exists
// (as a path, or on `path_env`), the message "--flag takes its ... as --flag=NEXT"; else "".
std::string BareOptionalValueHint(std::string_view shown, std::string_view value_name,
                                  const std::string& next, const std::string& path_env);

}  // namespace gprof::launcher
