// The evaluating commands' progress on a terminal: one line on stderr, rewritten in place, with
// ops and samples done of their totals, the op being judged and an estimate of the time left.
// Off when stderr is not a terminal (a log or a pipe gets no carriage returns), with --quiet, and
// with --verbose (which prints a line per op instead).
#pragma once

#include "kernelgate/harness.h"

#include <chrono>
#include <string>

namespace kg::cli {

enum class Verbosity { Quiet, Normal, Verbose };

class ProgressLine {
 public:
  // Live only for Normal verbosity on a terminal stderr (TERM not "dumb").
  explicit ProgressLine(Verbosity v);
  ~ProgressLine();  // clears the line
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  void update(const kg::harness::EvalProgress& p);

  // The line for `p` after `elapsed_s` seconds (what update() draws; tested on its own).
  static std::string text(const kg::harness::EvalProgress& p, double elapsed_s);

 private:
  void clear();
  Verbosity verbosity_;
  bool live_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_, last_draw_;
  std::string last_where_;  // the op and phase last drawn
};

}  // namespace kg::cli
