// The report's charts as inline SVG: the fast_p curve, horizontal bar charts of counts, and the
// histogram of speedups. Coordinates are computed here; labels go through escape().
#include "html_text.h"
#include "report_html_parts.h"

#include <algorithm>
#include <cmath>

namespace kg::results::html {
namespace {

std::string fixed(double v) { return number(v, 6); }

std::string svg_open(int width, int height, const std::string& label) {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width) + "\" height=\"" + std::to_string(height) +
         "\" viewBox=\"0 0 " + std::to_string(width) + " " + std::to_string(height) + "\" role=\"img\" aria-label=\"" + escape(label) +
         "\"><title>" + escape(label) + "</title>";
}

std::string text_at(double x, double y, const std::string& text, const char* anchor = "start") {
  return "<text x=\"" + fixed(x) + "\" y=\"" + fixed(y) + "\" text-anchor=\"" + anchor + "\">" + escape(text) + "</text>";
}

std::string line(double x1, double y1, double x2, double y2, const char* cls) {
  return "<line class=\"" + std::string(cls) + "\" x1=\"" + fixed(x1) + "\" y1=\"" + fixed(y1) + "\" x2=\"" + fixed(x2) + "\" y2=\"" +
         fixed(y2) + "\"/>";
}

// A label cut to fit beside a bar; the whole label stays in the bar's tooltip.
std::string shortened(const std::string& s, size_t max) { return s.size() <= max ? s : s.substr(0, max - 1) + "…"; }

}  // namespace

std::string fast_p_curve_svg(const std::vector<OpFields>& ops) {
  const int width = 460, height = 240, left = 44, right = 16, top = 16, bottom = 40;
  const double plot_w = width - left - right, plot_h = height - top - bottom;
  std::vector<double> speedups;  // correct ops with a finite speedup
  long long correct = 0;
  for (const OpFields& o : ops) {
    if (o.verdict != "pass") continue;
    ++correct;
    if (o.speedup && std::isfinite(*o.speedup) && *o.speedup > 0) speedups.push_back(*o.speedup);
  }
  std::sort(speedups.begin(), speedups.end());
  const double n = std::max<double>(1, static_cast<double>(ops.size()));
  const double largest = speedups.empty() ? 0 : speedups.back();
  const double x_max = std::ceil(std::clamp(largest * 1.1, 2.0, 8.0) * 2) / 2;
  const auto x = [&](double p) { return left + plot_w * std::min(p, x_max) / x_max; };
  const auto y = [&](double fraction) { return top + plot_h * (1 - fraction); };

  std::string svg = svg_open(width, height, "fast_p: fraction of ops correct and faster than p times eager");
  for (int i = 0; i <= 4; ++i) {
    svg += line(left, y(i / 4.0), left + plot_w, y(i / 4.0), "grid");
    svg += text_at(left - 6, y(i / 4.0) + 4, std::to_string(i * 25) + "%", "end");
  }
  for (double p = 0; p <= x_max + 1e-9; p += x_max > 4 ? 1 : 0.5) {
    svg += line(x(p), top + plot_h, x(p), top + plot_h + 4, "axis");
    svg += text_at(x(p), top + plot_h + 16, number(p) + "x", "middle");
  }
  svg += line(left, top, left, top + plot_h, "axis") + line(left, top + plot_h, left + plot_w, top + plot_h, "axis");
  svg += text_at(left + plot_w / 2, height - 4, "p (speedup over eager)", "middle");
  // A step function: every correct op counts at p = 0, an untimed one drops out just after, and a
  // timed one where p reaches its speedup.
  long long remaining = static_cast<long long>(speedups.size());
  std::string path = "M" + fixed(x(0)) + " " + fixed(y(correct / n)) + " V" + fixed(y(remaining / n));
  for (size_t i = 0; i < speedups.size() && speedups[i] <= x_max; ++i) {
    --remaining;
    path += " H" + fixed(x(speedups[i])) + " V" + fixed(y(remaining / n));
  }
  path += " H" + fixed(x(x_max));
  svg += "<path class=\"curve\" d=\"" + path + "\"/>";
  for (double p : {1.0, 1.5, 2.0}) {
    const long long faster = std::count_if(speedups.begin(), speedups.end(), [&](double s) { return s > p; });
    svg += "<circle cx=\"" + fixed(x(p)) + "\" cy=\"" + fixed(y(faster / n)) + "\" r=\"3.5\" fill=\"#0969da\"><title>fast_" + number(p) +
           ": " + percent(faster / n) + "</title></circle>";
  }
  return svg + "</svg>";
}

