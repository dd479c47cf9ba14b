#include "server/web/http_api.h"

#include <httplib.h>
#include <sys/socket.h>

#include <chrono>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/api_json.h"
#include "common/labels.h"
#include "common/status_macros.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/time_util.h"
#include "server/jobs/job_comparison.h"
#include "server/metrics/metrics_registry.h"
#include "server/web/prometheus_metrics.h"
#include "server/web/query_params.h"
#include "server/web/web_assets.h"

namespace gpuprobe {
namespace {

using google::protobuf::util::TimeUtil;

// The route label of the requests no route takes (an unknown path, a method other than GET).
constexpr char kUnroutedRequest[] = "unrouted";

void CountRequest(const std::string& route, int status, absl::Time start) {
  DaemonMetrics().Add(kHttpRequests, {{"route", route}, {"code", absl::StrCat(status)}});
  DaemonMetrics().Observe(kHttpRequestDuration, {{"route", route}},
                          absl::ToDoubleSeconds(absl::Now() - start));
}

int HttpStatusOf(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kInvalidArgument:
      return 400;
    case absl::StatusCode::kUnauthenticated:
      return 401;
    case absl::StatusCode::kPermissionDenied:
      return 403;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kUnavailable:
      return 503;
    default:
      return 500;
  }
}

std::string ErrorJson(absl::string_view text) {
  google::protobuf::Value message;
  message.set_string_value(std::string(text));
  return absl::StrCat("{\"error\":", ApiJson(message), "}");
}

void Reply(httplib::Response& res, const std::string& json) {
  res.set_content(json, "application/json");
}

void Fail(httplib::Response& res, const absl::Status& status) {
  res.status = HttpStatusOf(status.code());
  Reply(res, ErrorJson(status.message()));
}

absl::Status NotFound(const std::string& path) {
  return absl::NotFoundError(absl::StrCat(path,
                                          ": no such path; the API is under /api/v1/ "
                                          "(info, jobs, probes, compare) and /metrics"));
}

absl::Status ParseTime(const std::string& name, const std::string& text,
                       google::protobuf::Timestamp* out) {
  if (!TimeUtil::FromString(text, out)) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": \"", text, "\" is not an RFC 3339 time like 2026-11-30T09:00:00Z"));
  }
  return absl::OkStatus();
}

// A page of jobs as ApiJson(page) is, built job by job: a page of 1,000 jobs as one JSON tree
// took about 30 MB of heap, which every HTTP worker then kept.
std::string PageJson(v1::ListJobsResponse page) {
  std::vector<std::string> jobs;
  jobs.reserve(page.jobs_size());
  for (const v1::Job& job : page.jobs()) jobs.push_back(ApiJson(job));
  page.clear_jobs();
  std::string body = ApiJson(page);
  const std::string empty = R"("jobs":[])";
  body.insert(body.find(empty) + empty.size() - 1, absl::StrJoin(jobs, ","));
  return body;
}

// The ListJobs filters, from query parameters; INVALID_ARGUMENT names the parameter.
absl::StatusOr<v1::ListJobsRequest> ListRequest(const QueryParams& query) {
  RETURN_IF_ERROR(query.AllowOnly(
      {"state", "label", "created_after", "created_before", "page_size", "page_token"}));
  v1::ListJobsRequest request;
  for (const std::string& name : query.All("state")) {
    v1::JobState state;
    if (!v1::JobState_Parse("JOB_STATE_" + absl::AsciiStrToUpper(name), &state)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "state: \"", name, "\" is not one of queued, running, succeeded, failed, cancelled"));
    }
    request.add_states(state);
  }
  // label=KEY=VALUE[,KEY2=VALUE2], as the CLI's --label; the parameter may repeat.
  for (const std::string& labels : query.All("label")) {
    RETURN_IF_ERROR(ParseLabels("label", labels, *request.mutable_labels()));
  }
  if (std::optional<std::string> after = query.First("created_after")) {
    RETURN_IF_ERROR(ParseTime("created_after", *after, request.mutable_created_after()));
  }
  if (std::optional<std::string> before = query.First("created_before")) {
    RETURN_IF_ERROR(ParseTime("created_before", *before, request.mutable_created_before()));
  }
  if (std::optional<std::string> page_size = query.First("page_size")) {
    uint32_t size = 0;
    if (!absl::SimpleAtoi(*page_size, &size) || size == 0 || size > 1000) {
      return absl::InvalidArgumentError("page_size: must be a number in [1, 1000]");
    }
    request.set_page_size(size);
  }
  if (std::optional<std::string> token = query.First("page_token")) request.set_page_token(*token);
  return request;
}

