// Which commands are Python programs (see python_program.h). Launcher process only.
#include "launcher/python/python_program.h"

#include <fstream>

namespace gprof::launcher {
namespace {

std::string_view Basename(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::vector<std::string_view> Words(std::string_view line) {
  std::vector<std::string_view> words;
  size_t pos = 0;
  while (pos < line.size()) {
    while (pos < line.size() && (line[pos] == ' ' || line[pos] == '\t')) ++pos;
    size_t end = pos;
    while (end < line.size() && line[end] != ' ' && line[end] != '\t') ++end;
    if (end > pos) words.push_back(line.substr(pos, end - pos));
    pos = end;
  }
  return words;
}

// Line `n` (0-based) of `text`, without its "\n" or "\r\n".
std::string_view Line(std::string_view text, int n) {
  size_t start = 0;
  for (int i = 0; i < n; ++i) {
    const size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) return {};
    start = nl + 1;
  }
  std::string_view line = text.substr(start, text.find('\n', start) - start);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

// The command env(1) runs for these arguments: options (and the argument of -u/-C/-P) and
// NAME=VALUE assignments are skipped; "-S" splitting needs nothing more, the words are split.
std::string_view EnvCommand(const std::vector<std::string_view>& args, size_t first) {
  for (size_t i = first; i < args.size(); ++i) {
    const std::string_view a = args[i];
    if (a == "-u" || a == "-C" || a == "-P") {
      ++i;
    } else if (a == "--") {
      return i + 1 < args.size() ? args[i + 1] : std::string_view();
    } else if (!a.empty() && a[0] == '-') {
      continue;
    } else if (a.find('=') != std::string_view::npos) {
      continue;
    } else {
      return a;
    }
  }
  return {};
}

bool ShebangNamesPython(std::string_view head) {
  const std::string_view first = Line(head, 0);
  if (first.substr(0, 2) != "#!") return false;
  const std::vector<std::string_view> words = Words(first.substr(2));
  if (words.empty()) return false;
  const std::string_view interpreter = Basename(words[0]);
  if (IsPythonInterpreterName(interpreter)) return true;
  if (interpreter == "env") return IsPythonInterpreterName(Basename(EnvCommand(words, 1)));
  if (interpreter == "sh") {
    // pip/distlib's script header when the interpreter path is too long for a shebang:
    //   #!/bin/sh
    //   '''exec' /very/long/venv/bin/python3 "$0" "$@"
    const std::string_view second = Line(head, 1);
    constexpr std::string_view kExec = "'''exec' ";
    if (second.substr(0, kExec.size()) != kExec) return false;
    const std::vector<std::string_view> cmd = Words(second.substr(kExec.size()));
    return !cmd.empty() && IsPythonInterpreterName(Basename(cmd[0]));
  }
  return false;
}

}  // namespace

bool IsPythonInterpreterName(std::string_view name) {
  constexpr std::string_view kPython = "python";
  if (name.substr(0, kPython.size()) != kPython) return false;
  std::string_view rest = name.substr(kPython.size());
  if (!rest.empty() && (rest.back() == 'd' || rest.back() == 'm' || rest.back() == 't' ||
                        rest.back() == 'w')) {
    rest.remove_suffix(1);
  }
  for (char c : rest) {
    if ((c < '0' || c > '9') && c != '.') return false;
  }
  return true;
}

bool IsPythonProgram(const std::vector<std::string>& argv, std::string_view head) {
  if (argv.empty()) return false;
  const std::string_view name = Basename(argv[0]);
  if (IsPythonInterpreterName(name)) return true;
  if (name == "torchrun" || name == "deepspeed" || name == "accelerate-launch") return true;
  if (name == "accelerate" && argv.size() > 1 && argv[1] == "launch") return true;
  return ShebangNamesPython(head);
}

std::string ReadProgramHead(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::string head(kProgramHeadBytes, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  return head;
}

std::string PrependPythonPath(const std::string& hook_dir, const std::string& existing) {
  if (existing.empty()) return hook_dir;
  if (existing == hook_dir || existing.starts_with(hook_dir + ":")) return existing;
  return hook_dir + ":" + existing;
}

}  // namespace gprof::launcher
