#include "runtime/python_wheels.h"

#include <dirent.h>

#include <cstdio>
#include <cstdlib>

namespace lltm::cuda {

bool is_file(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  std::fclose(f);
  return true;
}

std::vector<std::string> wheel_folders(const std::vector<std::string>& packages) {
  std::vector<std::string> prefixes;
  for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"})
    if (const char* v = std::getenv(var); v != nullptr && *v != '\0') prefixes.push_back(v);
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') prefixes.push_back(std::string(home) + "/.local");
  prefixes.insert(prefixes.end(), {"/usr/local", "/usr"});
  std::vector<std::string> folders;
  for (const std::string& prefix : prefixes) {
    const std::string lib = prefix + "/lib/";
    DIR* dir = opendir(lib.c_str());
    if (dir == nullptr) continue;
    std::vector<std::string> pythons;
    while (const dirent* entry = readdir(dir))
      if (std::string(entry->d_name).rfind("python3", 0) == 0) pythons.push_back(lib + entry->d_name);
    closedir(dir);
    for (const std::string& python : pythons)
      for (const char* site : {"/site-packages/nvidia/", "/dist-packages/nvidia/"})
        for (const std::string& package : packages) folders.push_back(python + site + package + "/lib/");
  }
  return folders;
}

}  // namespace lltm::cuda
