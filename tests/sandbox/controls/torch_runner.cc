// Benign control for run-cpu with the real runtime: a libtorch program shaped like kg-runner's
// start-up. It initialises ATen, runs a multithreaded matmul, installs the second-stage filter,
// dlopens a .so (argv[1]) from a read-only bind and computes again. Must finish OK with an empty
// violation: this is what proves the run profiles let libtorch start.
#include <ATen/ATen.h>
#include <dlfcn.h>

#include <cstdio>

#include "kernelgate/sandbox.h"

int main(int argc, char** argv) {
  at::Tensor a = at::randn({128, 128});
  at::Tensor b = at::matmul(a, a);
  std::string err = kg::sandbox::tighten_runner_filter(kg::sandbox::Profile::RunCpu);
  if (!err.empty()) {
    std::fprintf(stderr, "tighten: %s\n", err.c_str());
    return 3;
  }
  if (argc > 1 && !::dlopen(argv[1], RTLD_NOW | RTLD_LOCAL)) {
    std::fprintf(stderr, "dlopen: %s\n", ::dlerror());
    return 4;
  }
  at::Tensor c = at::relu(at::matmul(b, a));
  std::printf("torch ok %d\n", static_cast<int>(c.numel()));
  return 0;
}
