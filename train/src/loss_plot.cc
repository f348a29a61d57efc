// Both loss curves as an SVG line plot: eager's in grey, the submission's in red, the band around
// eager's curve shaded, the first step outside it marked. Plain SVG 1.1, no script, no fonts beyond
// the generic family, so any browser or viewer shows it.
#include "kernelgate/train_check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace kg::train {
namespace {

constexpr double kWidth = 720, kHeight = 500;
constexpr double kLeft = 80, kRight = 20, kTop = 50;

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", v);
  return b;
}

std::string label(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4g", v);
  return b;
}

std::string escaped(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else if (c == '"') out += "&quot;";
    else if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out;
}

// One panel: the plot area's box, its y range, and how steps and values map into it.
struct Panel {
  double top, height, lo, hi;
  int steps;
  double x(double step) const { return kLeft + (kWidth - kLeft - kRight) * step / (steps - 1); }
  double y(double v) const { return top + height * (1 - (std::clamp(v, lo, hi) - lo) / (hi - lo)); }
  std::string polyline(const std::vector<double>& l, const char* colour, const char* dash) const {
    std::string pts;
    for (size_t i = 0; i < l.size(); ++i)
      if (std::isfinite(l[i])) pts += num(x(static_cast<double>(i))) + "," + num(y(l[i])) + " ";
    return "<polyline fill=\"none\" stroke=\"" + std::string(colour) + "\" stroke-width=\"1.5\"" + dash + " points=\"" + pts + "\"/>\n";
  }
  std::string axes(const std::string& ylabel) const {
    const double right = kWidth - kRight;
    std::string s = "<line x1=\"" + num(kLeft) + "\" y1=\"" + num(top + height) + "\" x2=\"" + num(right) + "\" y2=\"" + num(top + height) +
                    "\" stroke=\"black\"/>\n";
    s += "<line x1=\"" + num(kLeft) + "\" y1=\"" + num(top) + "\" x2=\"" + num(kLeft) + "\" y2=\"" + num(top + height) +
         "\" stroke=\"black\"/>\n";
    for (int k = 0; k <= 4; ++k) {
      const double v = lo + (hi - lo) * k / 4;
      s += "<text x=\"" + num(kLeft - 6) + "\" y=\"" + num(y(v) + 4) + "\" text-anchor=\"end\">" + label(v) + "</text>\n";
    }
    const int every = std::max(1, (steps - 1 + 7) / 8);
    for (int step = 0; step < steps; step += every)
      s += "<text x=\"" + num(x(step)) + "\" y=\"" + num(top + height + 16) + "\" text-anchor=\"middle\">" + std::to_string(step) +
           "</text>\n";
    s += "<text x=\"14\" y=\"" + num(top + height / 2) + "\" text-anchor=\"middle\" transform=\"rotate(-90 14 " + num(top + height / 2) +
         ")\">" + ylabel + "</text>\n";
    return s;
  }
};

void widen(double* lo, double* hi) {
  if (!std::isfinite(*lo)) *lo = 0, *hi = 1;
  if (*hi - *lo < 1e-12) *lo -= 0.5, *hi += 0.5;
  const double pad = (*hi - *lo) * 0.05;
  *lo -= pad;
  *hi += pad;
}

}  // namespace

