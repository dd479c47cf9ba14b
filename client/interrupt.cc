#include "client/interrupt.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <iostream>
#include <utility>

namespace gpuprobe {
namespace {

// The handler may only write(2): one byte into this pipe, which the thread waits on. A second
// byte, from the destructor, tells the thread to stop.
std::array<int, 2> interrupt_pipe = {-1, -1};
struct sigaction previous_action;

void WriteByte(char byte) {
  // A full pipe already holds a byte that wakes the thread.
  [[maybe_unused]] const ssize_t n = write(interrupt_pipe[1], &byte, 1);
}

void OnSigint(int) { WriteByte('i'); }

}  // namespace

OnInterrupt::OnInterrupt(std::function<void()> on_interrupt)
    : on_interrupt_(std::move(on_interrupt)) {
  if (pipe2(interrupt_pipe.data(), O_CLOEXEC) != 0) return;  // Ctrl-C then ends the process
  struct sigaction action = {};
  action.sa_handler = OnSigint;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND | SA_RESTART;  // the second Ctrl-C is the default's
  sigaction(SIGINT, &action, &previous_action);
  thread_ = std::thread([this] {
    pollfd fd = {.fd = interrupt_pipe[0], .events = POLLIN, .revents = 0};
    char byte = 0;
    while (poll(&fd, 1, -1) < 0 && errno == EINTR) {
    }
    if (read(interrupt_pipe[0], &byte, 1) == 1 && byte == 'i') on_interrupt_();
  });
}

OnInterrupt::~OnInterrupt() {
  if (!thread_.joinable()) return;
  sigaction(SIGINT, &previous_action, nullptr);
  WriteByte('s');
  thread_.join();
  close(interrupt_pipe[0]);
  close(interrupt_pipe[1]);
  interrupt_pipe = {-1, -1};
}

CancelOnInterrupt::CancelOnInterrupt(const ClientContext& context, grpc::ClientContext& stream)
    : context_(context), stream_(stream), interrupt_([this] { Cancel(); }) {}

void CancelOnInterrupt::Known(const std::string& job_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  job_id_ = job_id;
}

void CancelOnInterrupt::Cancel() {
  std::string job_id;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_id = job_id_;
  }
  if (job_id.empty()) {
    std::cerr << "\ngpuprobe: interrupted before gpuprobed named the job; if it was accepted, "
                 "`gpuprobe jobs --state queued,running` lists it\n";
    stream_.TryCancel();
    return;
  }
  std::cerr << "\ngpuprobe: interrupted: cancelling job " << job_id
            << " (Ctrl-C again leaves now; the cancel stands)\n";
  auto stub = v1::ProbeService::NewStub(context_.channel);
  grpc::ClientContext rpc;
  context_.Prepare(rpc);
  rpc.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::CancelJobRequest request;
  request.set_job_id(job_id);
  v1::Job job;
  if (const grpc::Status s = stub->CancelJob(&rpc, request, &job); !s.ok()) {
    std::cerr << "gpuprobe: could not cancel job " << job_id << ": " << s.error_message()
              << "; `gpuprobe cancel " << job_id << "` does\n";
    stream_.TryCancel();
  }
}

}  // namespace gpuprobe
