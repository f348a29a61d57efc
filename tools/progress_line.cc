#include "progress_line.h"

#include "kernelgate/text_safety.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace kg::cli {
namespace {

std::string clock_text(double s) {
  const long t = std::lround(std::max(0.0, s));
  char buf[32];
  if (t >= 3600) std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
  else std::snprintf(buf, sizeof buf, "%ld:%02ld", t / 60, t % 60);
  return buf;
}

bool terminal_stderr() {
  const char* term = std::getenv("TERM");
  return ::isatty(STDERR_FILENO) == 1 && !(term && std::strcmp(term, "dumb") == 0);
}

}  // namespace

ProgressLine::ProgressLine(Verbosity v)
    : verbosity_(v), live_(v == Verbosity::Normal && terminal_stderr()), start_(std::chrono::steady_clock::now()) {}

ProgressLine::~ProgressLine() { clear(); }

std::string ProgressLine::text(const kg::harness::EvalProgress& p, double elapsed_s) {
  std::string line = "[" + std::to_string(p.ops_done) + "/" + std::to_string(p.ops_total) + " ops]";
  if (!p.op.empty() && p.phase != "decided") {
    line += " " + p.op + ": " + p.phase;
    if (p.samples_total > 0 && p.phase != "build") line += " " + std::to_string(p.samples_done) + "/" + std::to_string(p.samples_total);
  }
  line += "  " + clock_text(elapsed_s);
  // The fraction done counts the current op's samples, so the estimate moves within a long op.
  double done = static_cast<double>(p.ops_done);
  if (p.samples_total > 0 && p.phase != "decided") done += 0.9 * static_cast<double>(p.samples_done) / static_cast<double>(p.samples_total);
  const double fraction = p.ops_total ? done / static_cast<double>(p.ops_total) : 0;
  if (fraction >= 0.02 && fraction < 1 && elapsed_s >= 2) line += ", about " + clock_text(elapsed_s * (1 - fraction) / fraction) + " left";
  return line;
}

void ProgressLine::update(const kg::harness::EvalProgress& p) {
  const auto now = std::chrono::steady_clock::now();
  if (verbosity_ == Verbosity::Verbose) {
    if (p.phase == "decided" && !p.op.empty())
      std::fprintf(stderr, "kernelgate: %s decided (%zu/%zu ops, %s)\n", kg::text::terminal_safe(p.op).c_str(), p.ops_done, p.ops_total,
                   clock_text(std::chrono::duration<double>(now - start_).count()).c_str());
    return;
  }
  if (!live_) return;
  // At most ten draws a second while the op and its phase stay the same.
  const std::string where = p.op + "\n" + p.phase;
  if (drawn_ && where == last_where_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  last_where_ = where;
  std::string line = kg::text::terminal_safe(text(p, std::chrono::duration<double>(now - start_).count()));
  if (line.size() > 110) line = line.substr(0, 107) + "...";
  std::fprintf(stderr, "\r%s\033[K", line.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressLine::clear() {
  if (!drawn_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace kg::cli
