// A progress line on a terminal (which step of how many, what it is, the time left), nothing on a pipe.
#pragma once

#include <chrono>
#include <string>

namespace ftmpi::bench {

class ProgressLine {
 public:
  // `title`: "ftbench table"; `total`: the steps expected (a repeated step adds one).
  ProgressLine(std::string title, int total);
  ~ProgressLine() { clear(); }
  bool enabled() const { return enabled_; }
  void begin(const std::string& label);  // a step begins
  void end();                            // the step ended (its time counts toward the estimate)
  void add_steps(int n) { total_ += n; }
  void say(const std::string& line);     // a line that stays (the progress line is drawn again after it)
  void clear();
  // "about 2 min 10 s left": the mean time of the steps done times those left; empty before the first.
  static std::string time_left(std::chrono::steady_clock::duration elapsed, int done, int total);

 private:
  void draw();
  std::string title_, label_;
  int total_, done_ = 0;
  bool enabled_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace ftmpi::bench
