// Benign control for the compile profile: a small but real C++ translation unit (STL, templates).
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

template <typename T>
T total(const std::vector<T>& v) {
  T s{};
  for (const T& x : v) s += x;
  return s;
}

int main() {
  std::vector<int> v{5, 3, 9, 1};
  std::sort(v.begin(), v.end());
  std::map<std::string, int> m{{"a", total(v)}};
  std::printf("%d\n", m["a"]);
  return 0;
}
