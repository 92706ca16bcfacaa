// The control channel's socket directory and message lines (see control_channel.h).
#include "model/control_channel.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace gprof::control {

std::string SocketDirFor(const char* xdg, unsigned uid) {
  if (xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/gprof-run";
  return "/tmp/gprof-run-" + std::to_string(uid);
}

std::string SocketDir() { return SocketDirFor(std::getenv("XDG_RUNTIME_DIR"), ::geteuid()); }

std::string CheckSocketDir(const std::string& dir, bool* missing) {
  *missing = false;
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    if (errno == ENOENT) {
      *missing = true;
      return "";
    }
    return "cannot use the session directory " + dir + ": " + std::strerror(errno);
  }
  if (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode)) {
    return "the session directory " + dir + " is not a directory (a link or a file is there); "
           "remove it";
  }
  if (st.st_uid != ::geteuid()) {
    return "the session directory " + dir + " belongs to uid " + std::to_string(st.st_uid) +
           ", not to you (uid " + std::to_string(::geteuid()) + "); remove it";
  }
  if ((st.st_mode & 077) != 0) {
    return "the session directory " + dir + " is open to other users (mode " +
           std::to_string((st.st_mode >> 6) & 7) + std::to_string((st.st_mode >> 3) & 7) +
           std::to_string(st.st_mode & 7) + "); run chmod 700 " + dir;
  }
  return "";
}

std::string EnsureSocketDir(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return "cannot create the session directory " + dir + ": " + std::strerror(errno);
  }
  bool missing = false;
  std::string why = CheckSocketDir(dir, &missing);
  if (why.empty() && missing) why = "the session directory " + dir + " vanished";
  return why;
}

std::string SocketPath(const std::string& dir, long pid) {
  return dir + "/" + std::to_string(pid) + ".sock";
}

long SocketPid(std::string_view name) {
  constexpr std::string_view kSuffix = ".sock";
  if (name.size() <= kSuffix.size() || name.size() > kSuffix.size() + 10 ||
      name.substr(name.size() - kSuffix.size()) != kSuffix) {
    return -1;
  }
  long pid = 0;
  for (char c : name.substr(0, name.size() - kSuffix.size())) {
    if (c < '0' || c > '9') return -1;
    pid = pid * 10 + (c - '0');
  }
  return pid > 0 ? pid : -1;
}

std::string Message::Get(const std::string& key) const {
  const auto it = fields.find(key);
  return it == fields.end() ? std::string() : it->second;
}

namespace {

void Escape(std::string_view text, std::string* out) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (char c : text) {
    if (c == '%' || c == '\t' || c == '\n' || c == '\r') {
      const auto u = static_cast<unsigned char>(c);
      *out += '%';
      *out += kHex[u >> 4];
      *out += kHex[u & 15];
    } else {
      *out += c;
    }
  }
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

bool Unescape(std::string_view text, std::string* out) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      *out += text[i];
      continue;
    }
    const int hi = i + 1 < text.size() ? HexDigit(text[i + 1]) : -1;
    const int lo = i + 2 < text.size() ? HexDigit(text[i + 2]) : -1;
    if (hi < 0 || lo < 0) return false;
    *out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return true;
}

}  // namespace

std::string EncodeMessage(const Message& m) {
  std::string out;
  Escape(m.verb, &out);
  for (const auto& [key, value] : m.fields) {
    out += '\t';
    Escape(key, &out);
    out += '=';
    Escape(value, &out);
  }
  out += '\n';
  return out;
}

bool DecodeMessage(std::string_view line, Message* m) {
  *m = Message{};
  size_t start = 0;
  bool first = true;
  while (start <= line.size()) {
    size_t end = line.find('\t', start);
    if (end == std::string_view::npos) end = line.size();
    const std::string_view part = line.substr(start, end - start);
    if (first) {
      if (part.empty() || part.find('=') != std::string_view::npos ||
          !Unescape(part, &m->verb)) {
        return false;
      }
      first = false;
    } else {
      const size_t eq = part.find('=');
      std::string key, value;
      if (eq == 0 || eq == std::string_view::npos || !Unescape(part.substr(0, eq), &key) ||
          !Unescape(part.substr(eq + 1), &value) || !m->fields.emplace(key, value).second) {
        return false;
      }
    }
    start = end + 1;
  }
  return true;
}

}  // namespace gprof::control
