# `cmake --install` for third-party pack authors: the CMake package DenseRT (SDK target, the
# dense_add_pack helper, the installed dense-rt), the runtime's own packs where the installed
# dense-rt looks for them, and the example pack's sources. The binary, headers and model
# descriptions are installed by runtime/CMakeLists.txt.
#
#   <prefix>/bin/dense-rt                         (RPATH $ORIGIN/../<libdir>)
#   <prefix>/<libdir>/dense-rt/packs/libdense-*.so
#   <prefix>/<libdir>/cmake/DenseRT/{DenseRTConfig,DenseRTConfigVersion,DenseRTTargets,DensePack}.cmake
#   <prefix>/include/dense/{abi,sdk}/...
#   <prefix>/share/dense-rt/models/*.yaml
#   <prefix>/share/dense-rt/examples/<pack>/...   (sources; build them against this prefix)
include(CMakePackageConfigHelpers)

set(DENSE_CMAKE_PACKAGE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/DenseRT")

# The ABI version the installed headers speak, read from the header itself (one source of truth).
file(STRINGS "${PROJECT_SOURCE_DIR}/runtime/include/dense/abi/dense_abi.h" _dense_abi_lines
  REGEX "^#define DENSE_ABI_(MAJOR|MINOR) [0-9]+u")
foreach(_line IN LISTS _dense_abi_lines)
  if(_line MATCHES "^#define DENSE_ABI_(MAJOR|MINOR) ([0-9]+)u")
    set(DENSE_ABI_${CMAKE_MATCH_1} ${CMAKE_MATCH_2})
  endif()
endforeach()
if(NOT DEFINED DENSE_ABI_MAJOR OR NOT DEFINED DENSE_ABI_MINOR)
  message(FATAL_ERROR "cannot read DENSE_ABI_MAJOR/MINOR from dense_abi.h")
endif()

foreach(_pack dense-cpu-ref dense-cuda-sm90 dense-cuda-sm120)
  if(TARGET ${_pack})
    install(TARGETS ${_pack} LIBRARY DESTINATION "${DENSE_PACK_SUBDIR}")
  endif()
endforeach()

install(EXPORT DenseRTTargets NAMESPACE DenseRT:: DESTINATION "${DENSE_CMAKE_PACKAGE_DIR}")
configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/DenseRTConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/cmake/DenseRTConfig.cmake"
  INSTALL_DESTINATION "${DENSE_CMAKE_PACKAGE_DIR}"
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_BINDIR DENSE_PACK_SUBDIR)
# find_package(DenseRT 0.1) accepts any 0.x: the package version is the project's. Whether a built
# pack runs on a given dense-rt is decided at load time by the pack ABI (same major, any minor).
write_basic_package_version_file("${PROJECT_BINARY_DIR}/cmake/DenseRTConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}" COMPATIBILITY SameMajorVersion)
install(FILES
  "${PROJECT_BINARY_DIR}/cmake/DenseRTConfig.cmake"
  "${PROJECT_BINARY_DIR}/cmake/DenseRTConfigVersion.cmake"
  "${PROJECT_SOURCE_DIR}/cmake/DensePack.cmake"
  DESTINATION "${DENSE_CMAKE_PACKAGE_DIR}")

install(DIRECTORY "${PROJECT_SOURCE_DIR}/plugins/examples/" DESTINATION "${CMAKE_INSTALL_DATADIR}/dense-rt/examples")
# The vocabulary `dense-rt synth` uses by default (from llama.cpp's models/, MIT; its README says so):
# an installed dense-rt finds it at <prefix>/share/dense-rt/vocab without the source tree.
install(FILES "${PROJECT_SOURCE_DIR}/tests/data/vocab/ggml-vocab-qwen35.gguf"
              "${PROJECT_SOURCE_DIR}/tests/data/vocab/README.md"
        DESTINATION "${CMAKE_INSTALL_DATADIR}/dense-rt/vocab")
