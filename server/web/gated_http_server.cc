#include "server/web/gated_http_server.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"

namespace gpuprobe {
namespace {

// Milliseconds from now until `deadline`, for poll(): 0 when past.
int MillisUntil(absl::Time deadline) {
  const absl::Duration left = deadline - absl::Now();
  if (left <= absl::ZeroDuration()) return 0;
  if (left >= absl::Minutes(1)) return 60'000;
  return static_cast<int>(absl::ToInt64Milliseconds(left)) + 1;
}

// Waits until `socket` has `events` or `deadline` passes; true when it has them.
bool WaitFor(int socket, short events, absl::Time deadline) {
  for (;;) {
    pollfd p{socket, events, 0};
    const int n = poll(&p, 1, MillisUntil(deadline));
    if (n > 0) return true;
    if (n == 0 && absl::Now() >= deadline) return false;
    if (n < 0 && errno != EINTR) return false;
  }
}

void NumericAddress(const sockaddr_storage& address, socklen_t length, std::string& ip, int& port) {
  char host[NI_MAXHOST];
  char service[NI_MAXSERV];
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&address), length, host, sizeof(host), service,
                  sizeof(service), NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
    ip = host;
    port = std::atoi(service);
  }
}

// Sends a whole short reply without waiting: a refusal to a client the server is dropping.
void SendRefusal(int socket, const char* status_line) {
  const std::string reply =
      std::string("HTTP/1.1 ") + status_line + "\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";
  (void)send(socket, reply.data(), reply.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

// Whether a complete request head declares a body longer than `max_bytes`, or one of no stated
// length (chunked).
bool DeclaresBodyOver(absl::string_view head, size_t max_bytes) {
  for (absl::string_view line : absl::StrSplit(head, "\r\n")) {
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    const absl::string_view name = absl::StripAsciiWhitespace(line.substr(0, colon));
    const absl::string_view value = absl::StripAsciiWhitespace(line.substr(colon + 1));
    if (absl::EqualsIgnoreCase(name, "transfer-encoding")) return true;
    size_t length = 0;
    if (absl::EqualsIgnoreCase(name, "content-length") &&
        (!absl::SimpleAtoi(value, &length) || length > max_bytes)) {
      return true;
    }
  }
  return false;
}

void Close(int socket) {
  shutdown(socket, SHUT_RDWR);
  close(socket);
}

// A connection whose request head the gate has already read: reads are served from that head
// first, then from the socket, all before the connection's deadline; each send must progress
// within send_timeout and all of them end by the response deadline.
class GatedStream : public httplib::Stream {
 public:
  GatedStream(int socket, std::string head, absl::Time read_deadline, absl::Duration send_timeout,
              absl::Time response_deadline)
      : socket_(socket),
        head_(std::move(head)),
        read_deadline_(read_deadline),
        send_timeout_(send_timeout),
        response_deadline_(response_deadline) {}

  bool is_readable() const override {
    return offset_ < head_.size() || WaitFor(socket_, POLLIN, read_deadline_);
  }

  bool is_writable() const override { return WaitFor(socket_, POLLOUT, SendDeadline()); }

  ssize_t read(char* ptr, size_t size) override {
    if (offset_ < head_.size()) {
      const size_t n = std::min(size, head_.size() - offset_);
      std::memcpy(ptr, head_.data() + offset_, n);
      offset_ += n;
      return static_cast<ssize_t>(n);
    }
    if (!WaitFor(socket_, POLLIN, read_deadline_)) return -1;
    return recv(socket_, ptr, size, MSG_DONTWAIT);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!WaitFor(socket_, POLLOUT, SendDeadline())) return -1;
    return send(socket_, ptr, size, MSG_NOSIGNAL | MSG_DONTWAIT);
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage address{};
    socklen_t length = sizeof(address);
    if (getpeername(socket_, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
      NumericAddress(address, length, ip, port);
    }
  }

  void get_local_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage address{};
    socklen_t length = sizeof(address);
    if (getsockname(socket_, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
      NumericAddress(address, length, ip, port);
    }
  }

  int socket() const override { return socket_; }

 private:
  absl::Time SendDeadline() const {
    return std::min(absl::Now() + send_timeout_, response_deadline_);
  }

  const int socket_;
  const std::string head_;
  size_t offset_ = 0;
  const absl::Time read_deadline_;
  const absl::Duration send_timeout_;
  const absl::Time response_deadline_;
};

// Runs each task on the thread that enqueues it: the listen loop's hand-off to the gate.
class InlineTaskQueue : public httplib::TaskQueue {
 public:
  void enqueue(std::function<void()> fn) override { fn(); }
  void shutdown() override {}
};

}  // namespace

GatedHttpServer::GatedHttpServer(Limits limits)
    : limits_(limits),
      wake_fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)),
      workers_(std::make_unique<httplib::ThreadPool>(limits.workers)) {
  new_task_queue = [] { return new InlineTaskQueue(); };
  set_payload_max_length(limits.max_body_bytes);
  gate_ = std::thread([this] { GateLoop(); });
}

