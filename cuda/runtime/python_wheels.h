// Where NVIDIA's Python wheels (nvidia-cublas, nvidia-nccl, ...) keep their
// shared libraries, for the libraries the backend opens at run time.
#pragma once

#include <string>
#include <vector>

namespace lltm::cuda {

// <prefix>/lib/python3.*/{site,dist}-packages/nvidia/<package>/lib/ for each of `packages`, under the
// active virtual or conda environment, ~/.local, /usr/local and /usr, in that order (with the slash).
std::vector<std::string> wheel_folders(const std::vector<std::string>& packages);

// Whether a file can be opened for reading.
bool is_file(const std::string& path);

}  // namespace lltm::cuda
