# Dependency glue only: find each dependency by its installed package and expose one imported
# target per job. Nothing is vendored. No Boost: every process kernelgate starts, the toolchain's
# probes included, goes through sandbox::run (README, "Dependencies").

# libtorch: Debian's libtorch-dev (1.13) or a PyTorch 2.x installation
# (-DTorch_DIR=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')/Torch).
find_package(Torch REQUIRED)
# TorchConfig adds the CUDA language and flags on CUDA builds; we only need the libraries and headers.
add_library(kg_torch INTERFACE)
target_link_libraries(kg_torch INTERFACE ${TORCH_LIBRARIES})
target_include_directories(kg_torch SYSTEM INTERFACE ${TORCH_INCLUDE_DIRS})
# PyTorch 2.x wheels export some libstdc++ symbols themselves (std::filesystem::remove_all, with a
# null pointer inside). Linked first, the real libstdc++ comes first in the lookup order and its
# definitions win for every binary that links libtorch.
target_link_options(kg_torch INTERFACE "LINKER:--push-state,--no-as-needed" "-lstdc++" "LINKER:--pop-state")
set(KG_TORCH_VERSION "${Torch_VERSION}")
if(NOT KG_TORCH_VERSION)
  set(KG_TORCH_VERSION "unknown")
endif()
message(STATUS "kernelgate: libtorch ${KG_TORCH_VERSION} from ${Torch_DIR}")

# libseccomp: pkg-config, or a prefix given with -DSECCOMP_ROOT=... (the GPU machine unpacks the .deb)
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(SECCOMP QUIET libseccomp)
endif()
find_path(KG_SECCOMP_INCLUDE seccomp.h HINTS ${SECCOMP_INCLUDE_DIRS} ${SECCOMP_ROOT}/usr/include)
find_library(KG_SECCOMP_LIB NAMES seccomp libseccomp.so.2 HINTS ${SECCOMP_LIBRARY_DIRS}
             ${SECCOMP_ROOT}/usr/lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu)
if(NOT KG_SECCOMP_INCLUDE OR NOT KG_SECCOMP_LIB)
  message(FATAL_ERROR "libseccomp not found: install libseccomp-dev (tools/install-deps) or pass -DSECCOMP_ROOT")
endif()
add_library(kg_seccomp INTERFACE)
target_include_directories(kg_seccomp SYSTEM INTERFACE ${KG_SECCOMP_INCLUDE})
target_link_libraries(kg_seccomp INTERFACE ${KG_SECCOMP_LIB})

# toml++ (header-only): Debian's libtomlplusplus-dev or a prefix with -DTOMLPP_ROOT=...
find_path(KG_TOMLPP_INCLUDE toml++/toml.h HINTS ${TOMLPP_ROOT}/usr/include)
if(NOT KG_TOMLPP_INCLUDE)
  message(FATAL_ERROR "toml++ not found: install libtomlplusplus-dev (tools/install-deps) or pass -DTOMLPP_ROOT")
endif()
add_library(kg_tomlpp INTERFACE)
target_include_directories(kg_tomlpp SYSTEM INTERFACE ${KG_TOMLPP_INCLUDE})

# CUDA toolkit: optional. NVRTC and cudart when present; a build without them says so.
set(KG_HAVE_CUDA OFF)
if(KG_WITH_CUDA)
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND AND TARGET CUDA::nvrtc AND TARGET CUDA::cudart)
    set(KG_HAVE_CUDA ON)
    message(STATUS "kernelgate: CUDA toolkit ${CUDAToolkit_VERSION} (nvcc ${CUDAToolkit_NVCC_EXECUTABLE}); NVRTC and cudart enabled")
  endif()
endif()
if(NOT KG_HAVE_CUDA)
  message(STATUS "kernelgate: no CUDA toolkit found; building without NVRTC/cudart (cuda and nvrtc kinds unavailable)")
endif()

