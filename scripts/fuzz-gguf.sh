#!/usr/bin/env bash
# Fuzzes the GGUF parser with libFuzzer (+ ASan + UBSan) for SECONDS (default 60).
#   scripts/fuzz-gguf.sh [SECONDS]
# Configures a clang build dir (build-fuzz, or $DENSE_FUZZ_BUILD_DIR), builds only the fuzz targets,
# writes the seed corpus (valid files from GgufWriter + the real files in tests/data) and runs.
# Exits non-zero if the fuzzer finds a crash, a sanitizer report or a non-GgufError exception;
# the reproducer is left in <build>/fuzz/gguf-artifacts/ (re-run: <build>/bin/fuzz_gguf FILE).
set -euo pipefail

seconds="${1:-60}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${DENSE_FUZZ_BUILD_DIR:-$root/build-fuzz}"
jobs="${DENSE_FUZZ_JOBS:-2}"

CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DDENSE_FUZZ=ON -DDENSE_WITH_CUDA=OFF -DDENSE_BUILD_TESTS=ON >/dev/null
ninja -C "$build" -j "$jobs" fuzz_gguf fuzz_gguf_corpus

seeds="$build/fuzz/gguf-seeds"
corpus="$build/fuzz/gguf-corpus"      # grows across runs
artifacts="$build/fuzz/gguf-artifacts"
rm -rf "$seeds"
mkdir -p "$seeds" "$corpus" "$artifacts"
"$build/bin/fuzz_gguf_corpus" "$seeds" "$root/tests/data"

# 64 KiB holds every generated seed whole (the largest is a few KiB); the real files are read
# truncated to it, which seeds the truncation paths.
"$build/bin/fuzz_gguf" "$corpus" "$seeds" \
  -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
  -dict="$root/tests/fuzz/gguf.dict" -artifact_prefix="$artifacts/" -print_final_stats=1
echo "fuzz-gguf: no findings in ${seconds}s"
