// fork/exec, signal forwarding and waiting (see child_process.h). Launcher process only.
#include "launcher/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "support/search_path.h"

namespace gprof::launcher {
namespace {

constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP};

// Read by the signal handler: the only state it touches. 0 when there is no child to forward to.
volatile sig_atomic_t g_child_pid = 0;
struct sigaction g_old_actions[3];

// Async-signal-safe: kill() only. errno is saved and restored because a failing kill() would
// overwrite the errno of the code the signal interrupted (e.g. a waitpid() that just failed).
void Forward(int sig, siginfo_t* info, void*) {
  // SI_KERNEL: the terminal sent it to the whole foreground process group, child included.
  if (info != nullptr && info->si_code == SI_KERNEL) return;
  const int saved_errno = errno;
  const pid_t pid = g_child_pid;
  if (pid > 0) ::kill(pid, sig);
  errno = saved_errno;
}

void InstallForwarding() {
  for (size_t i = 0; i < 3; ++i) {
    struct sigaction old {};
    ::sigaction(kForwarded[i], nullptr, &old);
    g_old_actions[i] = old;
    if (old.sa_handler == SIG_IGN) continue;  // e.g. nohup: keep ignoring, the child inherits it
    struct sigaction sa {};
    sa.sa_sigaction = Forward;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    ::sigaction(kForwarded[i], &sa, nullptr);
  }
}

void RestoreSignals() {
  for (size_t i = 0; i < 3; ++i) ::sigaction(kForwarded[i], &g_old_actions[i], nullptr);
}

bool IsExecutableFile(const std::string& path, int* err) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    *err = errno;
    return false;
  }
  if (S_ISDIR(st.st_mode)) {
    *err = EACCES;
    return false;
  }
  if (::access(path.c_str(), X_OK) != 0) {
    *err = errno;
    return false;
  }
  return true;
}

bool ReadAll(int fd, std::string* out) {
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      out->append(buf, static_cast<size_t>(n));
    } else if (n == 0) {
      return true;
    } else if (errno != EINTR) {
      return false;
    }
  }
}

}  // namespace

std::string ResolveProgram(const std::string& name, const std::string& path_env,
                           std::string* path, int* exit_code) {
  int err = ENOENT;
  if (name.empty()) {
    *exit_code = 127;
    return "empty program name";
  }
  if (name.find('/') != std::string::npos) {
    if (IsExecutableFile(name, &err)) {
      *path = name;
      return "";
    }
  } else {
    // As execvp: an empty PATH element means the current directory; unset PATH -> a default.
    bool saw_denied = false;
    const bool found = ForEachSearchDir(path_env, [&](const std::string& dir) {
      const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
      int e = 0;
      if (IsExecutableFile(candidate, &e)) {
        *path = candidate;
        return true;
      }
      if (e != ENOENT && e != ENOTDIR) saw_denied = true;
      return false;
    });
    if (found) return "";
    err = saw_denied ? EACCES : ENOENT;
  }
  *exit_code = (err == ENOENT || err == ENOTDIR) ? 127 : 126;
  return *exit_code == 127 ? name + ": command not found"
                           : name + ": cannot execute: " + std::strerror(err);
}

ChildProcess::~ChildProcess() {
  if (go_fd_ >= 0) ::close(go_fd_);
  if (err_fd_ >= 0) ::close(err_fd_);
}

std::string ChildProcess::Start(const std::string& exe_path, const std::vector<std::string>& argv,
                                 const std::vector<std::string>& env) {
  int go[2], err[2];
  if (::pipe2(go, O_CLOEXEC) != 0) return std::string("pipe: ") + std::strerror(errno);
  if (::pipe2(err, O_CLOEXEC) != 0) {
    ::close(go[0]);
    ::close(go[1]);
    return std::string("pipe: ") + std::strerror(errno);
  }
  // Block the forwarded signals across fork so that none is lost between fork and recording the
  // child's pid; the handler then finds g_child_pid set.
  sigset_t block, old_mask;
  sigemptyset(&block);
  for (int s : kForwarded) sigaddset(&block, s);
  ::sigprocmask(SIG_BLOCK, &block, &old_mask);
  InstallForwarding();

  const pid_t pid = ::fork();
  if (pid == 0) {
    RestoreSignals();
    ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    ::close(go[1]);
    ::close(err[0]);
    std::string message;
    if (!ReadAll(go[0], &message) || message.empty() || message[0] != 'G') ::_exit(1);
    std::vector<std::string> all_env = env;
    size_t start = 1;
    while (start < message.size()) {
      size_t end = message.find('\0', start);
      if (end == std::string::npos) end = message.size();
      all_env.push_back(message.substr(start, end - start));
      start = end + 1;
    }
    std::vector<char*> args, envp;
    std::vector<std::string> argv_copy = argv;
    for (auto& a : argv_copy) args.push_back(a.data());
    args.push_back(nullptr);
    for (auto& e : all_env) envp.push_back(e.data());
    envp.push_back(nullptr);
    ::execve(exe_path.c_str(), args.data(), envp.data());
    const int e = errno;
    (void)!::write(err[1], &e, sizeof e);
    ::_exit(e == ENOENT ? 127 : 126);
  }
  const int fork_errno = errno;
  ::close(go[0]);
  ::close(err[1]);
  if (pid < 0) {
    RestoreSignals();
    ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    ::close(go[1]);
    ::close(err[0]);
    return std::string("fork: ") + std::strerror(fork_errno);
  }
  pid_ = pid;
  g_child_pid = pid;
  go_fd_ = go[1];
  err_fd_ = err[0];
  ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  return "";
}

std::string ChildProcess::Release(const std::vector<std::string>& extra_env) {
  std::string message = "G";
  for (size_t i = 0; i < extra_env.size(); ++i) {
    if (i > 0) message += '\0';
    message += extra_env[i];
  }
  size_t off = 0;
  while (off < message.size()) {
    const ssize_t n = ::write(go_fd_, message.data() + off, message.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    off += static_cast<size_t>(n);
  }
  ::close(go_fd_);
  go_fd_ = -1;
  std::string reply;
  ReadAll(err_fd_, &reply);
  ::close(err_fd_);
  err_fd_ = -1;
  if (reply.size() >= sizeof(int)) {
    int e = 0;
    std::memcpy(&e, reply.data(), sizeof e);
    return std::string("cannot execute: ") + std::strerror(e);
  }
  return "";
}

void ChildProcess::Abort() {
  if (go_fd_ >= 0) {
    ::close(go_fd_);  // EOF without "G": the child exits 1
    go_fd_ = -1;
  }
}

int ChildProcess::Wait() {
  if (pid_ <= 0) return 1;
  siginfo_t info {};
  for (;;) {
    // WNOWAIT: the pid stays ours until g_child_pid is cleared, so a forwarded signal can never
    // hit a recycled pid.
    if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOWAIT) == 0) break;
    if (errno != EINTR) {
      g_child_pid = 0;
      RestoreSignals();
      return 1;
    }
  }
  g_child_pid = 0;
  RestoreSignals();
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace gprof::launcher
