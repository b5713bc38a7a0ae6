#!/usr/bin/env bash
# Configures and builds dense-rt. Usage: scripts/build.sh [build-dir] [extra cmake args...]
# Default build dir: build/. Installs missing Debian dependencies first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/build}; shift || true
bash "$root/scripts/install-deps.sh"
jobs=${DENSE_JOBS:-$(nproc)}
if [ ! -f "$dir/build.ninja" ]; then
  cmake -S "$root" -B "$dir" -G Ninja "$@" >&2
elif [ $# -gt 0 ]; then
  cmake "$dir" "$@" >&2
fi
ninja -C "$dir" -j "$jobs" >&2
