#!/usr/bin/env bash
# The pack SDK end to end, as a third party uses it (ctest label `sdk`):
#
#   1. `cmake --install` the build tree into a fresh prefix and check its layout;
#   2. build the example pack (share/dense-rt/examples/q4-m64, copied out of the prefix) against the
#      installed SDK only, with warnings as errors, and install it into the same prefix;
#   3. `dense-rt packs` lists it and what it registers; dense-rt refuses a model in its format
#      without it, with a message naming the format;
#   4. write models in example.q4_m64 with its converter and run them (run config `packs:`):
#      a. the converted model vs the same weights decoded to F32 (run by cpu-ref): equal up to float
#         summation order, which checks the pack's GEMV and EMBED_ROW number for number;
#      b. only the LM head in q4_m64 vs the all-Q8_0 model: the logits differ by exactly the error
#         the 4-bit rounding puts into one GEMV, which the converter measures (see below);
#      c. (information only) the whole model in q4_m64 vs Q8_0.
#
# usage: out_of_tree_test.sh BUILD_DIR WORK_DIR CMAKE COMPARE_LOGITS REL_RMS_TOOL TEST_SDK
set -euo pipefail

build=$1 work=$2 cmake=$3 compare=$4 rel_rms=$5 test_sdk=$6
prefix=$work/prefix
models=$work/models

step() { printf '\n=== %s\n' "$*"; }
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }
# The run must not pick up packs, devices or model descriptions from the environment.
unset DENSE_PACK_PATH DENSE_FAKE_DEVICES DENSE_MODELS_DIR

rm -rf "$work"
mkdir -p "$work" "$models"

step "install $build into $prefix"
"$cmake" --install "$build" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log"; fail "cmake --install"; }
for f in bin/dense-rt include/dense/abi/dense_abi.h include/dense/sdk/pack.hpp include/dense/sdk/gguf.hpp \
         lib/cmake/DenseRT/DenseRTConfig.cmake lib/cmake/DenseRT/DenseRTConfigVersion.cmake \
         lib/cmake/DenseRT/DenseRTTargets.cmake lib/cmake/DenseRT/DensePack.cmake \
         lib/dense-rt/packs/libdense-cpu-ref.so share/dense-rt/models/qwen35.yaml \
         share/dense-rt/examples/q4-m64/CMakeLists.txt; do
  [ -e "$prefix/$f" ] || fail "the install lacks $f"
done
dense_rt=$prefix/bin/dense-rt
if command -v readelf >/dev/null; then
  readelf -d "$dense_rt" | grep -E 'R(UN)?PATH' | grep '\$ORIGIN/../lib' >/dev/null || fail "installed dense-rt has no \$ORIGIN/../lib RPATH"
fi
# Run from elsewhere: packs and model descriptions are found relative to the binary.
(cd "$work" && "$dense_rt" packs --json >"$work/packs-installed.json" 2>"$work/packs-installed.err") ||
  { cat "$work/packs-installed.err"; fail "installed dense-rt packs"; }
grep -q "\"file\": \"$prefix/lib/dense-rt/packs/libdense-cpu-ref.so\"" "$work/packs-installed.json" ||
  fail "installed dense-rt did not load $prefix/lib/dense-rt/packs/libdense-cpu-ref.so: $(cat "$work/packs-installed.json")"

step "build the example pack out of tree against the installed SDK only"
# A copy outside both trees: nothing can reach the dense-rt sources by a relative path.
cp -r "$prefix/share/dense-rt/examples/q4-m64" "$work/example-src"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
"$cmake" -S "$work/example-src" -B "$work/example-build" "${generator[@]}" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_COMPILE_WARNING_AS_ERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$work/example-configure.log" 2>&1 ||
  { cat "$work/example-configure.log"; fail "configuring the example"; }
"$cmake" --build "$work/example-build" -j 2 >"$work/example-build.log" 2>&1 ||
  { cat "$work/example-build.log"; fail "building the example"; }
