#!/bin/sh
# RunnerSymbols.NoSupervisorCode: kg-runner, the one process that runs untrusted code, must hold
# none of the supervisor's code: no loader (build, cache, toolchain, nvcc, submission files), no
# harness, policies or command-line tools, no TOML or JSON reader, and of the sandbox only the
# runner's own second-stage filter. A symbol defined in the binary that matches one of the
# patterns below fails the test, and the test lists it.
# Usage: runner_symbols.sh NM KG_RUNNER
set -eu
nm_tool=$1
runner=$2

# Extended regular expressions over demangled names, parameters cut off.
forbidden='^kg::loader::
^kg::harness::
^kg::policy::
^kg::cli::
^kg::trace::
^kg_cmd_
^kg::sandbox::(cgroup|contain|fds|limits|mounts|namespaces)::
^kg::sandbox::(Process|Record|Spec)::
^kg::sandbox::(start|run|profile_name|parse_profile|status_name)(\[|$)
^kg::sandbox::seccomp::(profile_bpf|install_with_listener|receive|killed_syscall_from_kernel_log)(\[|$)
^kg::.*(::|_)(build|cache|toolchain|nvcc)(_|::|\[|$)
^(toml|nlohmann)::'

# "ADDRESS TYPE NAME": keep NAME, drop "guard variable for " and the like, cut the parameters.
names=$("$nm_tool" -C --defined-only "$runner" | cut -d' ' -f3- |
        sed -e 's/^\(guard variable\|typeinfo\|typeinfo name\|vtable\|VTT\) for //' -e 's/\([^:]\)(.*/\1/' | sort -u)
if [ -z "$names" ]; then
  echo "no symbols read from $runner (is it stripped?)" >&2
  exit 1
fi
# grep takes a newline-separated list of patterns.
bad=$(printf '%s\n' "$names" | grep -E -e "$forbidden" || true)
if [ -n "$bad" ]; then
  echo "kg-runner ($runner) holds supervisor-only code:" >&2
  printf '%s\n' "$bad" >&2
  exit 1
fi
echo "kg-runner: $(printf '%s\n' "$names" | wc -l) symbols, none of the supervisor's"
