# The CUDA backend: built into its own library, liblltm_cuda, which liblltm
# loads on first use. LLTM_CUDA=AUTO builds it when a CUDA compiler is found.
if(LLTM_CUDA STREQUAL "OFF")
  message(STATUS "lltm: CUDA backend disabled (LLTM_CUDA=OFF)")
  return()
endif()

include(CheckLanguage)
check_language(CUDA)
if(NOT CMAKE_CUDA_COMPILER)
  if(LLTM_CUDA STREQUAL "ON")
    message(FATAL_ERROR "lltm: LLTM_CUDA=ON but no CUDA compiler was found")
  endif()
  message(STATUS "lltm: no CUDA compiler found; building the CPU backend only")
  return()
endif()

if(NOT EXISTS "${PROJECT_SOURCE_DIR}/cuda/CMakeLists.txt")
  message(STATUS "lltm: no CUDA sources; building the CPU backend only")
  return()
endif()
add_subdirectory(cuda)
