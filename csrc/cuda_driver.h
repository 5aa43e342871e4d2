// The NVIDIA driver as the CUDA backend needs it, asked before liblltm hands
// the backend any work: liblltm_cuda links the CUDA runtime statically, which
// needs a driver at least as new as the runtime's major release, and
// otherwise fails every call with a code that names neither version.
#pragma once

#include <string>

namespace lltm {

// Why this machine's driver cannot run a backend built with CUDA
// `built_with` (CUDA_VERSION's form: 13000 for 13.0), naming both versions;
// empty when it can.
std::string cuda_driver_problem(int built_with);

}  // namespace lltm