// ?base=JOB|label:KEY=VALUE[,...]&candidate=JOB[&threshold=0.02][&history=8], the request's field
// names; cand= is candidate's short form, kept for the links made before.
absl::StatusOr<v1::CompareJobsRequest> CompareRequest(const QueryParams& query) {
  RETURN_IF_ERROR(query.AllowOnly({"base", "candidate", "cand", "threshold", "history"}));
  const std::optional<std::string> candidate = query.First("candidate");
  const std::optional<std::string> cand = query.First("cand");
  if (candidate && cand) {
    return absl::InvalidArgumentError(
        "candidate: give candidate= or its short form cand=, not both");
  }
  v1::CompareJobsRequest request;
  request.set_base(query.First("base").value_or(""));
  request.set_candidate(candidate.value_or(cand.value_or("")));
  if (std::optional<std::string> text = query.First("threshold")) {
    double threshold = 0;
    if (!absl::SimpleAtod(*text, &threshold)) {
      return absl::InvalidArgumentError("threshold: not a number");
    }
    request.set_threshold(threshold);
  }
  if (std::optional<std::string> text = query.First("history")) {
    uint32_t history = 0;
    if (!absl::SimpleAtoi(*text, &history)) {
      return absl::InvalidArgumentError("history: not a count of jobs");
    }
    request.set_history(history);
  }
  return request;
}

// The parameters of a path that takes none; 400 naming the first one given.
absl::Status NoParams(const httplib::Request& req) {
  return QueryParams::Parse(req.target).AllowOnly({});
}

}  // namespace

HttpApi::HttpApi(JobManager& manager, AccessControl access, std::string version,
                 absl::StatusOr<std::vector<WebAsset>> page)
    : manager_(manager),
      access_(std::move(access)),
      version_(std::move(version)),
      page_(std::move(page)),
      server_(std::make_unique<GatedHttpServer>(GatedHttpServer::Limits{})) {
  // SO_REUSEADDR only: httplib's default adds SO_REUSEPORT, which lets a second daemon listen
  // on the same address and take half its connections.
  server_->set_socket_options([](int socket) {
    const int yes = 1;
    setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  Route();
}

HttpApi::~HttpApi() { Stop(); }

void HttpApi::Route() {
  RoutePage();
  RouteApi();
  RouteOtherRequests();
}

void HttpApi::RoutePage() {
  // The page's own files hold no data: served to anyone, so that it can ask for a token.
  // Without them, "/" says why.
  if (page_.ok()) {
    for (const WebAsset& asset : *page_) {
      Get(asset.path, [&asset](const httplib::Request&, httplib::Response& res) {
        res.set_content(asset.body, asset.content_type);
      });
    }
  } else {
    Get("/",
        [this](const httplib::Request&, httplib::Response& res) { Fail(res, page_.status()); });
  }

  // Every other request: the read role when tokens are on.
  server_->set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (page_.ok()) {
      for (const WebAsset& asset : *page_) {
        if (req.path == asset.path) return httplib::Server::HandlerResponse::Unhandled;
      }
    }
    std::multimap<grpc::string_ref, grpc::string_ref> metadata;
    const std::string authorization = req.get_header_value("Authorization");
    if (!authorization.empty()) metadata.emplace("authorization", authorization);
    absl::StatusOr<Caller> caller =
        access_.Authorize(metadata, req.remote_addr, Role::kRead, req.method + " " + req.path);
    if (caller.ok()) return httplib::Server::HandlerResponse::Unhandled;
    Fail(res, caller.status());
    return httplib::Server::HandlerResponse::Handled;
  });
}

