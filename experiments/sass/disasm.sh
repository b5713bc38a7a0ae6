#!/usr/bin/env bash
# SASS of one pack kernel file, without a GPU: compiles plugins/cuda-common/src/kernels/NAME.cu for
# sm_90 (the sm_90 pack's flags), then disassembles it and prints the instruction mix of the hottest
# loop of each kernel whose mangled name contains PATTERN (loop_mix.py).
#   usage: experiments/sass/disasm.sh NAME [PATTERN] [-- extra nvcc flags]     e.g.  gemv_iq4 IQ4_XSDot
#   needs: a configured build/ (for the generated quant-table header), and nvdisasm: CUDA 13 here has
#          none, so it takes Debian's non-free nvidia-cuda-toolkit (11.8) one, unpacked into
#          $DENSE_NVDISASM_DIR (default /tmp/nvdisasm-11.8) the first time (apt-get download; no root
#          install). 11.8 reads sm_90 code but not CUDA 13's ELF header (ABI version 8, the arch in
#          e_flags bits 8-15), so the header is rewritten in the old form (ABI 7, sm | sm << 16 |
#          0x500) on a copy; the code itself is untouched.
# Output: build/sass/NAME.sass (the full listing) and the loop table on stdout.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
name=$1; shift
pattern=${1:-}; [ $# -gt 0 ] && shift
[ "${1:-}" = "--" ] && shift
tools=${DENSE_NVDISASM_DIR:-/tmp/nvdisasm-11.8}
if [ ! -x "$tools/usr/bin/nvdisasm" ]; then
  mkdir -p "$tools/apt/lists/partial" "$tools/apt/cache/archives/partial"
  printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: non-free\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' >"$tools/apt/non-free.sources"
  opts=(-o "Dir::Etc::SourceList=$tools/apt/non-free.sources" -o Dir::Etc::SourceParts=/dev/null
        -o "Dir::State::Lists=$tools/apt/lists" -o "Dir::Cache=$tools/apt/cache")
  apt-get "${opts[@]}" update >/dev/null
  (cd "$tools" && apt-get "${opts[@]}" download nvidia-cuda-toolkit >/dev/null 2>&1)
  dpkg-deb -x "$tools"/nvidia-cuda-toolkit_*.deb "$tools"
fi
out=$root/build/sass
mkdir -p "$out"
/usr/local/cuda/bin/nvcc -DDENSE_CUDA_PACK_NAME=\"cuda-sm90\" -DDENSE_CUDA_PACK_VERSION=\"0.1.0\" -DDENSE_CUDA_TARGET_CC=90 \
  -I"$root/plugins/cuda-common/src" -I"$root/runtime/include" -I"${DENSE_GEN_DIR:-$root/build/plugins/generated}" \
  -O2 -DNDEBUG -arch=sm_90 -cubin -std=c++17 --fmad=false "$@" -o "$out/$name.cubin" \
  "$root/plugins/cuda-common/src/kernels/$name.cu"
python3 - "$out/$name.cubin" "$out/$name.v7.cubin" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
sm = (struct.unpack_from('<I', b, 0x30)[0] >> 8) & 0xFF
b[8] = 7                                              # EI_ABIVERSION
struct.pack_into('<I', b, 0x30, sm << 16 | 0x500 | sm)  # e_flags as CUDA 11 wrote them
open(sys.argv[2], 'wb').write(b)
PY
"$tools/usr/bin/nvdisasm" -c "$out/$name.v7.cubin" >"$out/$name.sass"
python3 "$root/experiments/sass/loop_mix.py" "$out/$name.sass" "$pattern"
