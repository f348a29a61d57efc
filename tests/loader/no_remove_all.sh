#!/bin/sh
# LinkedBinaries.NoFilesystemRemoveAll: kernelgate's binaries link libtorch, and PyTorch 2.x wheels
# export a broken copy of std::filesystem::remove_all that wins symbol lookup over libstdc++'s (the
# service crashed through a null pointer in it on the first finished task). kg::loader::remove_tree
# (kernelgate/remove_tree.h) does the job instead; a binary that still calls remove_all fails here,
# whichever libtorch it was built against.
# Usage: no_remove_all.sh NM BINARY...
set -eu
nm_tool=$1
shift
status=0
for binary in "$@"; do
  found=$("$nm_tool" -C --undefined-only "$binary" | grep 'std::filesystem::remove_all\|std::experimental::filesystem::.*remove_all' || true)
  if [ -n "$found" ]; then
    echo "$binary calls std::filesystem::remove_all (use kg::loader::remove_tree):"
    echo "$found"
    status=1
  else
    echo "$binary: no std::filesystem::remove_all"
  fi
done
exit $status
