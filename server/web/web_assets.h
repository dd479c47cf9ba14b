// The dashboard's files (server/web/assets), compiled into the daemon so that the page needs
// nothing beyond gpuprobed: no CDN, no network, no files next to the binary.
#pragma once

#include <vector>

namespace gpuprobe {

struct WebAsset {
  const char* path;          // URL path, "/" for the page
  const char* content_type;  // HTTP Content-Type
  const char* body;
};

const std::vector<WebAsset>& WebAssets();

}  // namespace gpuprobe
