// The argument loop the subcommands (report, stats) share: "--name=value" and "--name value"
// alike. Launcher process only.
//
//   SubcommandArgs a(args);
//   while (a.Next()) {
//     if (a.arg() == "--format") { if (!a.TakeValue()) ...; use(a.value()); }
//   }
#pragma once

#include <string>
#include <vector>

namespace gprof::launcher {

class SubcommandArgs {
 public:
  explicit SubcommandArgs(const std::vector<std::string>& args) : args_(args) {}

  // Moves to the next argument; false when there is none. arg() is it without an "=value" part.
  bool Next() {
    if (next_ >= args_.size()) return false;
    arg_ = args_[next_++];
    value_.clear();
    const size_t eq = arg_.find('=');
    has_value_ = arg_.rfind("--", 0) == 0 && eq != std::string::npos;
    if (has_value_) {
      value_ = arg_.substr(eq + 1);
      arg_.resize(eq);
    }
    return true;
  }
  // The current option's value: its "=value" part, or else the next argument (consumed). False
  // when it has neither.
  bool TakeValue() {
    if (has_value_) return true;
    if (next_ >= args_.size()) return false;
    value_ = args_[next_++];
    return true;
  }
  // Whether the option came as "--name=value" (for flags that take none).
  bool has_inline_value() const { return has_value_; }
  const std::string& arg() const { return arg_; }
  const std::string& value() const { return value_; }

 private:
  const std::vector<std::string>& args_;
  size_t next_ = 0;
  std::string arg_, value_;
  bool has_value_ = false;
};

}  // namespace gprof::launcher
