// A13 a compile-time bomb: constant evaluation that would take the compiler hours (each loop stays
// under -fconstexpr-loop-limit, the total stays under -fconstexpr-ops-limit for a long while),
// inside a template so every instantiation pays again. The build must end at the CPU limit (TO)
// or the memory limit (ML), never hang the supervisor.
template <long K>
struct Bomb {
  static constexpr long f() {
    long s = 0;
    for (long i = 0; i < 200000; ++i)
      for (long j = 0; j < 200000; ++j) s += (i ^ j) + K;
    return s;
  }
  static constexpr long v = f();
};
int main() { return static_cast<int>(Bomb<1>::v + Bomb<2>::v); }
