#!/usr/bin/env bash
# Prepares a run on the GPU machine. Runs HERE (the build machine, which has nvcc but no GPU):
#   1. configures and builds a Release tree with the CUDA packs in build-gpu/;
#   2. copies what the GPU machine needs at run time into .carry/ with the build tree's layout
#        .carry/bin/                 dense-rt and every test binary
#        .carry/lib/                 the non-system shared libraries they need (yaml-cpp, spdlog, fmt, boost, ...)
#        .carry/lib/dense-rt/packs/  the kernel packs (cuda-sm90, cuda-sm120, cpu-ref)
#        .carry/tests/test-packs/    the deliberately broken/fake packs test_packs loads
#      The GPU machine has the NVIDIA driver, cmake and ninja but none of our Debian libraries.
#   3. checks the carry dir: size under the 64 MiB carry limit, and every binary resolving all its
#      libraries from .carry/lib or the base system (ldd with an empty LD_LIBRARY_PATH), and that
#      the carried dense-rt starts.
# Then, from the lead session: run(command="bash scripts/gpu-check.sh", carry=[".carry"]).
#
# Usage: bash scripts/gpu-prepare.sh [--with-libstdcxx] [--build-dir DIR] [--with-experiments] [--xz]
#   --with-libstdcxx  also carry libstdc++/libgcc_s, for a GPU machine whose C++ runtime is older
#                     than Debian 12's (symptom there: "GLIBCXX_3.4.30 not found").
#   --build-dir DIR   carry an existing build tree with the CUDA packs (e.g. build/, which
#                     `scripts/test.sh` makes as RelWithDebInfo: the same -O2 host code and the same
#                     ptxas-optimised device code as build-gpu/, only with debug info, which the
#                     carry strips) instead of configuring build-gpu/: saves a second full build.
#   --with-experiments also build experiments/gemv_stream.cu (the GEMV layout and A/B experiment,
#                     ~3.5 MB, a few minutes of nvcc) into .carry/bin/gemv_stream, which gpu-check.sh
#                     runs when DENSE_EXPERIMENT_ARGS is set.
#   --xz              also pack the carry dir into .carry-xz/carry.tar.xz (~4x smaller: 40 MiB of
#                     binaries pack to 10), for calls whose carry would pass the device tool's 64 MiB
#                     limit (tracked files, .peer and the experiment count too); then the 64 MiB check
#                     applies to the archive, and on the GPU machine:
#                     run(command="bash scripts/gpu-check.sh .carry-xz/carry.tar.xz", carry=[".carry-xz"]).
# Env: DENSE_JOBS (parallel build jobs, default 2).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-gpu
carry=$root/.carry
limit_bytes=$((64 * 1024 * 1024))
with_libstdcxx=0
reuse_build=0
with_experiments=0
pack_xz=0
while [ $# -gt 0 ]; do
  case "$1" in
    --with-libstdcxx) with_libstdcxx=1 ;;
    --with-experiments) with_experiments=1 ;;
    --xz) pack_xz=1 ;;
    --build-dir) [ $# -ge 2 ] || { echo "gpu-prepare: --build-dir needs a directory" >&2; exit 2; }
                 build=$(cd "$2" && pwd); reuse_build=1; shift ;;
    *) echo "gpu-prepare: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done

