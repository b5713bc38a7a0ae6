#!/usr/bin/env bash
# Builds dense-rt if needed (installing its Debian dependencies), then runs it with the given
# arguments. The README's run command: bash scripts/dense-rt.sh --config configs/tiny.yaml info
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/build.sh" "$root/build"
cd "$root"
exec "$root/build/bin/dense-rt" "$@"