void HttpApi::RouteApi() {
  GetJson("/api/v1/info", [this](const httplib::Request& req) -> absl::StatusOr<std::string> {
    RETURN_IF_ERROR(NoParams(req));
    ASSIGN_OR_RETURN(const v1::ServerInfo info, manager_.Info(version_));
    return ApiJson(info);
  });
  GetJson("/api/v1/jobs", [this](const httplib::Request& req) -> absl::StatusOr<std::string> {
    ASSIGN_OR_RETURN(const v1::ListJobsRequest request,
                     ListRequest(QueryParams::Parse(req.target)));
    ASSIGN_OR_RETURN(v1::ListJobsResponse jobs, manager_.List(request));
    return PageJson(std::move(jobs));
  });
  GetJson(R"(/api/v1/jobs/([^/]+))",
          [this](const httplib::Request& req) -> absl::StatusOr<std::string> {
            RETURN_IF_ERROR(NoParams(req));
            ASSIGN_OR_RETURN(const v1::Job job, manager_.Get(req.matches[1]));
            return ApiJson(job);
          });
  GetJson(R"(/api/v1/jobs/([^/]+)/rows)",
          [this](const httplib::Request& req) -> absl::StatusOr<std::string> {
            RETURN_IF_ERROR(NoParams(req));
            ASSIGN_OR_RETURN(const std::vector<v1::JobEvent> results,
                             manager_.Results(req.matches[1]));
            std::vector<std::string> checks, generic;
            for (const v1::JobEvent& e : results) {
              if (e.has_check()) checks.push_back(ApiJson(e.check()));
              if (e.has_result()) generic.push_back(ApiJson(e.result()));
            }
            return absl::StrCat("{\"checks\":[", absl::StrJoin(checks, ","), "],\"results\":[",
                                absl::StrJoin(generic, ","), "]}");
          });
  GetJson("/api/v1/probes", [this](const httplib::Request& req) -> absl::StatusOr<std::string> {
    RETURN_IF_ERROR(NoParams(req));
    v1::ListProbesResponse list;
    for (const Probe* probe : manager_.probes().All()) *list.add_probes() = probe->Info();
    return ApiJson(list);
  });
  GetJson(R"(/api/v1/jobs/([^/]+)/artifacts)",
          [this](const httplib::Request& req) -> absl::StatusOr<std::string> {
            RETURN_IF_ERROR(NoParams(req));
            ASSIGN_OR_RETURN(std::vector<v1::Artifact> artifacts,
                             manager_.ListArtifacts(req.matches[1]));
            v1::ListArtifactsResponse list;
            for (v1::Artifact& a : artifacts) *list.add_artifacts() = std::move(a);
            return ApiJson(list);
          });

  // The artifact's bytes, streamed from the file a chunk at a time.
  Get(R"(/api/v1/jobs/([^/]+)/artifacts/([^/]+))",
      [this](const httplib::Request& req, httplib::Response& res) {
        if (absl::Status s = NoParams(req); !s.ok()) return Fail(res, s);
        absl::StatusOr<std::unique_ptr<ArtifactReader>> opened =
            manager_.OpenArtifact(req.matches[1], req.matches[2]);
        if (!opened.ok()) return Fail(res, opened.status());
        std::shared_ptr<ArtifactReader> reader = *std::move(opened);
        res.set_chunked_content_provider(
            "application/octet-stream", [reader](size_t, httplib::DataSink& sink) {
              absl::StatusOr<std::string> bytes = reader->Next(size_t{1} << 20);
              if (!bytes.ok()) return false;
              if (bytes->empty()) {
                sink.done();
                return true;
              }
              return sink.write(bytes->data(), bytes->size());
            });
      });

  // CompareJobs for dashboards (CompareRequest: its parameters).
  GetJson("/api/v1/compare", [this](const httplib::Request& req) -> absl::StatusOr<std::string> {
    ASSIGN_OR_RETURN(const v1::CompareJobsRequest request,
                     CompareRequest(QueryParams::Parse(req.target)));
    ASSIGN_OR_RETURN(const v1::CompareJobsResponse compared, CompareJobs(manager_, request));
    return ApiJson(compared);
  });

  Get("/metrics", [this](const httplib::Request& req, httplib::Response& res) {
    if (absl::Status s = NoParams(req); !s.ok()) return Fail(res, s);
    absl::StatusOr<JobStore::Totals> totals = manager_.Totals();
    if (!totals.ok()) return Fail(res, totals.status());
    absl::StatusOr<v1::ServerInfo> info = manager_.Info(version_);
    if (!info.ok()) return Fail(res, info.status());
    res.set_content(PrometheusMetrics(*info, *totals), "text/plain; version=0.0.4; charset=utf-8");
  });
}

