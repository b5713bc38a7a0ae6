#!/usr/bin/env bash
# Next session, call 1 (prepared in session 20). On the build machine first:
#   git apply experiments/patches/mma-slice-pairs.patch && bash scripts/gpu-prepare.sh
# then run(command="bash experiments/patches/mma-slice-pairs-gpu-call.sh", carry=[".carry"]).
# Checks the branch's mma GEMM (a streamed matrix's 8 slices two to a warp in one step sequence):
# GPU tests bit for bit (CudaGemm.*EveryColumnIsItsGemv, GpuSession.BatchedPrefill*), then pp512 with
# and without the pairs in the same run (session 20: pp512 ~985-991 with 8 warps per tile, ~1040 with
# session 18's 4 slices).
DENSE_TESTS_ONLY="test_cuda test_exec test_plan" DENSE_BENCH_CPU_ROWS=0 DENSE_PREFILL_CHUNKS= DENSE_BUDGETS= DENSE_PEER=0 \
DENSE_PROFILE_STEPS=0 DENSE_BENCH_GEMV=0 DENSE_BENCH_AB_ENV=DENSE_CUDA_GEMM_MMA_PAIRS=0 DENSE_BENCH_AB_ARGS="-p 512 -n 0 -r 3" \
DENSE_BENCH_ARGS="-p 512 -n 128 -d 0 -r 3" bash scripts/gpu-check.sh
