# How artifacts link: sets KG_LINKER_FLAG (what every cpu and cuda artifact's link adds to the
# compiler driver's command) and KG_LINKER_NOTE (what was chosen, and why, for configure's output).
# Included by loader/CMakeLists.txt; also runs alone, as tests/loader/artifact_link_test.sh does:
#   cmake -DKG_CXX_REALPATH=g++ -DKG_TORCH_LIB_DIR=DIR -DKG_LINK_CHECK_DIR=DIR -P artifact_link.cmake
#
# Checked the way artifacts link: the compiler driver making a shared object against libtorch with
# -z defs.
# - gold where the compiler has it: the link is the last step of every build, and gold reads
#   libtorch's symbol tables in about half of ld.bfd's time.
# - A compiler whose library search path names a libstdc++.so that is not there (a g++ copied to
#   another prefix, as on the GPU machine) makes ld.bfd skip the dangling link and take the
#   libstdc++.a beside it: every artifact would carry its own copy of the libstdc++ code it uses
#   (1.8 MB more to read for the static rules, on every evaluation) beside the libstdc++.so.6 that
#   libtorch has already loaded into the runner; gold stops on the dangling link ("cannot open").
#   Then the link gets -L to a folder whose libstdc++.so is the libstdc++.so.6 libtorch loads (ldd
#   says which), with gold if gold links that way, else with the default linker.
if(CMAKE_SCRIPT_MODE_FILE AND NOT DEFINED KG_LINK_CHECK_DIR)
  message(FATAL_ERROR "artifact_link.cmake: set KG_CXX_REALPATH, KG_TORCH_LIB_DIR and KG_LINK_CHECK_DIR")
endif()
set(KG_LINKER_FLAG "")
set(KG_LINKER_NOTE "")
file(MAKE_DIRECTORY ${KG_LINK_CHECK_DIR})
file(WRITE ${KG_LINK_CHECK_DIR}/gold.cc "int kg_gold_check() { return 1; }\n")

# _kg_link_check(RC OUT FLAGS...): the check's shared object linked as artifacts are, with FLAGS.
function(_kg_link_check rc out)
  execute_process(COMMAND ${KG_CXX_REALPATH} -shared -fPIC ${ARGN} gold.cc -o gold.so -Wl,-z,defs -L${KG_TORCH_LIB_DIR} -ltorch_cpu -lc10
                  WORKING_DIRECTORY ${KG_LINK_CHECK_DIR} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  set(${rc} "${_rc}" PARENT_SCOPE)
  set(${out} "${_out}" PARENT_SCOPE)
endfunction()

# _kg_traced_libstdcxx(OUT FLAGS...): the libstdc++ file ld.bfd takes with FLAGS (its --trace).
function(_kg_traced_libstdcxx out)
  _kg_link_check(_rc _trace -Wl,--trace ${ARGN})
  string(REGEX MATCH "/[^ ()\n]*/libstdc\\+\\+[^ ()\n/]*" _found "${_trace}")
  set(${out} "${_found}" PARENT_SCOPE)
endfunction()

# _kg_runtime_libstdcxx_dir(OUT): a folder, without spaces, whose libstdc++.so is the file the
# dynamic loader gives libtorch for libstdc++.so.6; empty when there is none.
function(_kg_runtime_libstdcxx_dir out)
  set(${out} "" PARENT_SCOPE)
  execute_process(COMMAND ldd ${KG_TORCH_LIB_DIR}/libc10.so OUTPUT_VARIABLE _ldd ERROR_QUIET RESULT_VARIABLE _rc)
  string(REGEX MATCH "libstdc\\+\\+\\.so\\.6 => ([^ \n]+)" _m "${_ldd}")
  if(NOT _rc EQUAL 0 OR NOT CMAKE_MATCH_1 OR NOT EXISTS "${CMAKE_MATCH_1}")
    return()
  endif()
  get_filename_component(_runtime "${CMAKE_MATCH_1}" REALPATH)
  get_filename_component(_runtime_dir "${CMAKE_MATCH_1}" DIRECTORY)
  file(GLOB _candidates "${_runtime_dir}/libstdc++.so" /usr/lib/gcc/*/*/libstdc++.so /usr/lib/*/libstdc++.so /usr/lib/libstdc++.so
       /usr/lib64/libstdc++.so)
  foreach(_c IN LISTS _candidates)
    get_filename_component(_c_real "${_c}" REALPATH)
    get_filename_component(_c_dir "${_c}" DIRECTORY)
    if(_c_real STREQUAL _runtime AND NOT _c_dir MATCHES " ")
      set(${out} "${_c_dir}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
endfunction()

_kg_link_check(_kg_gold_rc _kg_gold_out -fuse-ld=gold)
if(_kg_gold_rc EQUAL 0)
  set(KG_LINKER_FLAG "-fuse-ld=gold")
  set(KG_LINKER_NOTE "artifacts link with gold (-fuse-ld=gold)")
else()
  string(REPLACE "\n" " " _kg_gold_out "${_kg_gold_out}")
  _kg_traced_libstdcxx(_kg_libstdcxx)
  get_filename_component(_kg_libstdcxx_dir "${_kg_libstdcxx}" DIRECTORY)
  if(_kg_libstdcxx MATCHES "/libstdc\\+\\+\\.so$" AND EXISTS "${_kg_libstdcxx}" AND NOT _kg_libstdcxx_dir MATCHES " ")
    set(_kg_shared_dir "${_kg_libstdcxx_dir}")
    set(_kg_why "the libstdc++.so ld.bfd takes")
  else()
    _kg_runtime_libstdcxx_dir(_kg_shared_dir)
    set(_kg_why "the libstdc++.so.6 libtorch loads; ld.bfd alone took '${_kg_libstdcxx}'")
  endif()
  if(NOT _kg_shared_dir)
    set(KG_LINKER_NOTE "artifacts link with the compiler's default linker (no gold: ${_kg_gold_rc} ${_kg_gold_out}; ld.bfd takes '${_kg_libstdcxx}' and no libstdc++.so of the one libtorch loads was found)")
  else()
    _kg_link_check(_kg_gold_rc2 _kg_gold_out2 -fuse-ld=gold -L${_kg_shared_dir})
    if(_kg_gold_rc2 EQUAL 0)
      set(KG_LINKER_FLAG "-fuse-ld=gold -L${_kg_shared_dir}")
      set(KG_LINKER_NOTE "artifacts link with gold (${KG_LINKER_FLAG}: ${_kg_why})")
    else()
      string(REPLACE "\n" " " _kg_gold_out2 "${_kg_gold_out2}")
      _kg_traced_libstdcxx(_kg_libstdcxx2 -L${_kg_shared_dir})
      if(_kg_libstdcxx2 STREQUAL "${_kg_shared_dir}/libstdc++.so")
        set(KG_LINKER_FLAG "-L${_kg_shared_dir}")
        set(KG_LINKER_NOTE "artifacts link with the compiler's default linker and ${KG_LINKER_FLAG} (${_kg_why}; no gold: ${_kg_gold_out2})")
      else()
        set(KG_LINKER_NOTE "artifacts link with the compiler's default linker (no gold: ${_kg_gold_out2}; with -L${_kg_shared_dir} ld.bfd still takes '${_kg_libstdcxx2}')")
      endif()
    endif()
  endif()
endif()
if(CMAKE_SCRIPT_MODE_FILE)
  message(STATUS "KG_LINKER_FLAG=${KG_LINKER_FLAG}")
endif()
message(STATUS "kernelgate: ${KG_LINKER_NOTE}")
