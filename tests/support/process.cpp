#include "tests/support/process.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace gprof::testing {

std::string BinaryDir() { return GPROF_BINARY_DIR; }
std::string SourceDir() { return GPROF_SOURCE_DIR; }
std::string LauncherPath() { return BinaryDir() + "/bin/gprof-run"; }
std::string StandInLibDir() { return BinaryDir() + "/tests/cudasim/lib"; }
std::string PythonPath() {
  if (const char* p = std::getenv("GPROF_TEST_PYTHON")) return p;
  return BinaryDir() + "/pyenv/bin/python3";
}

namespace {

// The first line of /proc/PID/task/TID/`file` (or one of its lines starting with `key`).
std::string ProcLine(const std::string& task, const char* file, const char* key = nullptr) {
  std::ifstream in(task + "/" + file);
  for (std::string line; std::getline(in, line);) {
    if (key == nullptr || line.rfind(key, 0) == 0) return line;
  }
  return "";
}

// What each thread of a process that did not end in time was doing (name, kernel wait channel,
// syscall number, pending and blocked signals), for the failure message of a hung test.
std::string ThreadStates(pid_t pid) {
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  std::string text = "[process harness: timed out; the threads of pid " + std::to_string(pid) +
                     " before SIGKILL:\n";
  DIR* dir = ::opendir(tasks.c_str());
  if (dir == nullptr) return text + " (gone)]\n";
  while (const dirent* e = ::readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    const std::string task = tasks + "/" + e->d_name;
    text += "  tid " + std::string(e->d_name) + " " + ProcLine(task, "comm") + " wchan=" +
            ProcLine(task, "wchan") + " syscall=" + ProcLine(task, "syscall") + " " +
            ProcLine(task, "status", "SigPnd") + " " + ProcLine(task, "status", "SigBlk") + "\n";
  }
  ::closedir(dir);
  return text + "]\n";
}

}  // namespace

std::string MakeTempDir(const std::string& tag) {
  static std::atomic<int> counter{0};
  const std::string root = BinaryDir() + "/test-output";
  ::mkdir(root.c_str(), 0755);
  const std::string dir = root + "/" + tag + "." + std::to_string(::getpid()) + "." +
                          std::to_string(counter++);
  std::string cmd = "rm -rf '" + dir + "'";
  if (std::system(cmd.c_str()) != 0 || ::mkdir(dir.c_str(), 0755) != 0) {
    throw std::runtime_error("cannot create " + dir);
  }
  return dir;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) {
        names.emplace_back(e->d_name);
      }
    }
    ::closedir(d);
  }
  return names;
}

ProcessResult RunProcess(const std::vector<std::string>& argv, const ProcessOptions& options) {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (eq != nullptr) env[std::string(*e, static_cast<size_t>(eq - *e))] = eq + 1;
  }
  for (const auto& k : options.unset_env) env.erase(k);
  for (const auto& [k, v] : options.set_env) env[k] = v;
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, args;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& s : argv_copy) args.push_back(s.data());
  args.push_back(nullptr);

  int out_pipe[2], err_pipe[2], in_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0 ||
      ::pipe2(in_pipe, O_CLOEXEC) != 0) {
    throw std::runtime_error("pipe failed");
  }
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::dup2(in_pipe[0], 0);
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    ::setpgid(0, 0);  // own process group: a timeout kill takes the whole tree
    if (!options.cwd.empty() && ::chdir(options.cwd.c_str()) != 0) ::_exit(126);
    ::execvpe(args[0], args.data(), envp.data());
    std::fprintf(stderr, "exec %s: %s\n", args[0], std::strerror(errno));
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  ::close(in_pipe[0]);
  if (!options.stdin_data.empty()) {
    (void)!::write(in_pipe[1], options.stdin_data.data(), options.stdin_data.size());
  }
  ::close(in_pipe[1]);

  ProcessResult r;
  const auto start = std::chrono::steady_clock::now();
  bool signal_sent = false;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0) {
    const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start);
    const bool due = options.signal_when_out_has.empty()
                         ? elapsed >= options.signal_after
                         : r.out.find(options.signal_when_out_has) != std::string::npos;
    if (!signal_sent && options.signal_to_send != 0 && due) {
      ::kill(pid, options.signal_to_send);
      signal_sent = true;
    }
    if (elapsed >= options.timeout) {
      r.timed_out = true;
      r.err += ThreadStates(pid);
      ::kill(-pid, SIGKILL);
      break;
    }
    if (::poll(fds, 2, 20) < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(n));
      } else {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (auto& f : fds) {
    if (f.fd >= 0) ::close(f.fd);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) {
    r.signaled = true;
    r.term_signal = WTERMSIG(status);
  } else if (WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
  }
  return r;
}

}  // namespace gprof::testing