if(KG_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()

# nlohmann/json (header-only) for results.json: Debian's nlohmann-json3-dev, or -Dnlohmann_json_DIR.
find_package(nlohmann_json 3 REQUIRED)

# kernelgate serve (docs/serve.md): cpp-httplib (Debian's libcpp-httplib-dev, a compiled library
# whose header needs the same feature macros its .pc file gives: OpenSSL, zlib, Brotli) and SQLite
# (libsqlite3-dev). Optional: without them the build has no `serve` command and says so.
# -DSERVE_ROOT=PREFIX (the GPU machine, where the .debs are unpacked under a prefix) finds them
# there instead of through pkg-config; the libraries they need are linked directly, so the
# binary's run path finds them in the prefix.
set(KG_HAVE_SERVE OFF)
if(SERVE_ROOT)
  set(_kg_lib ${SERVE_ROOT}/usr/lib/x86_64-linux-gnu)
  find_path(KG_HTTPLIB_INCLUDE httplib.h HINTS ${SERVE_ROOT}/usr/include NO_DEFAULT_PATH)
  find_path(KG_SQLITE_INCLUDE sqlite3.h HINTS ${SERVE_ROOT}/usr/include NO_DEFAULT_PATH)
  find_path(KG_OPENSSL_INCLUDE openssl/ssl.h HINTS ${SERVE_ROOT}/usr/include /usr/include)
  find_path(KG_OPENSSL_CONF_INCLUDE openssl/configuration.h HINTS ${SERVE_ROOT}/usr/include/x86_64-linux-gnu /usr/include/x86_64-linux-gnu)
  find_library(KG_HTTPLIB_LIB NAMES libcpp-httplib.so.0.11 cpp-httplib HINTS ${_kg_lib} NO_DEFAULT_PATH)
  find_library(KG_SQLITE_LIB NAMES libsqlite3.so.0 sqlite3 HINTS ${_kg_lib} /usr/lib/x86_64-linux-gnu)
  find_library(KG_BROTLIDEC_LIB NAMES libbrotlidec.so.1 brotlidec HINTS ${_kg_lib} /usr/lib/x86_64-linux-gnu)
  find_library(KG_BROTLIENC_LIB NAMES libbrotlienc.so.1 brotlienc HINTS ${_kg_lib} /usr/lib/x86_64-linux-gnu)
  find_library(KG_BROTLICOMMON_LIB NAMES libbrotlicommon.so.1 brotlicommon HINTS ${_kg_lib} /usr/lib/x86_64-linux-gnu)
  find_library(KG_SSL_LIB NAMES libssl.so.3 ssl HINTS /usr/lib/x86_64-linux-gnu)
  find_library(KG_CRYPTO_LIB NAMES libcrypto.so.3 crypto HINTS /usr/lib/x86_64-linux-gnu)
  find_library(KG_Z_LIB NAMES libz.so.1 z HINTS ${_kg_lib} /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu)
  set(_kg_serve_parts KG_HTTPLIB_INCLUDE KG_SQLITE_INCLUDE KG_OPENSSL_INCLUDE KG_OPENSSL_CONF_INCLUDE KG_HTTPLIB_LIB KG_SQLITE_LIB
                      KG_BROTLIDEC_LIB KG_BROTLIENC_LIB KG_BROTLICOMMON_LIB KG_SSL_LIB KG_CRYPTO_LIB KG_Z_LIB)
  set(_kg_serve_found ON)
  foreach(part ${_kg_serve_parts})
    if(NOT ${part})
      message(STATUS "kernelgate: serve: ${part} not found under SERVE_ROOT=${SERVE_ROOT}")
      set(_kg_serve_found OFF)
    endif()
  endforeach()
  if(_kg_serve_found)
    add_library(kg_httplib INTERFACE)
    target_include_directories(kg_httplib SYSTEM INTERFACE ${KG_HTTPLIB_INCLUDE} ${KG_OPENSSL_INCLUDE} ${KG_OPENSSL_CONF_INCLUDE})
    target_compile_definitions(kg_httplib INTERFACE CPPHTTPLIB_OPENSSL_SUPPORT CPPHTTPLIB_ZLIB_SUPPORT CPPHTTPLIB_BROTLI_SUPPORT)
    target_link_libraries(kg_httplib INTERFACE ${KG_HTTPLIB_LIB} ${KG_BROTLIDEC_LIB} ${KG_BROTLIENC_LIB} ${KG_BROTLICOMMON_LIB} ${KG_SSL_LIB} ${KG_CRYPTO_LIB} ${KG_Z_LIB})
    add_library(kg_sqlite INTERFACE)
    target_include_directories(kg_sqlite SYSTEM INTERFACE ${KG_SQLITE_INCLUDE})
    target_link_libraries(kg_sqlite INTERFACE ${KG_SQLITE_LIB})
    set(KG_HAVE_SERVE ON)
  endif()
elseif(PkgConfig_FOUND)
  pkg_check_modules(KG_HTTPLIB QUIET IMPORTED_TARGET cpp-httplib)
  pkg_check_modules(KG_SQLITE QUIET IMPORTED_TARGET sqlite3)
  if(KG_HTTPLIB_FOUND AND KG_SQLITE_FOUND)
    add_library(kg_httplib INTERFACE)
    target_link_libraries(kg_httplib INTERFACE PkgConfig::KG_HTTPLIB)
    add_library(kg_sqlite INTERFACE)
    target_link_libraries(kg_sqlite INTERFACE PkgConfig::KG_SQLITE)
    set(KG_HAVE_SERVE ON)
  endif()
endif()
message(STATUS "kernelgate: serve (cpp-httplib + SQLite): ${KG_HAVE_SERVE}")
