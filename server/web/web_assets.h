// The dashboard's files (server/web/assets): installed as files in share/gpuprobe/web beside
// the daemon's bin/ (`cmake --install`, the bundle, and the build tree's copy in
// build/share/gpuprobe/web), read once when the daemon starts, and served from memory. The page
// needs no CDN and no network; an operator may serve a page of their own with --web-root.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gpuprobe {

struct WebAsset {
  std::string path;          // URL path, "/" for the page
  std::string content_type;  // HTTP Content-Type
  std::string body;
};

// BIN/../share/gpuprobe/web, BIN being the directory of the running executable.
std::string DefaultWebRoot();

// The page's files (index.html, app.js) from `dir`; NOT_FOUND naming a file that cannot be read.
absl::StatusOr<std::vector<WebAsset>> LoadWebAssets(const std::string& dir);

}  // namespace gpuprobe