std::string loss_plot_svg(const TrainReport& r) {
  const int steps = std::max(2, r.steps);
  // Upper panel: both losses. Lower panel: the submission's loss minus eager's, with the band.
  double lo = INFINITY, hi = -INFINITY;
  for (const auto* run : {&r.eager, &r.kernels})
    for (double v : run->losses)
      if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  widen(&lo, &hi);
  const Panel loss{kTop, 230, lo, hi, steps};
  std::vector<double> drift, band;
  double dmax = 0;
  for (size_t i = 0; i < r.eager.losses.size(); ++i) {
    const double w = r.loss_atol + r.loss_rtol * std::fabs(r.eager.losses[i]);
    band.push_back(w);
    dmax = std::max(dmax, std::isfinite(w) ? w : 0);
    if (i < r.kernels.losses.size()) {
      drift.push_back(r.kernels.losses[i] - r.eager.losses[i]);
      if (std::isfinite(drift.back())) dmax = std::max(dmax, std::fabs(drift.back()));
    }
  }
  double dlo = -dmax, dhi = dmax;
  widen(&dlo, &dhi);
  const Panel diff{kTop + 230 + 50, 130, dlo, dhi, steps};
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(kWidth) + "\" height=\"" + num(kHeight) + "\" viewBox=\"0 0 " +
                  num(kWidth) + " " + num(kHeight) + "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  s += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s += "<text x=\"" + num(kLeft) + "\" y=\"18\" font-size=\"14\">train-check: " + escaped(r.verdict) + " — " + std::to_string(r.steps) +
       " steps on " + escaped(r.device) + ", seed " + std::to_string(r.seed) + "</text>\n";
  s += "<text x=\"" + num(kLeft) + "\" y=\"34\" font-size=\"11\" fill=\"#555555\">" + escaped(r.model) + "</text>\n";
  s += loss.axes("loss");
  s += loss.polyline(r.eager.losses, "#555555", "");
  s += loss.polyline(r.kernels.losses, "#d62728", " stroke-dasharray=\"5,3\"");
  // The band in the lower panel, as a shaded strip around zero.
  if (!band.empty()) {
    std::string up, down;
    for (size_t i = 0; i < band.size(); ++i) {
      up += num(diff.x(static_cast<double>(i))) + "," + num(diff.y(band[i])) + " ";
      down = num(diff.x(static_cast<double>(i))) + "," + num(diff.y(-band[i])) + " " + down;
    }
    s += "<polygon fill=\"#9ecae1\" fill-opacity=\"0.6\" stroke=\"none\" points=\"" + up + down + "\"/>\n";
  }
  s += diff.axes("drift");
  s += "<line x1=\"" + num(kLeft) + "\" y1=\"" + num(diff.y(0)) + "\" x2=\"" + num(kWidth - kRight) + "\" y2=\"" + num(diff.y(0)) +
       "\" stroke=\"#999999\" stroke-dasharray=\"2,2\"/>\n";
  s += diff.polyline(drift, "#d62728", "");
  s += "<text x=\"" + num(kLeft + (kWidth - kLeft - kRight) / 2) + "\" y=\"" + num(kHeight - 6) + "\" text-anchor=\"middle\">step</text>\n";
  if (r.drift.first_outside >= 0) {
    const int f = r.drift.first_outside;
    const double v = static_cast<size_t>(f) < drift.size() ? drift[static_cast<size_t>(f)] : NAN;
    const double cx = diff.x(f), cy = std::isfinite(v) ? diff.y(v) : diff.top;
    s += "<circle cx=\"" + num(cx) + "\" cy=\"" + num(cy) + "\" r=\"5\" fill=\"none\" stroke=\"#d62728\" stroke-width=\"2\"/>\n";
    s += "<text x=\"" + num(std::min(cx + 8, kWidth - 170)) + "\" y=\"" + num(diff.top - 6) +
         "\" fill=\"#d62728\">first step outside the band: " + std::to_string(f) + "</text>\n";
  }
  const double lx = kWidth - kRight - 235, ly = kTop + 8;
  s += "<rect x=\"" + num(lx) + "\" y=\"" + num(ly) + "\" width=\"230\" height=\"56\" fill=\"white\" stroke=\"#cccccc\"/>\n";
  s += "<line x1=\"" + num(lx + 8) + "\" y1=\"" + num(ly + 14) + "\" x2=\"" + num(lx + 38) + "\" y2=\"" + num(ly + 14) +
       "\" stroke=\"#555555\" stroke-width=\"1.5\"/><text x=\"" + num(lx + 44) + "\" y=\"" + num(ly + 18) +
       "\">eager (libtorch's kernels)</text>\n";
  s += "<line x1=\"" + num(lx + 8) + "\" y1=\"" + num(ly + 30) + "\" x2=\"" + num(lx + 38) + "\" y2=\"" + num(ly + 30) +
       "\" stroke=\"#d62728\" stroke-width=\"1.5\" stroke-dasharray=\"5,3\"/><text x=\"" + num(lx + 44) + "\" y=\"" + num(ly + 34) +
       "\">with the submission's kernels</text>\n";
  s += "<rect x=\"" + num(lx + 8) + "\" y=\"" + num(ly + 41) +
       "\" width=\"30\" height=\"8\" fill=\"#9ecae1\" fill-opacity=\"0.6\"/><text x=\"" + num(lx + 44) + "\" y=\"" + num(ly + 50) +
       "\">band: " + label(r.loss_atol) + " + " + label(r.loss_rtol) + "·|loss|</text>\n";
  s += "</svg>\n";
  return s;
}

}  // namespace kg::train