grep -q "warning:" "$work/example-build.log" && { cat "$work/example-build.log"; fail "the example built with warnings"; }
pack=$work/example-build/libdense-example-q4m64.so
convert=$work/example-build/dense-q4m64-convert
[ -f "$pack" ] || fail "no $pack"
if command -v nm >/dev/null; then
  exports=$(nm -D --defined-only "$pack" | awk '$2 == "T" {print $3}' | sort | tr '\n' ' ')
  [ "$exports" = "dense_pack_init dense_pack_release dense_pack_score " ] || fail "the pack exports: $exports"
fi

step "the example pack's ops through the host (test_sdk ExamplePack.*)"
DENSE_EXAMPLE_PACK=$pack "$test_sdk" --gtest_filter='ExamplePack.*' --gtest_brief=1 || fail "ExamplePack tests"
DENSE_EXAMPLE_PACK=$pack "$test_sdk" --gtest_filter='ExamplePack.*' 2>&1 | grep SKIPPED >/dev/null &&
  fail "ExamplePack tests skipped although the pack was given"

step "dense-rt packs lists the third-party pack and what it registers"
"$dense_rt" packs --pack "$pack" >"$work/packs.txt" 2>"$work/packs.err" || { cat "$work/packs.err"; fail "dense-rt packs --pack"; }
cat "$work/packs.txt"
grep -E "example-q4m64 +1\.0\.0 +1\.[0-9]+ +usable +$pack" "$work/packs.txt" >/dev/null || fail "pack line"
grep -q "example-q4m64 (cpu, usable), registers types: example.q4_m64" "$work/packs.txt" || fail "registered type"
grep -qE "gemv_q +example\.q4_m64/f32" "$work/packs.txt" || fail "gemv_q line"
grep -qE "embed_row +example\.q4_m64/-" "$work/packs.txt" || fail "embed_row line"
grep -qE "dequantize +example\.q4_m64/-" "$work/packs.txt" || fail "dequantize line"
"$dense_rt" packs --pack "$pack" --json >"$work/packs.json" 2>/dev/null
grep -q '"name": "example.q4_m64"' "$work/packs.json" || fail "--json lacks the type"
# Installed into the prefix, the pack is found with no configuration at all.
"$cmake" --install "$work/example-build" --prefix "$prefix" >/dev/null
# (Into a file, not `| grep -q`: under pipefail grep -q exits at the first match and dense-rt,
# still writing, dies of SIGPIPE, failing the pipeline at random.)
(cd "$work" && "$dense_rt" packs >"$work/packs-default.txt" 2>/dev/null) || fail "installed dense-rt packs"
grep -q "$prefix/lib/dense-rt/packs/libdense-example-q4m64.so" "$work/packs-default.txt" ||
  fail "the pack installed into $prefix/lib/dense-rt/packs is not found by default; installed: $(find "$prefix/lib" -name '*.so'); dense-rt packs: $(cat "$work/packs-default.txt")"
rm "$prefix/lib/dense-rt/packs/libdense-example-q4m64.so"  # from here on, only through run configs

step "models: tiny qwen35 in Q8_0 (vocabulary cut to 8192 to keep the files small) and conversions"
# No --vocab, from outside the source tree: the installed copy in share/dense-rt/vocab must be used.
(cd "$work" && "$dense_rt" synth --arch qwen35 --shape tiny --mix q8_0 --seed 1 --vocab-size 8192 --out "$models/q8.gguf") \
  >"$work/synth.log" 2>&1 || { cat "$work/synth.log"; fail "synth"; }
grep -q "binding   OK against $prefix/share/dense-rt/models/qwen35.yaml" "$work/synth.log" ||
  fail "the installed dense-rt did not use its installed model description: $(tail -1 "$work/synth.log")"
grep -q "from $prefix/share/dense-rt/vocab/ggml-vocab-qwen35.gguf" "$work/synth.log" ||
  fail "the installed dense-rt did not use its installed vocabulary: $(grep vocab "$work/synth.log")"
conv() { "$convert" "$models/q8.gguf" "$@" | tee -a "$work/convert.log"; }
conv "$models/q4.gguf"
conv "$models/q4-ref.gguf" --dequantized-f32
conv "$models/q4e.gguf" --include-embeddings
conv "$models/q4e-ref.gguf" --include-embeddings --dequantized-f32
head_err=$(conv "$models/head.gguf" --only output.weight | awk '/weight relative rms error/ {print $NF}')
[ -n "$head_err" ] || fail "the converter did not report the weight error"

