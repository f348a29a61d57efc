#!/bin/sh
# ArtifactLink.ADanglingLibstdcxxLinksTheOneLibtorchLoads: loader/artifact_link.cmake with a
# compiler like the GPU machine's, whose library search path names a libstdc++.so that is not
# there, beside a libstdc++.a (made here: the compiler with -B to such a folder). Its plain link
# carries libstdc++ inside the shared object; with the flags the script chooses, the object needs
# the libstdc++.so.6 that libtorch loads, with gold and (a stand-in refusing -fuse-ld=gold)
# without. Control: the compiler itself gets no -L.
#   artifact_link_test.sh CMAKE CXX TORCH_LIB_DIR loader/artifact_link.cmake
set -eu
cmake=$1 cxx=$2 torch=$3 script=$4
fail() { echo "FAIL: $*"; exit 1; }
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
archive=$("$cxx" -print-file-name=libstdc++.a)
[ -f "$archive" ] || fail "$cxx has no libstdc++.a to build the stand-in with"
mkdir "$t/prefix"
ln -s /nonexistent/libstdc++.so.6 "$t/prefix/libstdc++.so"
cp "$archive" "$t/prefix/"
printf '#!/bin/sh\nexec "%s" -B"%s/prefix/" "$@"\n' "$cxx" "$t" > "$t/cxx"
chmod +x "$t/cxx"
printf '#include <sstream>\n#include <string>\nstd::string f(double x) { std::ostringstream o; o << x; return o.str(); }\n' > "$t/u.cc"
needs_libstdcxx() { readelf -d "$1" | grep -q 'NEEDED.*\[libstdc++\.so\.6\]'; }

"$t/cxx" -shared -fPIC "$t/u.cc" -o "$t/plain.so"
! needs_libstdcxx "$t/plain.so" || fail "the stand-in links libstdc++.so.6: it does not reproduce the dangling link"

chosen() { "$cmake" -DKG_CXX_REALPATH="$1" -DKG_TORCH_LIB_DIR="$torch" -DKG_LINK_CHECK_DIR="$t/check" -P "$script"; }
out=$(chosen "$t/cxx")
echo "$out"
flag=$(echo "$out" | sed -n 's/^-- KG_LINKER_FLAG=//p')
dir=$(echo " $flag" | sed -n 's/.* -L\([^ ]*\).*/\1/p')
[ -n "$dir" ] || fail "no -L to a shared libstdc++ in '$flag'"
runtime=$(ldd "$torch/libc10.so" | sed -n 's/.*libstdc++\.so\.6 => \([^ ]*\).*/\1/p')
[ "$(realpath "$dir/libstdc++.so")" = "$(realpath "$runtime")" ] ||
  fail "$dir/libstdc++.so is not $runtime, the libstdc++.so.6 libtorch loads"
# shellcheck disable=SC2086 # the flags are words
"$t/cxx" -shared -fPIC $flag "$t/u.cc" -o "$t/fixed.so"
needs_libstdcxx "$t/fixed.so" || fail "linked with '$flag', the object still carries libstdc++ inside"
echo "with '$flag': $(wc -c < "$t/fixed.so") bytes needing libstdc++.so.6, against $(wc -c < "$t/plain.so") with it inside"

# The same compiler without gold: the default linker, with the same -L.
cat > "$t/cxx-nogold" <<SH
#!/bin/sh
for a in "\$@"; do [ "\$a" != -fuse-ld=gold ] || { echo "no gold here" >&2; exit 1; }; done
exec "$t/cxx" "\$@"
SH
chmod +x "$t/cxx-nogold"
out=$(chosen "$t/cxx-nogold")
echo "$out"
flag=$(echo "$out" | sed -n 's/^-- KG_LINKER_FLAG=//p')
[ "$flag" = "-L$dir" ] || fail "without gold: '$flag', not -L$dir"
"$t/cxx-nogold" -shared -fPIC $flag "$t/u.cc" -o "$t/nogold.so"
needs_libstdcxx "$t/nogold.so" || fail "linked with '$flag' by ld.bfd, the object still carries libstdc++ inside"

# Control: a compiler whose libstdc++.so is there links as it would anyway.
if [ -e "$("$cxx" -print-file-name=libstdc++.so)" ]; then
  out=$(chosen "$cxx")
  echo "$out"
  case "$(echo "$out" | sed -n 's/^-- KG_LINKER_FLAG=//p')" in *-L*) fail "$cxx itself got a -L" ;; esac
fi
echo PASS
