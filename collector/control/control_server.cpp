// The control server (see control_server.h).
//
// Rules: everything here runs on the server thread, at init or at exit (cold: allocation,
// logging and blocking calls are fine), except OnWindowSaved, which the window thread calls; it
// only appends to `saved` under `mu` and writes the eventfd. Lock order: `mu` is a leaf.
#include "collector/control/control_server.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "collector/windows/window_thread.h"
#include "model/control_channel.h"
#include "support/clock.h"
#include "support/log.h"

namespace gprof::collector {
namespace {

using control::Message;

constexpr uint64_t kRequestTimeoutNs = 5'000'000'000;  // a client must send its line by then

struct Saved {
  uint32_t cycle;
  std::string path;
  bool partial;
};

struct Client {
  int fd = -1;
  std::string in;
  uint64_t accepted_ns = 0;
  bool request_done = false;
  int64_t wait_cycle = -1;  // waiting for this capture's save (0-based)
};

struct Server {
  Config config;
  ControlIdentity identity;
  std::string socket_path;
  pid_t pid = 0;
  int listen_fd = -1;
  int wake_fd = -1;
  std::thread thread;
  std::atomic<bool> stop{false};
  std::mutex mu;              // guards `saved` (window thread -> server thread); a leaf
  std::vector<Saved> saved;
  // Server thread only.
  std::vector<Client> clients;
  int64_t open_capture = -1;  // the capture asked for and not yet saved (0-based)
  bool open_is_steps = false;
};

std::atomic<Server*> g_server{nullptr};  // never freed (the library must not free at exit)

void Wake(Server* s) {
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(s->wake_fd, &one, sizeof one);
}

void OnWindowSaved(uint32_t cycle, const std::string& path, bool partial) noexcept {
  Server* s = g_server.load(std::memory_order_acquire);
  if (s == nullptr) return;
  try {
    std::lock_guard<std::mutex> lock(s->mu);
    s->saved.push_back({cycle, path, partial});
  } catch (...) {
    return;
  }
  Wake(s);
}

void Send(int fd, const Message& m) {
  const std::string line = control::EncodeMessage(m);
  size_t at = 0;
  while (at < line.size()) {
    const ssize_t n = ::send(fd, line.data() + at, line.size() - at, MSG_NOSIGNAL);
    if (n > 0) {
      at += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && errno == EAGAIN) {
      pollfd p{fd, POLLOUT, 0};
      if (::poll(&p, 1, 1000) <= 0) return;  // a client that does not read is dropped
    } else {
      return;
    }
  }
}

Message Error(const std::string& text) {
  Message m{"error", {{"message", text}}};
  return m;
}

const char* StateName(ControlState state) {
  switch (state) {
    case ControlState::kPaused: return "paused";
    case ControlState::kWaitingForStep: return "waiting-for-step";
    case ControlState::kCapturing: return "capturing";
  }
  return "paused";
}

std::string StepSourceText(const StepSource& s) {
  switch (s.kind) {
    case StepSource::Kind::kNvtx: return "nvtx:" + s.pattern;
    case StepSource::Kind::kKernel: return "kernel:" + s.pattern;
    case StepSource::Kind::kApi: return "api:" + s.pattern;
    case StepSource::Kind::kTime: return "time";
  }
  return "";
}

// A capture asked for but not yet applied by the window thread is shown as what it will be: the
// client that asked has been told it runs.
ControlState ShownState(const Server* s, ControlState state) {
  if (state != ControlState::kPaused || s->open_capture < 0) return state;
  return s->open_is_steps ? ControlState::kWaitingForStep : ControlState::kCapturing;
}

// A whole number field; absent ("") leaves `*out` at 0.
bool ParseCount(const std::string& text, uint64_t* out) {
  if (text.empty()) return true;
  if (text.size() > 19) return false;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  *out = v;
  return true;
}

// Handles one request; true when the client stays open to wait for a save.
bool Handle(Server* s, Client* c, const Message& req) {
  const ControlStatus st = GetControlStatus();
  // A capture the window thread has cut is over, even while its dump waits for GPU records
  // (its client still waits for the save): the next one may start.
  if (s->open_capture >= 0 && s->open_capture < st.windows_saved) s->open_capture = -1;
  Message ok;
  ok.verb = "ok";
  if (!st.running) {
    Send(c->fd, Error("the program is exiting; no more captures"));
    return false;
  }
  if (req.verb == "status") {
    ok.fields = {{"pid", std::to_string(s->pid)},
                 {"session", s->identity.session},
                 {"program", s->identity.program},
                 {"command", s->identity.command},
                 {"state", StateName(ShownState(s, st.state))},
                 {"captures", std::to_string(st.windows_saved)},
                 {"output_dir", s->identity.output_dir},
                 {"step", StepSourceText(s->config.step)}};
    if (s->identity.gpu_status != nullptr) ok.fields["gpu"] = s->identity.gpu_status();
    Send(c->fd, ok);
    return false;
  }
  if (req.verb == "capture" || req.verb == "resume") {
    uint64_t duration_ns = 0, steps = 0;
    if (!ParseCount(req.Get("duration_ns"), &duration_ns) ||
        !ParseCount(req.Get("steps"), &steps) || steps > UINT32_MAX) {
      Send(c->fd, Error("bad request: duration_ns and steps are whole numbers"));
      return false;
    }
    const bool resume = req.verb == "resume";
    if (!resume && (duration_ns > 0) == (steps > 0)) {
      Send(c->fd, Error("a capture needs exactly one of --duration or --steps"));
      return false;
    }
    if (steps > 0 && s->config.step.kind == StepSource::Kind::kTime) {
      Send(c->fd, Error("--steps needs a step source other than time: (GPROF_STEP); use "
                        "--duration"));
      return false;
    }
    if (s->open_capture >= 0 || st.state != ControlState::kPaused) {
      const int64_t k = s->open_capture >= 0 ? s->open_capture : st.windows_saved;
      Send(c->fd, Error("capture " + std::to_string(k + 1) +
                        " is still running; wait for it, or end it with `gprof-run pause`"));
      return false;
    }
    if (!PostControlCapture(resume ? 0 : duration_ns, resume ? 0 : static_cast<uint32_t>(steps))) {
      Send(c->fd, Error("the program is exiting; no more captures"));
      return false;
    }
    s->open_capture = st.windows_saved;
    s->open_is_steps = steps > 0 && !resume;
    ok.fields["capture"] = std::to_string(s->open_capture + 1);
    if (s->open_is_steps) ok.fields["waiting_for"] = StepSourceText(s->config.step);
    Send(c->fd, ok);
    if (resume) return false;
    c->wait_cycle = s->open_capture;
    return true;
  }
  if (req.verb == "pause") {
    if (s->open_capture < 0 && st.state == ControlState::kPaused) {
      ok.fields["state"] = "paused";
      Send(c->fd, ok);
      return false;
    }
    const int64_t k = s->open_capture >= 0 ? s->open_capture : st.windows_saved;
    if (!PostControlPause()) {
      Send(c->fd, Error("the program is exiting; its capture is saved at exit"));
      return false;
    }
    if (s->open_is_steps && st.state != ControlState::kCapturing) {
      // Still waiting for its first step: nothing was kept, nothing is saved.
      ok.fields["cancelled"] = std::to_string(k + 1);
      s->open_capture = -1;
      Send(c->fd, ok);
      return false;
    }
    ok.fields["capture"] = std::to_string(k + 1);
    Send(c->fd, ok);
    c->wait_cycle = k;
    return true;
  }
  Send(c->fd, Error("unknown request '" + req.verb + "'"));
  return false;
}

void CloseClient(Client* c) {
  if (c->fd >= 0) ::close(c->fd);
  c->fd = -1;
}

void Accept(Server* s) {
  for (;;) {
    const int fd = ::accept4(s->listen_fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.uid != ::geteuid()) {
      const std::string who = len == sizeof cred ? "uid " + std::to_string(cred.uid) + " (pid " +
                                                       std::to_string(cred.pid) + ")"
                                                 : "a client whose uid could not be read";
      log::Warn("refused a control request from " + who + ": only uid " +
                std::to_string(::geteuid()) + " may control this process");
      Send(fd, Error("refused: only uid " + std::to_string(::geteuid()) +
                     " may control this process"));
      ::close(fd);
      continue;
    }
    Client c;
    c.fd = fd;
    c.accepted_ns = NowNs();
    s->clients.push_back(std::move(c));
  }
}

void ReadRequest(Server* s, Client* c) {
  char buf[4096];
  for (;;) {
    const ssize_t n = ::recv(c->fd, buf, sizeof buf, 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
      CloseClient(c);  // gone (a waiting client may leave: its capture goes on)
      return;
    }
    if (n < 0) return;
    if (c->request_done) continue;  // a waiting client has nothing more to say
    c->in.append(buf, static_cast<size_t>(n));
    const size_t nl = c->in.find('\n');
    if (nl == std::string::npos) {
      if (c->in.size() > control::kMaxMessageBytes) {
        Send(c->fd, Error("request too long"));
        CloseClient(c);
        return;
      }
      continue;
    }
    c->request_done = true;
    Message req;
    if (!control::DecodeMessage(std::string_view(c->in).substr(0, nl), &req)) {
      Send(c->fd, Error("malformed request"));
      CloseClient(c);
      return;
    }
    if (!Handle(s, c, req)) CloseClient(c);
    return;
  }
}

void DeliverSaved(Server* s) {
  std::vector<Saved> saved;
  {
    std::lock_guard<std::mutex> lock(s->mu);
    saved.swap(s->saved);
  }
  for (const Saved& w : saved) {
    if (s->open_capture == static_cast<int64_t>(w.cycle)) s->open_capture = -1;
    for (Client& c : s->clients) {
      if (c.fd < 0 || c.wait_cycle != static_cast<int64_t>(w.cycle)) continue;
      if (w.path.empty()) {
        Send(c.fd, Error("capture " + std::to_string(w.cycle + 1) +
                         " could not be written (the program's stderr says why)"));
      } else {
        Message m;
        m.verb = "saved";
        m.fields = {{"capture", std::to_string(w.cycle + 1)},
                    {"path", w.path},
                    {"partial", w.partial ? "1" : "0"}};
        Send(c.fd, m);
      }
      CloseClient(&c);
    }
  }
}

void ServerMain(Server* s) {
  std::vector<pollfd> fds;
  for (;;) {
    DeliverSaved(s);
    if (s->stop.load(std::memory_order_acquire)) return;
    const uint64_t now = NowNs();
    for (Client& c : s->clients) {
      if (c.fd >= 0 && !c.request_done && now - c.accepted_ns > kRequestTimeoutNs) {
        CloseClient(&c);
      }
    }
    std::erase_if(s->clients, [](const Client& c) { return c.fd < 0; });
    fds.assign({{s->listen_fd, POLLIN, 0}, {s->wake_fd, POLLIN, 0}});
    for (const Client& c : s->clients) fds.push_back({c.fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), 1000) < 0 && errno != EINTR) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    if (fds[1].revents & POLLIN) {
      uint64_t v;
      [[maybe_unused]] const ssize_t n = ::read(s->wake_fd, &v, sizeof v);
    }
    // Clients first: Accept below may grow the vector that `fds` mirrors.
    for (size_t i = 2; i < fds.size(); ++i) {
      if (fds[i].revents != 0) ReadRequest(s, &s->clients[i - 2]);
    }
    if (fds[0].revents & POLLIN) Accept(s);
  }
}

// Binds `path`, replacing a stale socket (one nobody listens on: this pid's earlier image before
// an exec, or a dead process whose pid we now have). "" or the message.
std::string Listen(const std::string& path, int* out_fd) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) {
    return "the socket path " + path + " is too long for a Unix socket (set XDG_RUNTIME_DIR to "
           "a shorter directory)";
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return std::string("socket: ") + std::strerror(errno);
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      ::close(fd);
      return path + " exists and is not a socket; remove it";
    }
    ::unlink(path.c_str());  // our pid's name: whoever made it is gone (or is our old image)
  }
  const mode_t old = ::umask(077);
  const int rc = ::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  ::umask(old);
  if (rc != 0 || ::listen(fd, 16) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    return "cannot listen on " + path + ": " + why;
  }
  *out_fd = fd;
  return "";
}

}  // namespace

