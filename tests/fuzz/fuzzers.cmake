# -DKG_BUILD_FUZZERS=ON: the fuzz targets (tests/fuzz/CMakeLists.txt) as an external project of
# the main build, configured with clang++ in BUILD/fuzz and built with it (target kg_fuzzers).
include(ExternalProject)
find_program(KG_FUZZ_CXX NAMES clang++ clang++-14)
if(NOT KG_FUZZ_CXX)
  message(FATAL_ERROR "KG_BUILD_FUZZERS needs clang++ and libFuzzer (Debian: apt-get install clang libclang-rt-14-dev), "
                      "or -DKG_FUZZ_CXX=PATH")
endif()
# The dependencies where the main build was told to find them.
set(_kg_fuzz_args -DCMAKE_CXX_COMPILER=${KG_FUZZ_CXX})
foreach(_var Torch_DIR SECCOMP_ROOT TOMLPP_ROOT nlohmann_json_DIR)
  if(DEFINED ${_var})
    list(APPEND _kg_fuzz_args -D${_var}=${${_var}})
  endif()
endforeach()
ExternalProject_Add(kg_fuzzers
  SOURCE_DIR ${CMAKE_CURRENT_LIST_DIR}
  BINARY_DIR ${CMAKE_BINARY_DIR}/fuzz
  CMAKE_ARGS ${_kg_fuzz_args}
  INSTALL_COMMAND ""
  BUILD_ALWAYS ON
  USES_TERMINAL_BUILD ON)
message(STATUS "kernelgate: fuzz targets with ${KG_FUZZ_CXX} in ${CMAKE_BINARY_DIR}/fuzz (target kg_fuzzers)")
