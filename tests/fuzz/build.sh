#!/usr/bin/env bash
# Builds the trace parser's libFuzzer target: tests/fuzz/build.sh [OUT_DIR]   (default: build/fuzz)
# Then run it, e.g.:  build/fuzz/trace_fuzz -max_total_time=600 -jobs=1 build/fuzz/corpus tests/fuzz/corpus_trace
# (the first corpus directory receives new inputs; the checked-in seeds stay untouched).
# Needs clang++ and libFuzzer's runtime (Debian: apt-get install clang libclang-rt-14-dev).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${1:-$root/build/fuzz}"
mkdir -p "$out/corpus"
CXX="${CXX:-clang++}"
"$CXX" -std=c++17 -g -O1 -fno-omit-frame-pointer \
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I"$root/harness/include" \
  "$here/trace_fuzz.cc" "$root/harness/src/trace_parser.cc" "$root/harness/src/trace_format.cc" \
  -o "$out/trace_fuzz"
echo "built $out/trace_fuzz"