bool StartControlServer(const Config& config, const ControlIdentity& identity) noexcept {
  if (!config.start_paused || g_server.load(std::memory_order_acquire) != nullptr) return false;
  try {
    const std::string dir =
        identity.socket_dir.empty() ? control::SocketDir() : identity.socket_dir;
    std::string why = control::EnsureSocketDir(dir);
    auto* s = new Server;  // never freed
    s->config = config;
    s->identity = identity;
    s->pid = ::getpid();
    s->socket_path = control::SocketPath(dir, s->pid);
    if (why.empty()) why = Listen(s->socket_path, &s->listen_fd);
    if (why.empty()) {
      s->wake_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
      if (s->wake_fd < 0) why = std::string("eventfd: ") + std::strerror(errno);
    }
    if (!why.empty()) {
      if (s->listen_fd >= 0) {
        ::close(s->listen_fd);
        ::unlink(s->socket_path.c_str());
      }
      log::Warn("--start-paused: " + why + "; captures cannot be asked for, and nothing is "
                "collected");
      return false;
    }
    g_server.store(s, std::memory_order_release);
    SetWindowSavedObserver(&OnWindowSaved);
    s->thread = std::thread(ServerMain, s);
    log::Debug("control socket " + s->socket_path);
    return true;
  } catch (const std::exception& e) {
    log::Warn(std::string("--start-paused: the control server could not start (") + e.what() +
              "); nothing is collected");
    return false;
  }
}

bool ControlServerRunning() noexcept {
  const Server* s = g_server.load(std::memory_order_acquire);
  return s != nullptr && !s->stop.load(std::memory_order_acquire) && s->pid == ::getpid();
}

void StopControlServer() noexcept {
  Server* s = g_server.load(std::memory_order_acquire);
  // A child that forked without exec shares the parent's socket name: never remove it there.
  if (s == nullptr || s->pid != ::getpid() || s->stop.exchange(true)) return;
  try {
    Wake(s);
    if (s->thread.joinable()) s->thread.join();
    DeliverSaved(s);  // a capture saved as partial by FinishWindows
    for (Client& c : s->clients) {
      if (c.fd >= 0 && c.wait_cycle >= 0) {
        Send(c.fd, Error("the program exited before capture " + std::to_string(c.wait_cycle + 1) +
                         " was saved"));
      }
      CloseClient(&c);
    }
    ::unlink(s->socket_path.c_str());
    ::close(s->listen_fd);
  } catch (...) {
  }
}

}  // namespace gprof::collector