if [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "gpu-prepare: /usr/local/cuda/bin/nvcc not found; the CUDA packs cannot be built here" >&2
  exit 1
fi
# Best effort: some packages in that list (npm, for the test oracle) are not needed for this build;
# if a real build dependency is missing, cmake below says which.
if ! bash "$root/scripts/install-deps.sh"; then
  echo "gpu-prepare: install-deps.sh failed; continuing with what is installed" >&2
fi

# ---- 1. Release build with CUDA ---------------------------------------------------------------
# Host C++ at -O2 rather than CMake's Release -O3: g++ 12's -O3 inlining produces false
# -Wrestrict / -Wstringop-overflow reports inside libstdc++ (GCC bugs 105329, 106199), which
# -Werror turns into a failed build of correct code. Device code keeps nvcc's Release -O3.
if [ "$reuse_build" -eq 0 ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDENSE_WITH_CUDA=ON -DDENSE_SANITIZE=OFF \
    "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" >&2
elif grep -q '^DENSE_SANITIZE:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
  echo "gpu-prepare: $build is a sanitizer build; carry a plain one" >&2
  exit 1
fi
ninja -C "$build" -j "${DENSE_JOBS:-2}" >&2
for pack in cuda-sm90 cuda-sm120; do
  if [ ! -f "$build/lib/dense-rt/packs/libdense-$pack.so" ]; then
    echo "gpu-prepare: libdense-$pack.so was not built in $build (CUDA disabled? see the cmake output)" >&2
    exit 1
  fi
done

# ---- 2. the carry dir ---------------------------------------------------------------------------
rm -rf "$carry"
mkdir -p "$carry/bin" "$carry/lib/dense-rt/packs" "$carry/tests"
cp -p "$build/bin/dense-rt" "$carry/bin/"
# The small tools tests call (compare-logits: the conformance CLI test; llama-logits: the oracle
# runner, which skips there without the oracle libraries).
for tool in compare-logits llama-logits; do
  if [ -x "$build/bin/$tool" ]; then cp -p "$build/bin/$tool" "$carry/bin/"; fi
done
for t in "$build"/bin/test_*; do
  if [ -x "$t" ]; then cp -p "$t" "$carry/bin/"; fi
done
cp -p "$build"/lib/dense-rt/packs/*.so "$carry/lib/dense-rt/packs/"
if [ "$with_experiments" -eq 1 ]; then
  # The experiment's own build line (its header): nvcc only, sm_90, the pack's kernel sources.
  /usr/local/cuda/bin/nvcc -O3 -std=c++20 -arch=sm_90 -DDENSE_CUDA_TARGET_CC=90 -I"$root/plugins/cuda-common/src" \
    -I"$build/plugins/generated" "$root/experiments/gemv_stream.cu" "$root/experiments/gemv_ab_host.cpp" \
    "$root/plugins/cuda-common/src/kernels/launch_chain.cu" -o "$carry/bin/gemv_stream" >&2
fi
if [ -d "$build/tests/test-packs" ]; then
  cp -rp "$build/tests/test-packs" "$carry/tests/"
fi

# Libraries every Linux machine has (glibc, the C++ runtime, the vDSO) and the NVIDIA driver's own
# libcuda, which must come from the GPU machine's driver install, never from here.
is_system_lib() {
  local name=$1
  case "$name" in
    linux-vdso.so.*|ld-linux*.so.*|libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*) return 0 ;;
    libresolv.so.*|libutil.so.*) return 0 ;;
    libcuda.so.*|libnvidia-*.so.*) return 0 ;;
    libstdc++.so.*|libgcc_s.so.*) [ "$with_libstdcxx" -eq 0 ] && return 0 || return 1 ;;
  esac
  return 1
}

elfs=("$carry"/bin/* "$carry"/lib/dense-rt/packs/*.so)
if [ -d "$carry/tests/test-packs" ]; then
  while IFS= read -r -d '' f; do elfs+=("$f"); done < <(find "$carry/tests/test-packs" -name '*.so' -print0)
fi

# ldd lists direct and indirect dependencies, so one pass over the binaries finds them all.
declare -A copied=()
for elf in "${elfs[@]}"; do
  while read -r name arrow path _; do
    [ "$arrow" = "=>" ] || continue
    is_system_lib "$name" && continue
    if [ "$path" = "not" ]; then
      echo "gpu-prepare: $elf needs $name, which is not found on this machine either" >&2
      exit 1
    fi
    if [ -z "${copied[$name]:-}" ]; then
      cp -L "$path" "$carry/lib/$name"
      copied[$name]=$path
    fi
  done < <(env -u LD_LIBRARY_PATH ldd "$elf")
done

# Keep the carry small: drop symbol tables the run does not need (backtraces keep function names
# from .dynsym). Only our binaries; the Debian libraries are already stripped.
strip --strip-unneeded "$carry"/bin/* "$carry"/lib/dense-rt/packs/*.so 2>/dev/null || true

{
  echo "# dense-rt carry dir, made by scripts/gpu-prepare.sh"
  dirty=$(git -C "$root" diff --quiet 2>/dev/null || echo ' (+ uncommitted changes)')
  echo "commit: $(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)$dirty"
  echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n), $(/usr/local/cuda/bin/nvcc --version | tail -1), $(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$build/CMakeCache.txt") tree ${build#$root/}"
  echo "libraries copied from this machine:"
  for name in "${!copied[@]}"; do echo "  $name <- ${copied[$name]}"; done | sort
} > "$carry/MANIFEST.txt"

# ---- 3. checks ----------------------------------------------------------------------------------
size=$(du -sb "$carry" | cut -f1)
echo "gpu-prepare: $carry is $((size / 1024 / 1024)) MiB ($size bytes; limit $limit_bytes)" >&2
if [ "$size" -gt "$limit_bytes" ] && [ "$pack_xz" -eq 0 ]; then
  echo "gpu-prepare: the carry dir exceeds the 64 MiB carry limit (--xz packs it)" >&2
  du -ab "$carry" | sort -n | tail -15 >&2
  exit 1
fi

# Each binary must resolve every non-system library from .carry/lib: through its RUNPATH
# ($ORIGIN/../lib for bin/), or through LD_LIBRARY_PATH=.carry/lib, which gpu-check.sh sets
# (RUNPATH does not apply to the dependencies of a dependency, nor to dlopen'ed packs).
bad=0
for elf in "${elfs[@]}"; do
  while read -r name arrow path _; do
    [ "$arrow" = "=>" ] || continue
    if [ "$path" = "not" ]; then
      echo "gpu-prepare: $elf: $name not found" >&2; bad=1; continue
    fi
    is_system_lib "$name" && continue
    case "$path" in
      "$carry"/lib/*) ;;
      *) echo "gpu-prepare: $elf: $name resolves to $path, outside the carry dir" >&2; bad=1 ;;
    esac
  done < <(LD_LIBRARY_PATH="$carry/lib" ldd "$elf")
done
# And the plain RUNPATH case: a carried executable with an empty LD_LIBRARY_PATH.
if ! out=$(env LD_LIBRARY_PATH= "$carry/bin/dense-rt" --version 2>&1); then
  echo "gpu-prepare: the carried dense-rt does not start: $out" >&2
  bad=1
fi
if [ "$bad" -ne 0 ]; then
  echo "gpu-prepare: the carry dir is not self-contained" >&2
  exit 1
fi
if [ "$pack_xz" -eq 1 ]; then
  archive=$root/.carry-xz/carry.tar.xz
  mkdir -p "$root/.carry-xz"
  rm -f "$archive"
  tar -C "$root" -cf - .carry | xz -T0 -6 >"$archive.part"
  mv "$archive.part" "$archive"
  packed=$(stat -c %s "$archive")
  echo "gpu-prepare: $archive is $((packed / 1024 / 1024)) MiB ($packed bytes; limit $limit_bytes)" >&2
  if [ "$packed" -gt "$limit_bytes" ]; then
    echo "gpu-prepare: even packed, the carry exceeds the 64 MiB carry limit" >&2
    exit 1
  fi
  echo "gpu-prepare: ready. On the GPU machine (repo root): bash scripts/gpu-check.sh .carry-xz/carry.tar.xz   (carry: .carry-xz)" >&2
else
  echo "gpu-prepare: ready. On the GPU machine (repo root): bash scripts/gpu-check.sh   (carry: .carry)" >&2
fi
