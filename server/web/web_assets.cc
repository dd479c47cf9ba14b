#include "server/web/web_assets.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace gpuprobe {

std::string DefaultWebRoot() {
  std::error_code error;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return "share/gpuprobe/web";
  return (exe.parent_path().parent_path() / "share" / "gpuprobe" / "web").string();
}

absl::StatusOr<std::vector<WebAsset>> LoadWebAssets(const std::string& dir) {
  struct File {
    const char* path;
    const char* name;
    const char* content_type;
  };
  std::vector<WebAsset> assets;
  for (const File& f : {File{"/", "index.html", "text/html; charset=utf-8"},
                        File{"/sweep.js", "sweep.js", "text/javascript; charset=utf-8"},
                        File{"/app.js", "app.js", "text/javascript; charset=utf-8"}}) {
    const std::string file = (std::filesystem::path(dir) / f.name).string();
    std::ifstream in(file, std::ios::binary);
    std::stringstream body;
    body << in.rdbuf();
    if (!in) return absl::NotFoundError(absl::StrCat("the dashboard page: cannot read ", file));
    assets.push_back({f.path, f.content_type, body.str()});
  }
  return assets;
}

}  // namespace gpuprobe
