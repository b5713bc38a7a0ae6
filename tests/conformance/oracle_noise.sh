#!/usr/bin/env bash
# Measures how far llama.cpp moves from ITSELF when only the float summation order changes (other CPU
# variant libraries, one token per decode call): the noise floor behind the quantized-case bounds of
# conformance_test.cpp (README.md, "Tolerances"). Not run by the tests.
#
#   tests/conformance/oracle_noise.sh BUILD_DIR [SHAPE...]     default shapes: tiny small wide deep
#
# Needs BUILD_DIR/bin/{dense-rt,llama-logits,compare-logits} and the oracle in $DENSE_LLAMA_ORACLE_DIR
# or <repo>/.oracle/lib. Prints one line per shape, prompt length and comparison.
set -euo pipefail

build="${1:?usage: oracle_noise.sh BUILD_DIR [SHAPE...]}"
shift
shapes=("$@")
[[ ${#shapes[@]} -eq 0 ]] && shapes=(tiny small wide deep)
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
lib="${DENSE_LLAMA_ORACLE_DIR:-$repo/.oracle/lib}"
mix="${MIX:-seed-iq4}"
vocab=4096
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

random_ids() {  # N SEED -> N comma-separated ids below $vocab
    awk -v n="$1" -v seed="$2" -v v="$vocab" 'BEGIN { srand(seed); for (i = 0; i < n; i++) printf "%s%d", (i ? "," : ""), int(rand() * v) }'
}

summary() {  # ORACLE OURS -> "max ... mean ... kl max ... top-1 ... largest flipped margin ..."
    "$build/bin/compare-logits" "$1" "$2" --worst 0 | awk '
        $6 == "NO" { if ($7 > flip) flip = $7 }
        /^max\|diff\|:/ { m = $3; mean = $5 } /^KL:/ { k = $3; kmean = $5 } /^top-1/ { a = $3 }
        END { printf "max %s mean %s  KL max %s mean %s  top-1 %s  largest flipped margin %g", m, mean, k, kmean, a, flip + 0 }'
}

for shape in "${shapes[@]}"; do
    model="$work/$shape.gguf"
    "$build/bin/dense-rt" synth --shape "$shape" --mix "$mix" --seed 101 --vocab-size "$vocab" -o "$model" >/dev/null 2>&1
    for n in 1 7 300; do
        ids="$(random_ids "$n" "$n")"
        "$build/bin/llama-logits" --lib-dir "$lib" --model "$model" --ids "$ids" --out "$work/ref.f32" 2>/dev/null
        for run in "--variant x64" "--variant zen4" "--variant sse42" "--batch 1"; do
            # shellcheck disable=SC2086  # $run is two words on purpose
            if ! "$build/bin/llama-logits" --lib-dir "$lib" --model "$model" --ids "$ids" $run --out "$work/other.f32" 2>/dev/null; then
                echo "$shape n=$n $run: cannot run here"
                continue
            fi
            echo "$shape n=$n haswell vs $run: $(summary "$work/ref.f32" "$work/other.f32")"
        done
    done
done
