# dense_add_cuda_pack(<family>-<variant> TARGET_CC <cc>)
#
# Builds one CUDA kernel pack from the shared sources in plugins/cuda-common/src for one compute
# capability (90 = sm_90 cubin + compute_90 PTX, 120 = sm_120 cubin + compute_120 PTX). Every pack
# compiles the SAME sources; DENSE_CUDA_TARGET_CC selects the per-arch tuning constants in
# src/target_tuning.hpp and the compute capability the pack scores itself against.
include_guard(GLOBAL)

function(dense_add_cuda_pack name)
  # Not a variable set at include time: include_guard(GLOBAL) skips this file in the second pack's
  # directory scope, where such a variable would be unset.
  set(DENSE_CUDA_COMMON_DIR "${CMAKE_CURRENT_FUNCTION_LIST_DIR}")
  cmake_parse_arguments(ARG "" "TARGET_CC" "" ${ARGN})
  if(NOT ARG_TARGET_CC MATCHES "^[0-9]+$")
    message(FATAL_ERROR "dense_add_cuda_pack(${name}): TARGET_CC must be a number like 90 or 120")
  endif()
  file(GLOB host_srcs CONFIGURE_DEPENDS "${DENSE_CUDA_COMMON_DIR}/src/*.cpp")
  file(GLOB cuda_srcs CONFIGURE_DEPENDS "${DENSE_CUDA_COMMON_DIR}/src/kernels/*.cu")
  dense_add_pack(${name} SOURCES ${host_srcs} ${cuda_srcs} CUDA_ARCHITECTURES ${ARG_TARGET_CC})
  set(t dense-${name})
  # C++17 for device code: CMake 3.25 has no C++20 dialect flag for nvcc 13, and the kernels need none.
  set_target_properties(${t} PROPERTIES CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON CUDA_EXTENSIONS OFF)
  target_include_directories(${t} PRIVATE "${DENSE_CUDA_COMMON_DIR}/src")
  # The .cpp files talk to the CUDA runtime API (device memory, streams); its headers are not ours,
  # so they come in as SYSTEM and stay outside our warning flags.
  target_include_directories(${t} SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
  target_link_libraries(${t} PRIVATE dense_quant_tables dense_pack_common)
  target_compile_definitions(${t} PRIVATE
    DENSE_CUDA_TARGET_CC=${ARG_TARGET_CC}
    DENSE_CUDA_PACK_NAME="${name}"
    DENSE_CUDA_PACK_VERSION="${PROJECT_VERSION}")
  dense_warnings(${t})
  # nvcc: every device-side diagnostic is an error, and the host pass of .cu files gets the same
  # g++ warnings as our .cpp files.
  target_compile_options(${t} PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:--Werror=all-warnings -Xcompiler=-Wall,-Wextra,-Wshadow,-Werror>)
  # The dequantizers must be bit-exact with spec/quant-formats.md: one fp32 rounding per operation.
  # The shared decode helpers already use __fmul_rn/__fsub_rn (so GEMV kernels that reuse them stay
  # exact even when compiled with FMA contraction); -fmad=false makes the whole file follow suit.
  set_source_files_properties(${cuda_srcs} PROPERTIES COMPILE_OPTIONS "--fmad=false")
endfunction()
