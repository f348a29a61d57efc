#!/usr/bin/env bash
# Builds the artifact reader's libFuzzer target and its seeds: tests/fuzz/build-elf.sh [OUT_DIR]
# (default: build/fuzz). Then run it, e.g.:
#   build/fuzz/elf_fuzz -max_total_time=600 -max_len=16384 -rss_limit_mb=4096 build/fuzz/corpus_elf build/fuzz/seeds_elf
# (the first corpus directory receives new inputs). The seeds are small shared objects g++ builds
# here (no libc, page size 4 KiB, both hash styles, with and without text relocations), carrying
# the imports and exports the static rules look for.
# Needs clang++ and libFuzzer's runtime (Debian: apt-get install clang libclang-rt-14-dev). No torch.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${1:-$root/build/fuzz}"
mkdir -p "$out/corpus_elf" "$out/seeds_elf"
CXX="${CXX:-clang++}"
"$CXX" -std=c++17 -g -O1 -fno-omit-frame-pointer \
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I"$root/policies/include" -I"$root/policies/src" \
  "$here/elf_fuzz.cc" "$root/policies/src/elf_symbols.cc" "$root/policies/src/x86_decode.cc" "$root/policies/src/rule_"*.cc "$root/policies/src/policy.cc" \
  -o "$out/elf_fuzz"
seeds="$out/seeds_elf"
src="$(mktemp -d)"
trap 'rm -rf "$src"' EXIT
cat > "$src/a.cc" <<'SRC'
struct Tensor;
extern "C" void* kg_relu(const Tensor&) asm("_ZN2at4_ops4relu4callERKNS_6TensorE");
extern "C" void* kg_ptr() asm("_ZNK2at10TensorBase8data_ptrIfEEPT_v");
extern "C" void* dlsym(void*, const char*);
extern "C" void* kg_use(const Tensor& t) { return kg_relu(t) ? dlsym(kg_ptr(), "cblas_sgemm") : 0; }
extern "C" int clock_gettime(int, void*) { return 0; }
extern "C" __attribute__((weak)) int cudaDeviceSetLimit(int, unsigned long);
extern "C" int kg_limit() { return cudaDeviceSetLimit ? cudaDeviceSetLimit(6, 1 << 20) : 0; }
static int kg_init() { return 1; }
static int kg_once = kg_init();
SRC
cat > "$src/b.cc" <<'SRC'
extern long kg_counter;
long kg_counter = 1;
extern "C" long kg_read() { long v; asm volatile("movabsq $kg_counter, %0" : "=r"(v)); return v; }
SRC
base=(-O1 -fPIC -shared -nostdlib -Wl,-z,noseparate-code -Wl,-z,max-page-size=0x1000 -s)
g++ "${base[@]}" -Wl,--hash-style=gnu "$src/a.cc" -o "$seeds/gnu_hash.so"
g++ "${base[@]}" -Wl,--hash-style=sysv "$src/a.cc" -o "$seeds/sysv_hash.so"
g++ "${base[@]}" -Wl,--hash-style=both -Wl,-soname,libkg.so.1 -Wl,--no-as-needed -lm "$src/a.cc" -o "$seeds/both_needed.so"
g++ "${base[@]}" -Wl,-z,notext -Wl,-z,execstack "$src/b.cc" -o "$seeds/textrel.so"
echo "built $out/elf_fuzz and seeds in $seeds"
