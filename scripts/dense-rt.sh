#!/usr/bin/env bash
# Builds dense-rt if needed (installing its Debian dependencies), generates the embedded default
# model if it is missing, then runs dense-rt with the given arguments. The README's run command:
#   bash scripts/dense-rt.sh --config configs/tiny.yaml info
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/build.sh" "$root/build"
cd "$root"
# configs/tiny.yaml's model: a synthetic tiny qwen35 with all 12 quant formats (git-ignored, ~50 MB,
# deterministic: the same bytes on every machine for seed 1).
tiny="models/tiny/qwen35-tiny-seed-iq4.gguf"
if [ ! -f "$tiny" ]; then
  echo "dense-rt.sh: generating $tiny" >&2
  "$root/build/bin/dense-rt" synth --arch qwen35 --shape tiny --mix seed-iq4 --seed 1 --out "$tiny" >&2
fi
exec "$root/build/bin/dense-rt" "$@"
