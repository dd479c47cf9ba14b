// The HTTP listener's limits: a request head must arrive in time and fit, a body too; waiting
// connections are capped; a client that does not read its response frees its worker; and no
// number of slow clients keeps a complete request from being answered.
#include "server/web/gated_http_server.h"

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/web/raw_connection.h"

namespace gpuprobe {
namespace {

using testing::HasSubstr;
using testing::StartsWith;
using testing_support::RawConnection;

class GatedHttpServerTest : public testing::Test {
 protected:
  void Start(GatedHttpServer::Limits limits) {
    server_ = std::make_unique<GatedHttpServer>(limits);
    server_->Get("/ping", [](const httplib::Request& req, httplib::Response& res) {
      res.set_content("pong from " + req.remote_addr, "text/plain");
    });
    server_->Get("/big", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(std::string(size_t{64} << 20, 'x'), "text/plain");
    });
    server_->Post("/echo", [](const httplib::Request& req, httplib::Response& res) {
      res.set_content(req.body, "text/plain");
    });
    port_ = server_->bind_to_any_port("127.0.0.1");
    ASSERT_GT(port_, 0);
    listener_ = std::thread([this] { server_->listen_after_bind(); });
    while (!server_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }

  void TearDown() override {
    if (server_) server_->Stop();
    if (listener_.joinable()) listener_.join();
  }

  // GET /ping on a fresh connection: the reply, and how long it took.
  std::string Ping(absl::Duration* took = nullptr) {
    const absl::Time start = absl::Now();
    RawConnection c(port_);
    EXPECT_TRUE(c.connected());
    c.Send("GET /ping HTTP/1.1\r\nHost: x\r\n\r\n");
    std::string reply = c.ReadUntilClosed(absl::Seconds(20));
    if (took != nullptr) *took = absl::Now() - start;
    return reply;
  }

