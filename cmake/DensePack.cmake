# dense_add_pack(<family>-<variant> SOURCES src... [CUDA_ARCHITECTURES archs] [OUTPUT_DIRECTORY dir] [INSTALL])
#
# Builds a kernel pack: a MODULE library named libdense-<family>-<variant>.so that exports only the
# three ABI entry points (hidden visibility + a linker version script), links the header-only SDK,
# and, when the sources contain .cu files, compiles them for CUDA_ARCHITECTURES (default
# DENSE_PACK_CUDA_ARCHITECTURES, "90;120": the GPUs dense-rt targets) with the CUDA runtime linked
# statically, so the pack needs nothing beside itself but the driver.
# INSTALL: `cmake --install` puts the pack into <prefix>/<libdir>/dense-rt/packs, where an installed
# dense-rt of the same prefix finds it without any configuration.
#
# One file for both users: the dense-rt build includes it from cmake/, and `cmake --install` copies
# it next to DenseRTConfig.cmake, so third parties get it through find_package(DenseRT).
include_guard(GLOBAL)

set(_DENSE_PACK_VERSION_SCRIPT "${CMAKE_BINARY_DIR}/dense-pack.map")
file(WRITE "${_DENSE_PACK_VERSION_SCRIPT}"
  "{\n  global:\n    dense_pack_score;\n    dense_pack_init;\n    dense_pack_release;\n  local:\n    *;\n};\n")

if(NOT DEFINED DENSE_PACK_CUDA_ARCHITECTURES)
  set(DENSE_PACK_CUDA_ARCHITECTURES "90;120")
endif()

function(dense_add_pack name)
  cmake_parse_arguments(ARG "INSTALL" "OUTPUT_DIRECTORY" "SOURCES;CUDA_ARCHITECTURES" ${ARGN})
  if(NOT name MATCHES "^[a-z0-9]+-[a-z0-9_]+$")
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
    SUFFIX ".so"
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

  set(has_cuda OFF)
  foreach(src IN LISTS ARG_SOURCES)
    if(src MATCHES "\\.cu$")
      set(has_cuda ON)
    endif()
  endforeach()
  if(has_cuda)
    if(NOT CMAKE_CUDA_COMPILER)
      message(FATAL_ERROR "dense_add_pack(${name}): .cu sources need the CUDA language: call "
                          "enable_language(CUDA) (or project(... LANGUAGES CXX CUDA)) first")
    endif()
    set(archs ${ARG_CUDA_ARCHITECTURES})
    if(NOT archs)
      set(archs ${DENSE_PACK_CUDA_ARCHITECTURES})
    endif()
    set_target_properties(${target} PROPERTIES CUDA_ARCHITECTURES "${archs}" CUDA_RUNTIME_LIBRARY Static)
  elseif(ARG_CUDA_ARCHITECTURES)
    set_target_properties(${target} PROPERTIES CUDA_ARCHITECTURES "${ARG_CUDA_ARCHITECTURES}"
      CUDA_RUNTIME_LIBRARY Static)
  endif()

  if(ARG_INSTALL)
    # DENSE_PACK_SUBDIR: set by the dense-rt build and by DenseRTConfig.cmake to the directory the
    # installed dense-rt searches (relative to its prefix), so both sides agree on the libdir.
    set(dest "${DENSE_PACK_SUBDIR}")
    if(NOT dest)
      include(GNUInstallDirs)
      set(dest "${CMAKE_INSTALL_LIBDIR}/dense-rt/packs")
    endif()
    install(TARGETS ${target} LIBRARY DESTINATION "${dest}")
  endif()
endfunction()
