#!/usr/bin/env bash
# Builds the wire decoder's libFuzzer target: tests/fuzz/build-wire.sh [OUT_DIR]   (default: build/fuzz)
# Then run it, e.g.:
#   build/fuzz/wire_fuzz -max_total_time=600 -rss_limit_mb=4096 build/fuzz/corpus_wire tests/fuzz/corpus_wire
# (the first corpus directory receives new inputs; the checked-in seeds stay untouched).
# Needs clang++, libFuzzer's runtime (Debian: apt-get install clang libclang-rt-14-dev) and
# libtorch (the decoder builds tensors): TORCH_INCLUDE / TORCH_LIB override Debian's paths.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${1:-$root/build/fuzz}"
mkdir -p "$out/corpus_wire"
CXX="${CXX:-clang++}"
TORCH_INCLUDE="${TORCH_INCLUDE:-/usr/include}"
TORCH_LIB="${TORCH_LIB:-/usr/lib/x86_64-linux-gnu}"
extra_inc=()
# -isystem /usr/include would break libstdc++'s #include_next <stdlib.h>: it is searched anyway.
[[ "$TORCH_INCLUDE" != /usr/include ]] && extra_inc+=(-isystem "$TORCH_INCLUDE")
[[ -d "$TORCH_INCLUDE/torch/csrc/api/include" ]] && extra_inc+=(-isystem "$TORCH_INCLUDE/torch/csrc/api/include")
# Only the decoder's own code is instrumented for coverage; libtorch is not (it is not built with
# the sanitizers), ASan still checks every access the decoder makes.
"$CXX" -std=c++17 -g -O1 -fno-omit-frame-pointer \
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -fno-sanitize=vptr \
  -I"$root/loader/include" "${extra_inc[@]}" \
  "$here/wire_fuzz.cc" "$root/loader/src/wire.cc" \
  -L"$TORCH_LIB" -Wl,-rpath,"$TORCH_LIB" -ltorch_cpu -lc10 \
  -o "$out/wire_fuzz"
echo "built $out/wire_fuzz"
