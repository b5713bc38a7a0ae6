#!/usr/bin/env bash
# Fetch the prebuilt llama.cpp CPU libraries that the cpu-ref tests use as a TEST ORACLE (never linked
# into dense-rt): the release bundled with node-llama-cpp 3.22.1, from its npm package.
#
#   scripts/fetch-oracle.sh [dest]        default dest: <repo>/.oracle (git-ignored)
#
# Afterwards dest/lib/ holds libggml-base.so (dequantize_row_*, quantize_row_q8_K_ref, ...), the
# libggml-cpu-<isa>.so variants (ggml_vec_dot_*), libggml.v0.5.0.so and libllama.v0.5.0.so. Tests look in $DENSE_LLAMA_ORACLE_DIR, else in
# <repo>/.oracle/lib. Idempotent: does nothing if the libraries are already there.
set -euo pipefail

PACKAGE="@node-llama-cpp/linux-x64@3.22.1"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="${1:-$repo/.oracle}"
lib="$dest/lib"
stamp="$lib/.package"

if [[ -f "$lib/libggml-base.so" && -f "$lib/libggml-cpu-haswell.so" && -f "$lib/libllama.v0.5.0.so" && -f "$stamp" &&
      "$(cat "$stamp")" == "$PACKAGE" ]]; then
    echo "llama.cpp oracle already present: $lib"
    exit 0
fi

if [[ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]]; then
    echo "fetch-oracle.sh: the oracle package is built for linux-x64 only (this is $(uname -s)-$(uname -m))" >&2
    exit 1
fi
if ! command -v npm >/dev/null 2>&1; then
    echo "fetch-oracle.sh: needs npm (apt-get install npm) to download $PACKAGE" >&2
    exit 1
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

echo "downloading $PACKAGE ..."
# npm pack fetches the published tarball (integrity-checked against the registry) without installing.
tarball="$(cd "$tmp" && npm pack --silent "$PACKAGE" | tail -n 1)"
tar -xzf "$tmp/$tarball" -C "$tmp"

src="$tmp/package/bins/linux-x64"
if [[ ! -f "$src/libggml-base.so" ]]; then
    echo "fetch-oracle.sh: $PACKAGE has no bins/linux-x64/libggml-base.so; layout changed?" >&2
    exit 1
fi

mkdir -p "$lib"
# libllama + libggml (the backend registry) serve the tokenizer and model oracles (vocab/model loading).
cp "$src"/libggml-base.so "$src"/libggml-cpu-*.so "$src"/libggml.v0.5.0.so "$src"/libllama.v0.5.0.so "$lib/"
[[ -f "$tmp/package/LICENSE" ]] && cp "$tmp/package/LICENSE" "$dest/LICENSE"
printf '%s\n' "$PACKAGE" > "$stamp"
echo "llama.cpp oracle libraries in: $lib"
