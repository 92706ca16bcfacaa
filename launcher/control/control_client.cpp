// Finding sessions and talking to them (see control_client.h).
#include "launcher/control/control_client.h"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace gprof::launcher {

ControlConnection::~ControlConnection() {
  if (fd_ >= 0) ::close(fd_);
}

std::string ControlConnection::Connect(const std::string& path, int timeout_ms) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) return "socket path too long: " + path;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return std::string("socket: ") + std::strerror(errno);
  // A Unix-domain connect either completes or fails at once (a full backlog: EAGAIN); retry
  // that until the timeout.
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    if (errno == ECONNREFUSED) refused_ = true;
    if (errno != EAGAIN && errno != EINTR) return std::strerror(errno);
    if (std::chrono::steady_clock::now() >= until) return "the session does not answer";
    ::usleep(10'000);
  }
  return "";
}

std::string ControlConnection::Send(const control::Message& request) {
  const std::string line = control::EncodeMessage(request);
  size_t at = 0;
  while (at < line.size()) {
    const ssize_t n = ::send(fd_, line.data() + at, line.size() - at, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::string("cannot send the request: ") + std::strerror(errno);
    at += static_cast<size_t>(n);
  }
  return "";
}

std::string ControlConnection::Read(control::Message* reply, int timeout_ms) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    if (const size_t nl = in_.find('\n'); nl != std::string::npos) {
      const std::string line = in_.substr(0, nl);
      in_.erase(0, nl + 1);
      if (!control::DecodeMessage(line, reply)) return "the session sent a malformed reply";
      return "";
    }
    if (in_.size() > control::kMaxMessageBytes) return "the session sent a reply too long";
    int wait = -1;
    if (timeout_ms >= 0) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          until - std::chrono::steady_clock::now());
      if (left.count() <= 0) return "the session did not answer in time";
      wait = static_cast<int>(left.count());
    }
    pollfd p{fd_, POLLIN, 0};
    const int rc = ::poll(&p, 1, wait);
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0) return std::string("poll: ") + std::strerror(errno);
    if (rc == 0) continue;  // the loop checks the time
    char buf[4096];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return "closed";
    in_.append(buf, static_cast<size_t>(n));
  }
}

namespace {

bool ProcessGone(long pid) { return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH; }

}  // namespace

SessionList ListSessions(int timeout_ms) {
  SessionList out;
  const std::string dir = control::SocketDir();
  bool missing = false;
  out.error = control::CheckSocketDir(dir, &missing);
  if (!out.error.empty() || missing) return out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    const long pid = control::SocketPid(name);
    if (pid < 0) continue;
    const std::string path = entry.path().string();
    if (ProcessGone(pid)) {
      std::error_code rm;
      if (std::filesystem::remove(path, rm)) ++out.stale_removed;
      continue;
    }
    ControlConnection c;
    control::Message status;
    control::Message request;
    request.verb = "status";
    if (!c.Connect(path, timeout_ms).empty() || !c.Send(request).empty() ||
        !c.Read(&status, timeout_ms).empty() || status.verb != "ok") {
      // Nobody listens: our program died without cleaning up (SIGKILL) and its pid may now
      // belong to another one.
      if (c.refused()) {
        std::error_code rm;
        if (std::filesystem::remove(path, rm)) ++out.stale_removed;
      }
      continue;
    }
    out.live.push_back({pid, path, std::move(status)});
  }
  std::sort(out.live.begin(), out.live.end(),
            [](const SessionInfo& a, const SessionInfo& b) { return a.pid < b.pid; });
  return out;
}

std::string FindSession(const std::string& target, SessionInfo* out) {
  const bool is_pid = !target.empty() && target.find_first_not_of("0123456789") == std::string::npos;
  SessionList list = ListSessions(2000);
  if (!list.error.empty()) return list.error;
  std::vector<SessionInfo> matches;
  for (SessionInfo& s : list.live) {
    if (is_pid ? std::to_string(s.pid) == target : s.status.Get("session") == target) {
      matches.push_back(s);
    }
  }
  if (matches.size() == 1) {
    *out = std::move(matches[0]);
    return "";
  }
  if (matches.empty()) {
    std::string why = "no paused session " + std::string(is_pid ? "with pid " : "named ") + target;
    if (is_pid && !ProcessGone(std::stol(target))) {
      why += ": the process runs, but it was not started with gprof-run --start-paused, or it has "
             "not called CUDA or NVTX yet (the session starts with its first call)";
    } else if (is_pid) {
      why += ": no such process";
    }
    return why + " (gprof-run sessions lists them)";
  }
  std::string why = std::to_string(matches.size()) + " sessions are named " + target +
                    "; name one by pid:";
  for (const SessionInfo& s : matches) why += " " + std::to_string(s.pid);
  return why;
}

}  // namespace gprof::launcher
