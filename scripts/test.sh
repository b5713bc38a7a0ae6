#!/usr/bin/env bash
# Builds dense-rt and runs the whole test suite. The README's test command: bash scripts/test.sh
#   --sanitize   build in build-asan/ with AddressSanitizer + UndefinedBehaviorSanitizer instead
# Installs missing Debian packages and fetches the llama.cpp CPU libraries used as a test oracle
# (npm package @node-llama-cpp/linux-x64@3.22.1) into .oracle/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$root/build
args=()
if [ "${1:-}" = "--sanitize" ]; then
  dir=$root/build-asan
  # -O1: ASan's own recommendation; a -O0 build made the sanitizer run take most of CI's time.
  # -g1: line tables are all a sanitizer report needs (file:line in every frame); full -g made
  # this build 2.6 GB, and CI's disk once ran out while writing it.
  args=(-DDENSE_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1")
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:halt_on_error=1}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
fi
bash "$root/scripts/install-deps.sh"
bash "$root/scripts/fetch-oracle.sh" "$root/.oracle" >&2
export DENSE_LLAMA_ORACLE_DIR=$root/.oracle/lib
bash "$root/scripts/build.sh" "$dir" "${args[@]}"
ctest --test-dir "$dir" --output-on-failure -j "${DENSE_JOBS:-$(nproc)}" --timeout 900
