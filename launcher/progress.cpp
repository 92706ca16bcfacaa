// The progress line (see progress.h). Launcher process only.
#include "launcher/progress.h"

#include <unistd.h>

namespace gprof::launcher {

Progress::Progress(std::FILE* out, bool terminal, std::chrono::milliseconds delay,
                   std::chrono::milliseconds period)
    : out_(out), terminal_(terminal), delay_(delay), period_(period),
      start_(std::chrono::steady_clock::now()) {}

bool Progress::IsTerminal(std::FILE* out) { return out != nullptr && ::isatty(::fileno(out)) == 1; }

Progress::~Progress() { Done(); }

void Progress::Stage(const std::string& what) {
  std::unique_lock<std::mutex> lock(mu_);
  if (done_) return;
  stage_ = what;
  if (!worker_.joinable()) worker_ = std::thread([this] { Run(); });
  // A new stage shows at once once the delay has passed (the worker would wait a period).
  if (std::chrono::steady_clock::now() - start_ >= delay_) PrintLocked();
}

void Progress::Print(const std::string& message) {
  std::unique_lock<std::mutex> lock(mu_);
  if (shown_ && terminal_) {
    std::fputs("\r\033[K", out_);
    shown_ = false;
  }
  std::fputs(message.c_str(), out_);
  std::fflush(out_);
}

void Progress::Done() {
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (done_) return;
    done_ = true;
    if (shown_ && terminal_) {
      std::fputs("\r\033[K", out_);
      std::fflush(out_);
      shown_ = false;
    }
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void Progress::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!done_) {
    const auto now = std::chrono::steady_clock::now();
    const auto shown_at = start_ + delay_;
    cv_.wait_for(lock, now < shown_at ? shown_at - now : period_, [this] { return done_; });
    if (done_) break;
    if (std::chrono::steady_clock::now() - start_ >= delay_) PrintLocked();
  }
}

void Progress::PrintLocked() {
  if (stage_.empty()) return;
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (terminal_) {
    // A line longer than the terminal wraps, and \r would then rewrite only its last part.
    constexpr size_t kMaxShown = 64;
    const std::string shown = stage_.size() <= kMaxShown
                                  ? stage_
                                  : "..." + stage_.substr(stage_.size() - (kMaxShown - 3));
    std::fprintf(out_, "\r\033[Kgprof-run: %s (%.1f s)", shown.c_str(), secs);
    shown_ = true;
  } else {
    if (stage_ == printed_stage_) return;  // one line per stage
    std::fprintf(out_, "gprof-run: %s (%.1f s)\n", stage_.c_str(), secs);
    printed_stage_ = stage_;
  }
  std::fflush(out_);
}

}  // namespace gprof::launcher