GatedHttpServer::~GatedHttpServer() {
  Stop();
  close(wake_fd_);
}

void GatedHttpServer::Stop() {
  stop();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    for (int socket : serving_) shutdown(socket, SHUT_RDWR);
  }
  Wake();
  gate_.join();
  workers_->shutdown();
}

bool GatedHttpServer::process_and_close_socket(int socket) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) {
      Close(socket);
      return false;
    }
    arrived_.push_back({socket, absl::Now() + limits_.head_timeout, {}});
  }
  Wake();
  return true;
}

void GatedHttpServer::Wake() {
  const uint64_t one = 1;
  (void)::write(wake_fd_, &one, sizeof(one));
}

void GatedHttpServer::GateLoop() {
  std::vector<Waiting> waiting;  // oldest first
  std::vector<pollfd> polled;
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) break;
      for (Waiting& w : arrived_) waiting.push_back(std::move(w));
      arrived_.clear();
    }
    while (waiting.size() > static_cast<size_t>(limits_.max_waiting)) {
      SendRefusal(waiting.front().socket, "503 Service Unavailable");
      Close(waiting.front().socket);
      waiting.erase(waiting.begin());
    }
    // Those past their deadline are dropped; the poll waits for the next deadline at most.
    absl::Time next = absl::InfiniteFuture();
    const absl::Time now = absl::Now();
    std::erase_if(waiting, [&](const Waiting& w) {
      if (w.deadline > now) return false;
      SendRefusal(w.socket, "408 Request Timeout");
      Close(w.socket);
      return true;
    });
    for (const Waiting& w : waiting) next = std::min(next, w.deadline);

    polled.assign(1, pollfd{wake_fd_, POLLIN, 0});
    for (const Waiting& w : waiting) polled.push_back(pollfd{w.socket, POLLIN, 0});
    if (poll(polled.data(), polled.size(), MillisUntil(next)) < 0 && errno != EINTR) break;
    if (polled[0].revents != 0) {
      uint64_t count;
      (void)::read(wake_fd_, &count, sizeof(count));
    }
    std::vector<Waiting> still;
    for (size_t i = 0; i < waiting.size(); ++i) {
      if (polled[i + 1].revents == 0 || !ReadAtGate(waiting[i])) {
        still.push_back(std::move(waiting[i]));
      }
    }
    waiting = std::move(still);
  }
  for (const Waiting& w : waiting) Close(w.socket);
  std::lock_guard<std::mutex> lock(mu_);
  for (const Waiting& w : arrived_) Close(w.socket);
  arrived_.clear();
}

bool GatedHttpServer::ReadAtGate(Waiting& w) {
  char buffer[4096];
  const ssize_t n = recv(w.socket, buffer, sizeof(buffer), MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return false;
  if (n <= 0) {  // closed by the client, or broken
    Close(w.socket);
    return true;
  }
  // Only the newly read bytes (and the three before them) can complete the head.
  const size_t from = w.head.size() >= 3 ? w.head.size() - 3 : 0;
  w.head.append(buffer, n);
  const size_t end = w.head.find("\r\n\r\n", from);
  const bool complete = end != std::string::npos;
  if (complete ? end + 4 > limits_.max_head_bytes : w.head.size() > limits_.max_head_bytes) {
    SendRefusal(w.socket, "431 Request Header Fields Too Large");
    Close(w.socket);
    return true;
  }
  if (!complete) return false;
  if (DeclaresBodyOver(absl::string_view(w.head).substr(0, end), limits_.max_body_bytes)) {
    SendRefusal(w.socket, "413 Content Too Large");
    Close(w.socket);
    return true;
  }

  std::lock_guard<std::mutex> lock(mu_);
  if (queued_ >= limits_.max_queued) {
    SendRefusal(w.socket, "503 Service Unavailable");
    Close(w.socket);
    return true;
  }
  ++queued_;
  workers_->enqueue([this, w = std::move(w)]() mutable { Serve(std::move(w)); });
  return true;
}

void GatedHttpServer::Serve(Waiting w) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    --queued_;
    if (stopping_) {
      Close(w.socket);
      return;
    }
    serving_.insert(w.socket);
  }
  GatedStream stream(w.socket, std::move(w.head), w.deadline, limits_.send_timeout,
                     absl::Now() + limits_.response_timeout);
  bool closed = false;
  process_request(stream, /*close_connection=*/true, closed, nullptr);
  {
    std::lock_guard<std::mutex> lock(mu_);
    serving_.erase(w.socket);
  }
  Close(w.socket);
}

}  // namespace gpuprobe
