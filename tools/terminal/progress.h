// A progress line for runs longer than a moment: once `delay` has passed, the phase under
// way and the time so far are drawn on one line of a terminal and redrawn in place until
// stop(), which erases the line. A run that ends sooner prints nothing.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace shapeprop {

class ProgressLine {
 public:
  // Draws on `out` (a terminal: the line is redrawn with a carriage return), as
  // "<prefix>: <phase> (1.4 s)".
  ProgressLine(std::FILE* out, std::string prefix, std::chrono::milliseconds delay = std::chrono::seconds(1),
               std::chrono::milliseconds interval = std::chrono::milliseconds(200));
  ~ProgressLine() { stop(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // The phase now under way (from any thread).
  void phase(std::string_view name);
  // Erases the line and draws no more.
  void stop();

  // While a Pause lives, the line is erased and not drawn, so that the caller may write to
  // the same stream; a null line pauses nothing.
  class Pause {
   public:
    explicit Pause(ProgressLine* line);
    ~Pause();
    Pause(const Pause&) = delete;
    Pause& operator=(const Pause&) = delete;

   private:
    ProgressLine* line_;
  };

 private:
  std::FILE* out_;
  const std::string prefix_;
  const std::chrono::milliseconds delay_, interval_;
  const std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::string phase_;
  bool drawn_ = false;
  bool stopping_ = false;
  int paused_ = 0;
  std::thread ticker_;

  void run();
  void erase();  // with mutex_ held
};

}  // namespace shapeprop