  std::unique_ptr<GatedHttpServer> server_;
  std::thread listener_;
  int port_ = 0;
};

TEST_F(GatedHttpServerTest, AnswersOneRequestPerConnectionAndKnowsTheClientsAddress) {
  Start({});
  const std::string reply = Ping();
  EXPECT_THAT(reply, StartsWith("HTTP/1.1 200"));
  EXPECT_THAT(reply, HasSubstr("Connection: close"));
  EXPECT_THAT(reply, HasSubstr("pong from 127.0.0.1"));

  httplib::Client client("127.0.0.1", port_);
  for (int i = 0; i < 3; ++i) {  // a keep-alive client reconnects
    httplib::Result res = client.Get("/ping");
    ASSERT_TRUE(res) << i;
    EXPECT_EQ(res->status, 200);
  }
}

TEST_F(GatedHttpServerTest, SlowHeadsHoldNoWorker) {
  GatedHttpServer::Limits limits;
  limits.workers = 2;
  Start(limits);
  // Twenty clients each send a header line every 50 ms and never finish.
  std::vector<std::unique_ptr<RawConnection>> slow;
  for (int i = 0; i < 20; ++i) {
    slow.push_back(std::make_unique<RawConnection>(port_));
    ASSERT_TRUE(slow.back()->Send("GET /ping HTTP/1.1\r\n"));
  }
  std::atomic<bool> done = false;
  std::thread trickle([&] {
    while (!done) {
      for (auto& c : slow) c->Send("X-Slow: 1\r\n");
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  for (int i = 0; i < 5; ++i) EXPECT_THAT(Ping(), StartsWith("HTTP/1.1 200")) << i;
  done = true;
  trickle.join();
  for (auto& c : slow) EXPECT_FALSE(c->ClosedByServer());
}

TEST_F(GatedHttpServerTest, AHeadNotCompleteInTimeGets408AndIsClosed) {
  GatedHttpServer::Limits limits;
  limits.head_timeout = absl::Milliseconds(300);
  Start(limits);
  const absl::Time start = absl::Now();  // before the connection: its deadline is later
  RawConnection c(port_);
  c.Send("GET /ping HTTP/1.1\r\n");
  const std::string reply = c.ReadUntilClosed(absl::Seconds(20));
  EXPECT_TRUE(c.closed());
  EXPECT_THAT(reply, StartsWith("HTTP/1.1 408"));
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(300));
}

TEST_F(GatedHttpServerTest, AHeadOverTheLimitGets431) {
  GatedHttpServer::Limits limits;
  limits.max_head_bytes = 1024;
  Start(limits);
  RawConnection c(port_);
  c.Send("GET /ping HTTP/1.1\r\nX-Big: " + std::string(2048, 'a'));
  EXPECT_THAT(c.ReadUntilClosed(absl::Seconds(20)), StartsWith("HTTP/1.1 431"));
  EXPECT_TRUE(c.closed());
  // Complete in one piece, but longer than the limit: refused all the same.
  RawConnection whole(port_);
  whole.Send("GET /ping HTTP/1.1\r\nX-Big: " + std::string(1500, 'a') + "\r\n\r\n");
  EXPECT_THAT(whole.ReadUntilClosed(absl::Seconds(20)), StartsWith("HTTP/1.1 431"));
  // Just within it: served.
  RawConnection within(port_);
  within.Send("GET /ping HTTP/1.1\r\nX-Big: " + std::string(900, 'a') + "\r\n\r\n");
  EXPECT_THAT(within.ReadUntilClosed(absl::Seconds(20)), StartsWith("HTTP/1.1 200"));
}

TEST_F(GatedHttpServerTest, ABodyOverTheLimitOrOfNoStatedLengthGets413) {
  Start({});
  // 100 KB on a GET: refused at its head, before any of it is read (it was answered 200).
  RawConnection big(port_);
  big.Send("GET /ping HTTP/1.1\r\nContent-Length: 102400\r\n\r\n" + std::string(4096, 'a'));
  EXPECT_THAT(big.ReadUntilClosed(absl::Seconds(20)), StartsWith("HTTP/1.1 413"));
  RawConnection chunked(port_);
  chunked.Send("GET /ping HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n");
  EXPECT_THAT(chunked.ReadUntilClosed(absl::Seconds(20)), StartsWith("HTTP/1.1 413"));
  RawConnection garbled(port_);
  garbled.Send("GET /ping HTTP/1.1\r\nContent-Length: 12x\r\n\r\n");
  EXPECT_THAT(garbled.ReadUntilClosed(absl::Seconds(20)), StartsWith("HTTP/1.1 413"));
  // Within 64 KiB: served.
  RawConnection within(port_);
  within.Send("GET /ping HTTP/1.1\r\ncontent-length: 5\r\n\r\nhello");
  EXPECT_THAT(within.ReadUntilClosed(absl::Seconds(20)), StartsWith("HTTP/1.1 200"));
}

TEST_F(GatedHttpServerTest, ABodyNotCompleteInTimeEndsTheRequest) {
  GatedHttpServer::Limits limits;
  limits.head_timeout = absl::Milliseconds(300);
  limits.workers = 1;
  Start(limits);
  RawConnection c(port_);
  c.Send("POST /echo HTTP/1.1\r\nContent-Length: 100\r\n\r\nonly part");
  c.ReadUntilClosed(absl::Seconds(20));
  EXPECT_TRUE(c.closed());
  EXPECT_THAT(Ping(), StartsWith("HTTP/1.1 200"));  // the one worker is free again

  RawConnection whole(port_);
  whole.Send("POST /echo HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello");
  EXPECT_THAT(whole.ReadUntilClosed(absl::Seconds(20)), HasSubstr("\r\n\r\nhello"));
}

TEST_F(GatedHttpServerTest, BeyondTheWaitingCapTheLongestWaitingIsDropped) {
  GatedHttpServer::Limits limits;
  limits.max_waiting = 2;
  Start(limits);
  RawConnection first(port_), second(port_);
  first.Send("GET /ping HTTP/1.1\r\n");
  second.Send("GET /ping HTTP/1.1\r\n");
  // Both are waiting at the gate once a complete request has been answered after them.
  EXPECT_THAT(Ping(), StartsWith("HTTP/1.1 200"));
  RawConnection third(port_);
  third.Send("GET /ping HTTP/1.1\r\n");
  EXPECT_THAT(first.ReadUntilClosed(absl::Seconds(20)), StartsWith("HTTP/1.1 503"));
  EXPECT_TRUE(first.closed());
  second.Send("\r\n");
  EXPECT_THAT(second.ReadUntilClosed(absl::Seconds(20)), StartsWith("HTTP/1.1 200"));
}

TEST_F(GatedHttpServerTest, AClientThatDoesNotReadFreesItsWorkerAfterTheSendTimeout) {
  GatedHttpServer::Limits limits;
  limits.workers = 1;
  limits.send_timeout = absl::Milliseconds(300);
  Start(limits);
  RawConnection stalled(port_);
  stalled.Send("GET /big HTTP/1.1\r\n\r\n");  // 64 MiB that it never reads
  absl::Duration took;
  EXPECT_THAT(Ping(&took), StartsWith("HTTP/1.1 200"));
  EXPECT_LT(took, absl::Seconds(15));
}

TEST_F(GatedHttpServerTest, StopClosesWaitingConnections) {
  Start({});
  RawConnection c(port_);
  c.Send("GET /ping HTTP/1.1\r\n");
  EXPECT_THAT(Ping(), StartsWith("HTTP/1.1 200"));
  server_->Stop();
  c.ReadUntilClosed(absl::Seconds(20));
  EXPECT_TRUE(c.closed());
}

}  // namespace
}  // namespace gpuprobe
