#include "terminal/progress.h"

namespace shapeprop {

ProgressLine::ProgressLine(std::FILE* out, std::string prefix, std::chrono::milliseconds delay,
                           std::chrono::milliseconds interval)
    : out_(out), prefix_(std::move(prefix)), delay_(delay), interval_(interval), start_(std::chrono::steady_clock::now()) {
  ticker_ = std::thread([this] { run(); });
}

void ProgressLine::phase(std::string_view name) {
  std::lock_guard<std::mutex> lock(mutex_);
  phase_ = name;
}

void ProgressLine::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
    erase();
  }
  wake_.notify_all();
  ticker_.join();
}

void ProgressLine::erase() {
  if (!drawn_) return;
  std::fputs("\r\033[K", out_);  // carriage return, erase to the end of the line
  std::fflush(out_);
  drawn_ = false;
}

void ProgressLine::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (wake_.wait_until(lock, start_ + delay_, [this] { return stopping_; })) return;
  while (!stopping_) {
    if (paused_ == 0 && !phase_.empty()) {
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
      std::fprintf(out_, "\r%s: %s (%.1f s)\033[K", prefix_.c_str(), phase_.c_str(), seconds);
      std::fflush(out_);
      drawn_ = true;
    }
    wake_.wait_for(lock, interval_, [this] { return stopping_; });
  }
}

ProgressLine::Pause::Pause(ProgressLine* line) : line_(line) {
  if (!line_) return;
  std::lock_guard<std::mutex> lock(line_->mutex_);
  ++line_->paused_;
  line_->erase();
}

ProgressLine::Pause::~Pause() {
  if (!line_) return;
  std::lock_guard<std::mutex> lock(line_->mutex_);
  --line_->paused_;
}

}  // namespace shapeprop
