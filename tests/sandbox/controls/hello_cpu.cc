// Benign control for run-cpu: threads, heap, math, stdout. Must finish OK with an empty violation.
#include <cmath>
#include <cstdio>
#include <thread>
#include <vector>

int main() {
  std::vector<double> part(4);
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([t, &part] {
      double s = 0;
      for (int i = t; i < 2000000; i += 4) s += std::sqrt(static_cast<double>(i));
      part[t] = s;
    });
  for (auto& t : ts) t.join();
  double s = part[0] + part[1] + part[2] + part[3];
  std::printf("sum %.3e\n", s);
  return s > 0 ? 0 : 1;
}
