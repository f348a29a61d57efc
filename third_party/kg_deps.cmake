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
# whose header needs the same feature macros its .pc file gives) and SQLite (libsqlite3-dev).
# Optional: without them the build has no `serve` command and says so.
set(KG_HAVE_SERVE OFF)
if(PkgConfig_FOUND)
  pkg_check_modules(KG_HTTPLIB QUIET IMPORTED_TARGET cpp-httplib)
  pkg_check_modules(KG_SQLITE QUIET IMPORTED_TARGET sqlite3)
  if(KG_HTTPLIB_FOUND AND KG_SQLITE_FOUND)
    set(KG_HAVE_SERVE ON)
  endif()
endif()
message(STATUS "kernelgate: serve (cpp-httplib + SQLite): ${KG_HAVE_SERVE}")
