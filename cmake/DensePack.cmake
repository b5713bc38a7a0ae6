# dense_add_pack(<family>-<variant> SOURCES src... [CUDA_ARCHITECTURES archs] [OUTPUT_DIRECTORY dir])
#
# Builds a kernel pack: a MODULE library named libdense-<family>-<variant>.so that exports only the
# three ABI entry points (hidden visibility + a linker version script), links the header-only SDK,
# and, when the sources contain .cu files, compiles them for the given CUDA architectures.
# Used in-tree and, installed, by third parties through find_package(DenseRT).
include_guard(GLOBAL)

set(_DENSE_PACK_VERSION_SCRIPT "${CMAKE_BINARY_DIR}/dense-pack.map")
file(WRITE "${_DENSE_PACK_VERSION_SCRIPT}"
  "{\n  global:\n    dense_pack_score;\n    dense_pack_init;\n    dense_pack_release;\n  local:\n    *;\n};\n")

function(dense_add_pack name)
  cmake_parse_arguments(ARG "" "OUTPUT_DIRECTORY" "SOURCES;CUDA_ARCHITECTURES" ${ARGN})
  if(NOT name MATCHES "^[a-z0-9]+-[a-z0-9_]+")
    message(FATAL_ERROR "dense_add_pack: name '${name}' must be <family>-<variant> (lower case)")
  endif()
  set(target dense-${name})
  add_library(${target} MODULE ${ARG_SOURCES})
  if(TARGET dense::sdk)
    target_link_libraries(${target} PRIVATE dense::sdk)
  elseif(TARGET DenseRT::sdk)
    target_link_libraries(${target} PRIVATE DenseRT::sdk)
  else()
    message(FATAL_ERROR "dense_add_pack: neither dense::sdk nor DenseRT::sdk is defined")
  endif()
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    OUTPUT_NAME "dense-${name}"
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    CUDA_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  target_link_options(${target} PRIVATE
    "LINKER:--version-script=${_DENSE_PACK_VERSION_SCRIPT}" "LINKER:--no-undefined")
  if(ARG_OUTPUT_DIRECTORY)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${ARG_OUTPUT_DIRECTORY}")
  elseif(DEFINED DENSE_PACK_OUTPUT_DIR)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${DENSE_PACK_OUTPUT_DIR}")
  endif()
  if(ARG_CUDA_ARCHITECTURES)
    set_target_properties(${target} PROPERTIES CUDA_ARCHITECTURES "${ARG_CUDA_ARCHITECTURES}"
      CUDA_RUNTIME_LIBRARY Static)
  endif()
endfunction()