void HttpApi::RouteOtherRequests() {
  // Every path is read-only: another method on a path that exists is 405, with Allow.
  const auto other_method = [this](const httplib::Request& req, httplib::Response& res) {
    const absl::Time start = absl::Now();
    if (!Routed(req.path)) {
      Fail(res, NotFound(req.path));
    } else {
      res.set_header("Allow", "GET, HEAD");
      res.status = 405;
      Reply(res, ErrorJson(absl::StrCat(req.method, " ", req.path, ": not allowed; only GET")));
    }
    CountRequest(kUnroutedRequest, res.status, start);
  };
  server_->Post(".*", other_method);
  server_->Put(".*", other_method);
  server_->Patch(".*", other_method);
  server_->Delete(".*", other_method);
  server_->Options(".*", other_method);
  // A path no route takes: a JSON 404 too (a handler's own error keeps its body).
  server_->set_error_handler(
      httplib::Server::HandlerWithResponse([](const httplib::Request& req, httplib::Response& res) {
        if (res.status != 404 || !res.body.empty()) {
          return httplib::Server::HandlerResponse::Unhandled;
        }
        Fail(res, NotFound(req.path));
        CountRequest(kUnroutedRequest, res.status, absl::Now());
        return httplib::Server::HandlerResponse::Handled;
      }));
}

void HttpApi::GetJson(const std::string& pattern, JsonAnswer answer) {
  Get(pattern, [answer = std::move(answer)](const httplib::Request& req, httplib::Response& res) {
    absl::StatusOr<std::string> body = answer(req);
    if (!body.ok()) return Fail(res, body.status());
    Reply(res, *body);
  });
}

void HttpApi::Get(const std::string& pattern, httplib::Server::Handler handler) {
  get_patterns_.emplace_back(pattern);
  server_->Get(pattern, [pattern, handler = std::move(handler)](const httplib::Request& req,
                                                                httplib::Response& res) {
    const absl::Time start = absl::Now();
    handler(req, res);
    CountRequest(pattern, res.status == -1 ? 200 : res.status, start);  // -1: httplib's 200
  });
}

bool HttpApi::Routed(const std::string& path) const {
  for (const std::regex& pattern : get_patterns_) {
    if (std::regex_match(path, pattern)) return true;
  }
  return false;
}

absl::StatusOr<int> HttpApi::Start(const std::string& host, int port) {
  int bound = -1;
  if (port == 0) {
    bound = server_->bind_to_any_port(host);
  } else if (server_->bind_to_port(host, port)) {
    bound = port;
  }
  if (bound <= 0) {
    return absl::UnavailableError(absl::StrCat("--http: cannot listen on ", host, ":", port,
                                               " (in use, or not this host's)"));
  }
  thread_ = std::thread([this] {
    server_->listen_after_bind();
    listen_ended_ = true;
  });
  return bound;
}

void HttpApi::Stop() {
  // httplib ignores a stop() that comes before its listen loop has started (a SIGTERM right
  // after start-up): repeat it until the loop has returned.
  while (thread_.joinable() && !listen_ended_) {
    server_->stop();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (thread_.joinable()) thread_.join();
  server_->Stop();
}

}  // namespace gpuprobe