# One run config per model; the pack comes in through `packs:` (a path relative to the config).
ids=9,70,11,1879,3974,13,576,2038
run_model() {  # name
  cat >"$models/$1.yaml" <<EOF
model: $1.gguf
context: 64
placement: cpu
kv_type: f32
packs:
  paths: [../example-build/libdense-example-q4m64.so]
EOF
  "$dense_rt" --config "$models/$1.yaml" --prompt-ids "$ids" -n 1 --temp 0 --all-logits \
    --logits-out "$models/$1.f32" >"$models/$1.out" 2>"$models/$1.err" || { cat "$models/$1.err"; fail "running $1"; }
}
for m in q8 q4 q4-ref q4e q4e-ref head; do run_model "$m"; done

step "a model in the pack's format without the pack is refused with a clear message"
if "$dense_rt" -m "$models/q4.gguf" --prompt-ids 1 -n 1 >/dev/null 2>"$work/nopack.err"; then
  fail "dense-rt ran a q4_m64 model without the pack"
fi
cat "$work/nopack.err"
grep -q "'example.q4_m64' (file id 1024), which no loaded pack registered" "$work/nopack.err" || fail "unclear refusal"

# (a) Same weights, two code paths: the pack computes sum_b d_b*sum(q*x) + m_b*sum(x) in float,
# cpu-ref sum_j w_j*x_j over the decoded floats. Only float rounding differs: ~1e-7 relative per
# operation, grown through 8 layers to ~1e-5 of logits of size ~5 (measured: 6e-5). 1e-3 leaves
# room for other compilers and still catches any decoding slip (a wrong nibble or scale moves a
# logit by O(1)); KL 1e-8 likewise (measured 1e-10); top-1 must agree wherever the margin is > 1e-3.
step "(a) q4_m64 model == its weights decoded to F32, up to float rounding"
"$compare" "$models/q4-ref.f32" "$models/q4.f32" --bounds max_abs=1e-3,kl=1e-8,margin=1e-3 || fail "(a) q4"
"$compare" "$models/q4e-ref.f32" "$models/q4e.f32" --bounds max_abs=1e-3,kl=1e-8,margin=1e-3 || fail "(a) q4e (EMBED_ROW)"

# (b) Only output.weight differs, so every hidden state is bit-identical and
#     logits_q4 - logits_q8 = (W4 - W8) h + W8 (h - q8_0(h))
# (the Q8_0 model's GEMV quantizes its input to Q8_0; the pack's takes F32). The rounding error
# E = W4 - W8 does not depend on h, so over the 8192 rows rms(E h) / rms(W8 h) = ||E|| / ||W8||,
# which the converter reports (head_err, ~0.067); the activation term adds ~0.006 in quadrature
# (Q8_0 step amax/127 on ~Gaussian values), i.e. +0.4%. With 8192 rows per position the sampling
# noise is ~1-2% (measured ratios 0.985-1.033), so each position must be within 15% of head_err.
# Too small means the pack's weights did not take part; too large, a GEMV or decoding error.
step "(b) LM head in q4_m64 vs Q8_0: the difference has the predicted size (weight error $head_err)"
lo=$(awk -v e="$head_err" 'BEGIN {print e * 0.85}')
hi=$(awk -v e="$head_err" 'BEGIN {print e * 1.15}')
"$rel_rms" "$models/q8.f32" "$models/head.f32" --min "$lo" --max "$hi" || fail "(b) LM head"

# (c) Information: with every matrix at 4 bits, a random network amplifies the ~7% per-GEMV error
# through 8 layers (relative logit differences of ~0.6-1 were measured); no bound is claimed.
step "(c) information only: whole model q4_m64 vs Q8_0"
"$rel_rms" "$models/q8.f32" "$models/q4.f32" || true

printf '\nPASS: SDK installed, example pack built out of tree, loaded by config and checked\n'
