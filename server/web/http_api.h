// The daemon's HTTP side, for dashboards: the page, a JSON API (protobuf's JSON mapping of the
// gRPC messages) and Prometheus metrics.
//   GET /, /app.js                    the dashboard (web_assets.h)
//   GET /api/v1/info                  ServerInfo
//   GET /api/v1/jobs?state=&label.KEY=VALUE&created_after=&created_before=&page_size=
//       &page_token=                  ListJobsResponse (times in RFC 3339; state repeats)
//   GET /api/v1/jobs/{id}             Job
//   GET /api/v1/jobs/{id}/rows        {"rows": [Row...]} (or "checks") of the last attempt
//   GET /metrics                      Prometheus text format
//   GET /api/v1/jobs/{id}/artifacts[/NAME], /api/v1/probes, /api/v1/compare?base=&cand=
//       &threshold=&history=
// Query values are percent-decoded and keep their own '=' (query_params.h). A bad or unknown
// parameter gets 400 naming it, an unknown job or path 404, another method than GET 405 (with
// Allow), each with {"error": "..."}. With tokens, every
// request needs "Authorization: Bearer TOKEN" of at least the read role (401 / 403).
//
//   HttpApi http(manager, access, "0.1.0", LoadWebAssets(DefaultWebRoot()));
//   ASSIGN_OR_RETURN(int port, http.Start("127.0.0.1", 0));
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "server/api/access_control.h"
#include "server/jobs/job_manager.h"
#include "server/web/gated_http_server.h"
#include "server/web/web_assets.h"

namespace gpuprobe {

class HttpApi {
 public:
  // `page`: the dashboard's files (LoadWebAssets), or why there are none, which the page's
  // paths then answer with 404.
  HttpApi(JobManager& manager, AccessControl access, std::string version,
          absl::StatusOr<std::vector<WebAsset>> page);
  ~HttpApi();  // Stop()

  // Binds (port 0 picks one) and serves on a thread of its own; returns the bound port.
  absl::StatusOr<int> Start(const std::string& host, int port);
  void Stop();

 private:
  // Every route: the page and the token check (RoutePage), the JSON API, /metrics and the
  // artifacts' bytes (RouteApi), and 405 or 404 for the rest (RouteOtherRequests).
  void Route();
  void RoutePage();
  void RouteApi();
  void RouteOtherRequests();
  // Registers a GET route and remembers its pattern, so that Routed knows the paths.
  void Get(const std::string& pattern, httplib::Server::Handler handler);
  // A GET answered with JSON: the body `answer` gives, or its status as a JSON error.
  using JsonAnswer = std::function<absl::StatusOr<std::string>(const httplib::Request&)>;
  void GetJson(const std::string& pattern, JsonAnswer answer);
  bool Routed(const std::string& path) const;

  JobManager& manager_;
  const AccessControl access_;
  const std::string version_;
  const absl::StatusOr<std::vector<WebAsset>> page_;
  std::unique_ptr<GatedHttpServer> server_;
  std::vector<std::regex> get_patterns_;
  std::thread thread_;
  std::atomic<bool> listen_ended_{false};  // set by thread_ once the listen loop returned
};

}  // namespace gpuprobe
