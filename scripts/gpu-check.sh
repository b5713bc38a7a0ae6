#!/usr/bin/env bash
# Runs ON the GPU machine, from the repository root, with the carry dir made by
# scripts/gpu-prepare.sh (default .carry/). No build happens here: the machine has the NVIDIA
# driver but none of our Debian libraries; they come in .carry/lib.
#   1. what machine this is (nvidia-smi, the carry's manifest, missing libraries if any);
#   2. `dense-rt packs` (pack discovery, scores and selection on the real GPU);
#   3. every test binary, GPU tests first, with paths rebased onto this checkout and the carry;
#   4. benchmarks (none yet; see the marked section);
#   5. a summary table, printed LAST: binary, passed / failed / skipped, wall time.
# Full logs (and gtest XML) go to $OUT if set, else to ./gpu-check-logs/.
#
# Usage: bash scripts/gpu-check.sh [carry-dir]
# Env:   DENSE_TEST_TIMEOUT  seconds per test binary (default 240)
#        DENSE_TEST_FILTER   a --gtest_filter for every binary (default: all tests)
# Exit status: 0 when no test failed and every binary ran to completion.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
carry_arg=${1:-$root/.carry}
if ! carry=$(cd "$carry_arg" 2>/dev/null && pwd); then
  echo "gpu-check: carry dir $carry_arg not found (run scripts/gpu-prepare.sh on the build machine first)" >&2
  exit 2
fi
logs=${OUT:-$root/gpu-check-logs}
mkdir -p "$logs"
timeout_s=${DENSE_TEST_TIMEOUT:-240}

# The binaries find .carry/lib through their RUNPATH; the libraries those libraries need and the
# dlopen'ed packs need it on the search path too.
export LD_LIBRARY_PATH="$carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# Rebase the paths compiled into the test binaries (tests/common/test_paths.hpp) and the CLI.
export DENSE_SOURCE_DIR="$root"
export DENSE_BUILD_DIR="$carry"
export DENSE_MODELS_DIR="$root/models"

section() { printf '\n===== %s =====\n' "$*"; }

# ---- 1. machine ------------------------------------------------------------------------------
section "machine"
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi -L
  nvidia-smi --query-gpu=index,name,compute_cap,driver_version,memory.total,memory.used --format=csv 2>/dev/null
else
  echo "nvidia-smi not found"
fi
echo "host: $(uname -srm), $(nproc) cores"
sed -n '1,3p' "$carry/MANIFEST.txt" 2>/dev/null
missing=0
for elf in "$carry"/bin/* "$carry"/lib/dense-rt/packs/*.so; do
  if ldd "$elf" 2>&1 | grep -q 'not found'; then
    echo "MISSING LIBRARIES for ${elf#$root/}:"; ldd "$elf" | grep 'not found'; missing=1
  fi
done
[ "$missing" -eq 0 ] && echo "libraries: every carried binary resolves all its libraries"

# ---- 2. packs --------------------------------------------------------------------------------
section "dense-rt packs"
"$carry/bin/dense-rt" packs 2>&1 | tee "$logs/dense-rt-packs.log"
echo "(exit status ${PIPESTATUS[0]})"

# ---- 3. tests --------------------------------------------------------------------------------
# GPU tests first, then the rest of the suite in name order.
tests=()
[ -x "$carry/bin/test_cuda" ] && tests+=("$carry/bin/test_cuda")
for t in "$carry"/bin/test_*; do
  [ "$t" = "$carry/bin/test_cuda" ] || tests+=("$t")
done

rows=()
any_failed=0
for t in "${tests[@]}"; do
  name=$(basename "$t")
  log="$logs/$name.log"
  args=(--gtest_color=no "--gtest_output=xml:$logs/$name.xml")
  [ -n "${DENSE_TEST_FILTER:-}" ] && args+=("--gtest_filter=$DENSE_TEST_FILTER")
  section "$name"
  start=$(date +%s.%N)
  timeout "$timeout_s" "$t" "${args[@]}" >"$log" 2>&1
  rc=$?
  wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  passed=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\{0,1\}\..*/\1/p' "$log" | tail -1)
  failed=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) tests\{0,1\}, listed below:.*/\1/p' "$log" | tail -1)
  skipped=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) tests\{0,1\}, listed below:.*/\1/p' "$log" | tail -1)
  passed=${passed:-0}; failed=${failed:-0}; skipped=${skipped:-0}
  status=ok
  if [ "$rc" -eq 124 ]; then status="TIMEOUT(${timeout_s}s)"
  elif [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then status="CRASH(rc=$rc)"
  elif [ "$failed" -ne 0 ]; then status=FAILED
  fi
  [ "$status" = ok ] || any_failed=1
  grep -m1 '^\[ cuda     \]' "$log"  # which pack and device the GPU tests used
  echo "$passed passed, $failed failed, $skipped skipped, ${wall}s, rc=$rc  (log: ${log#$root/})"
  if [ "$skipped" -ne 0 ]; then
    echo "skip reasons:"
    grep -A1 ': Skipped$' "$log" | grep -v -e '^--$' -e ': Skipped$' | sort | uniq -c | sort -rn | head -8
  fi
  if [ "$status" != ok ]; then
    echo "failed tests:"
    grep '^\[  FAILED  \] [A-Za-z]' "$log" | head -20
    echo "first failure messages:"
    grep -m 8 -A 6 -e 'Failure$' -e 'error: ' "$log" | head -60
    [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ] && tail -20 "$log"
  fi
  rows+=("$(printf '%-18s %7s %7s %7s %9s  %s' "$name" "$passed" "$failed" "$skipped" "${wall}s" "$status")")
done

# ---- 4. benchmarks ---------------------------------------------------------------------------
# Later: GEMV / decode benchmarks, each reporting achieved GB/s and the fraction of a bandwidth
# ceiling measured in the same run (design.md, "Performance model"). Add them here and append
# their rows to bench_rows so they land in the summary.
bench_rows=()
section "benchmarks"
echo "(none yet)"

# ---- 5. summary (keep this last) -------------------------------------------------------------
section "summary"
grep -m1 -h '^\[ cuda     \]' "$logs"/test_cuda.log 2>/dev/null ||
  echo "[ cuda     ] (GPU session not started: see test_cuda above)"
printf '%-18s %7s %7s %7s %9s  %s\n' binary passed failed skipped wall status
for r in "${rows[@]}"; do echo "$r"; done
for r in "${bench_rows[@]}"; do echo "$r"; done
if [ "$any_failed" -ne 0 ]; then
  echo "gpu-check: FAILURES (logs in ${logs#$root/})"
  exit 1
fi
echo "gpu-check: all test binaries passed (logs in ${logs#$root/})"