std::string bar_chart_svg(const std::string& title, const Counts& counts) {
  const int label_w = 170, bar_w = 220, row_h = 22, top = 24;
  const int width = label_w + bar_w + 60;
  const int height = top + row_h * static_cast<int>(std::max<size_t>(counts.size(), 1)) + 8;
  long long most = 1;
  for (const auto& [name, count] : counts) most = std::max(most, count);
  std::string svg = svg_open(width, height, title) + text_at(0, 14, title);
  if (counts.empty()) svg += text_at(0, top + 15, "none");
  int row = 0;
  for (const auto& [name, count] : counts) {
    const double y = top + row_h * row++;
    const double w = std::max(1.0, bar_w * static_cast<double>(count) / static_cast<double>(most));
    svg += text_at(label_w - 6, y + 15, shortened(name, 26), "end");
    svg += "<rect class=\"bar\" x=\"" + std::to_string(label_w) + "\" y=\"" + fixed(y + 3) + "\" width=\"" + fixed(w) +
           "\" height=\"16\"><title>" + escape(name) + ": " + std::to_string(count) + "</title></rect>";
    svg += text_at(label_w + w + 6, y + 15, std::to_string(count));
  }
  return svg + "</svg>";
}

std::string speedup_histogram_svg(const std::vector<double>& speedups) {
  struct Bucket {
    const char* label;
    double below;  // upper edge (exclusive)
    const char* cls;
  };
  static const Bucket buckets[] = {{"<0.5x", 0.5, "bar slow"},    {"0.5-0.8x", 0.8, "bar slow"}, {"0.8-1x", 1.0, "bar slow"},
                                   {"1-1.25x", 1.25, "bar fast"}, {"1.25-2x", 2.0, "bar fast"},  {"2-4x", 4.0, "bar fast"},
                                   {">=4x", INFINITY, "bar fast"}};
  const int n_buckets = sizeof buckets / sizeof buckets[0];
  std::vector<long long> counts(n_buckets, 0);
  for (double s : speedups)
    for (int b = 0; b < n_buckets; ++b)
      if (s < buckets[b].below) {
        ++counts[b];
        break;
      }
  const int width = 460, height = 230, left = 36, top = 36, bottom = 36, col_w = (width - left - 10) / n_buckets;
  const double plot_h = height - top - bottom;
  const long long most = std::max<long long>(1, *std::max_element(counts.begin(), counts.end()));
  std::string svg = svg_open(width, height, "speedup of correct ops over eager") + text_at(0, 14, "speedup of correct ops over eager");
  svg += line(left, top + plot_h, width - 10, top + plot_h, "axis");
  for (int b = 0; b < n_buckets; ++b) {
    const double h = plot_h * static_cast<double>(counts[b]) / static_cast<double>(most);
    const double x = left + col_w * b + 4;
    svg += "<rect class=\"" + std::string(buckets[b].cls) + "\" x=\"" + fixed(x) + "\" y=\"" + fixed(top + plot_h - h) + "\" width=\"" +
           std::to_string(col_w - 8) + "\" height=\"" + fixed(h) + "\"><title>" + buckets[b].label + ": " + std::to_string(counts[b]) +
           " ops</title></rect>";
    svg += text_at(x + (col_w - 8) / 2.0, top + plot_h - h - 4, std::to_string(counts[b]), "middle");
    svg += text_at(x + (col_w - 8) / 2.0, top + plot_h + 16, buckets[b].label, "middle");
  }
  if (speedups.empty()) svg += text_at(left + 8, top + 20, "no correct op was timed");
  return svg + "</svg>";
}

}  // namespace kg::results::html
