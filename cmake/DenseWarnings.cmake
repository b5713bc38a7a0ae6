# Warnings are errors in our own code (not in third-party headers, which come in as SYSTEM).
# GCC 12's -Wrestrict / -Wstringop-overflow fire falsely inside libstdc++'s std::string at -O3
# (GCC bugs 105329, 105651), so in Release builds they would fail on code that is fine; they are
# off for GCC only. Under ASan/UBSan GCC's flow analysis also reports -Wmaybe-uninitialized inside
# libstdc++ (std::regex's _State moves at -O1); the plain build keeps that warning on.
function(dense_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion -Werror>
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU>>:-Wno-restrict -Wno-stringop-overflow>
    $<$<COMPILE_LANGUAGE:C>:-Wall -Wextra -Werror>)
  if(DENSE_SANITIZE AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-maybe-uninitialized>)
  endif()
endfunction()
