// An httplib::Server that no slow client can stall. httplib gives each connection a thread from
// its pool for as long as the client takes to send its request, so a few clients that send one
// header line a second hold every thread. Here one thread (the gate) reads every connection's
// request head without blocking, and only a complete head goes to the worker threads:
//   - the head (request line and headers) must arrive within head_timeout of the connection,
//     and be at most max_head_bytes (else 431);
//   - at most max_waiting connections wait at the gate; a new one beyond that closes the one
//     that has waited longest;
//   - at most max_queued complete requests wait for a worker (else 503);
//   - a body must arrive within head_timeout of the connection too (the API serves GET only);
//   - every send must make progress within send_timeout, and a whole response must be sent
//     within response_timeout;
//   - one request per connection (`Connection: close`), so no idle keep-alive holds a worker.
//
//   GatedHttpServer server(GatedHttpServer::Limits{});
//   server.Get("/metrics", ...);
//   server.bind_to_port(host, port);
//   server.listen_after_bind();  // until Stop()
#pragma once

#include <httplib.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/time.h"

namespace gpuprobe {

class GatedHttpServer : public httplib::Server {
 public:
  struct Limits {
    absl::Duration head_timeout = absl::Seconds(10);
    size_t max_head_bytes = 16 * 1024;
    // A body (the API reads none): one declared longer, or chunked, is refused with 413.
    size_t max_body_bytes = 64 * 1024;
    int max_waiting = 256;
    int workers = 16;
    int max_queued = 256;
    absl::Duration send_timeout = absl::Seconds(10);
    absl::Duration response_timeout = absl::Minutes(10);
  };

  explicit GatedHttpServer(Limits limits);
  ~GatedHttpServer() override;  // Stop()

  // Ends the listen loop (httplib's stop()), closes every waiting connection and cuts off the
  // responses being sent.
  void Stop();

 private:
  struct Waiting {
    int socket;
    absl::Time deadline;
    std::string head;  // what the client has sent so far
  };

  // Called by the listen loop for each accepted connection: hands it to the gate.
  bool process_and_close_socket(int socket) override;
  void GateLoop();
  // Reads what `w` has sent; true when the connection is done with here (handed on or closed).
  bool ReadAtGate(Waiting& w);
  void Serve(Waiting w);
  void Wake();

  const Limits limits_;
  int wake_fd_ = -1;  // an eventfd that interrupts the gate's poll

  std::mutex mu_;
  std::vector<Waiting> arrived_;  // accepted, not yet taken in by the gate thread
  std::set<int> serving_;         // sockets a worker is answering
  int queued_ = 0;                // complete requests not yet taken by a worker
  bool stopping_ = false;

  std::unique_ptr<httplib::ThreadPool> workers_;
  std::thread gate_;
};

}  // namespace gpuprobe
