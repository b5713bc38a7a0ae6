#!/usr/bin/env bash
# Every row kernel of the cpu-avx2 pack (each dot_rows<Format> instance) must contain a prefetch
# instruction. The prefetch of the next run (kernels/row_group.hpp) is what makes the CPU rows read at
# the core's rate, and the compiler can drop it without a trace: a loop whose body is only prefetches
# is deleted once inlined (session 46), and the kernels still pass every test and give the same bits.
# So this checks the machine code. Exit 77 (a skip) where objdump is missing.
#   usage: check_prefetch.sh PATH/libdense-cpu-avx2.so
set -euo pipefail
pack=$1
command -v objdump >/dev/null || { echo "SKIP: objdump not found (binutils), cannot read $pack"; exit 77; }
objdump -d --no-show-raw-insn -C "$pack" | awk '
  /^[0-9a-f]+ <.*>:$/ { name = $0; sub(/^[0-9a-f]+ </, "", name); sub(/>:$/, "", name)
                        kernel = (name ~ /dot_rows</); if (kernel) { kernels++; seen[name] = 0 } ; next }
  kernel && /prefetcht0/ { seen[name]++ }
  END {
    bad = 0
    for (k in seen) if (seen[k] == 0) { print "no prefetch in " k; bad++ }
    printf "%d row kernels, %d without a prefetch\n", kernels, bad
    exit (kernels == 0 || bad > 0) ? 1 : 0
  }'
