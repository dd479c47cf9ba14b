// UploadModule and GetModule through the gRPC service (in process, on the cpu backend): a module
// sent in chunks is checked and stored once under its sha256; what is no module, a module past
// the size limit, a daemon without client kernels and a caller without the kernel role are
// refused with the reason.
#include <fstream>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/sha256.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/api/module_upload_reactor.h"
#include "tests/api/probe_service_fixture.h"

namespace gpuprobe {
namespace {

using testing::HasSubstr;

// A PTX module (no nvcc needed) of about `bytes` bytes: one kernel, padded with comment lines.
std::string Ptx(size_t bytes = 0) {
  std::string ptx =
      ".version 8.0\n.target sm_90\n.address_size 64\n"
      ".visible .entry spin(\n .param .u64 spin_param_0\n)\n{\n ret;\n}\n";
  while (ptx.size() < bytes) ptx += "// padding\n";
  return ptx;
}

class ModuleUploadTest : public ProbeServiceTest {
 protected:
  grpc::Status Upload(const std::string& bytes, v1::Module* module, size_t chunk = 100,
                      const std::string& token = "") {
    grpc::ClientContext context;
    if (!token.empty()) context.AddMetadata("authorization", "Bearer " + token);
    auto writer = stub_->UploadModule(&context, module);
    v1::ModuleChunk c;
    for (size_t at = 0; at < bytes.size(); at += chunk) {
      c.set_data(bytes.substr(at, chunk));
      if (!writer->Write(c)) break;
    }
    writer->WritesDone();
    return writer->Finish();
  }
  grpc::Status Get(const std::string& id, v1::Module* module) {
    grpc::ClientContext context;
    v1::GetModuleRequest request;
    request.set_id(id);
    return stub_->GetModule(&context, request, module);
  }
};

TEST_F(ModuleUploadTest, AModuleSentInChunksIsStoredOnceUnderItsSha256) {
  const std::string ptx = Ptx(1000);
  v1::Module first, again, got;
  ASSERT_TRUE(Upload(ptx, &first).ok());
  EXPECT_EQ(first.id(), Sha256Hex(ptx));
  EXPECT_EQ(first.format(), v1::MODULE_FORMAT_PTX);
  EXPECT_EQ(first.size_bytes(), ptx.size());
  ASSERT_EQ(first.kernels_size(), 1);
  EXPECT_EQ(first.kernels(0).name(), "spin");
  EXPECT_FALSE(first.already_stored());
  ASSERT_TRUE(Upload(ptx, &again, 333).ok());
  EXPECT_TRUE(again.already_stored());
  EXPECT_EQ(again.id(), first.id());
  ASSERT_TRUE(Get(first.id(), &got).ok());
  EXPECT_EQ(got.kernels(0).name(), "spin");
  // Stored: a restarted daemon still has it.
  StartDaemon();
  ASSERT_TRUE(Get(first.id(), &got).ok());
  EXPECT_EQ(Get(Sha256Hex("other"), &got).error_code(), grpc::StatusCode::NOT_FOUND);
  const grpc::Status bad = Get("../etc/passwd", &got);
  EXPECT_EQ(bad.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(bad.error_message(), HasSubstr("sha256"));
}

TEST_F(ModuleUploadTest, WhatIsNoModuleOrIsTooLargeIsRefusedAndNothingIsStored) {
  v1::Module module;
  const grpc::Status gzip = Upload(std::string("\x1f\x8b\x08\x00", 4) + "data", &module);
  EXPECT_EQ(gzip.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(gzip.error_message(), HasSubstr("gzip"));
  QueueLimits limits;
  limits.max_module_bytes = 2000;
  StartDaemon(limits);
  const grpc::Status large = Upload(Ptx(5000), &module);
  EXPECT_EQ(large.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(large.error_message(), HasSubstr("--max-module-bytes"));
  EXPECT_EQ(Get(Sha256Hex(Ptx(5000)), &module).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_TRUE(Upload(Ptx(1500), &module).ok());

  limits.client_kernels = false;
  StartDaemon(limits);
  const grpc::Status off = Upload(Ptx(100), &module);
  EXPECT_EQ(off.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(off.error_message(), HasSubstr("--client-kernels=false"));
}

TEST_F(ModuleUploadTest, UploadsBeingReceivedAreBoundedAndTheNextIsRefusedUntilOneEnds) {
  constexpr int kBound = ModuleUploadReactor::kMaxUploads;
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<v1::Module> modules(kBound + 1);
  std::vector<std::unique_ptr<grpc::ClientWriter<v1::ModuleChunk>>> writers;
  for (int i = 0; i <= kBound; ++i) {
    contexts.push_back(std::make_unique<grpc::ClientContext>());
    writers.push_back(stub_->UploadModule(contexts.back().get(), &modules[i]));
    writers.back()->WaitForInitialMetadata();  // the daemon has taken or refused it
  }
  const grpc::Status refused = writers[kBound]->Finish();
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(refused.error_message(), HasSubstr("uploads are being received"));
  v1::ModuleChunk chunk;
  for (int i = 0; i < kBound; ++i) {
    chunk.set_data(Ptx(100 + i));
    ASSERT_TRUE(writers[i]->Write(chunk));
    writers[i]->WritesDone();
    EXPECT_TRUE(writers[i]->Finish().ok());
  }
  v1::Module module;
  EXPECT_TRUE(Upload(Ptx(), &module).ok());
}

TEST_F(ModuleUploadTest, OnlyTheKernelAndAdminRolesMayUploadAndTheKernelRoleMaySubmit) {
  const std::string tokens = data_dir_ + "/tokens";
  std::ofstream(tokens) << "k-t kernel kim\ns-t submit sam\na-t admin ann\n";
  absl::StatusOr<AccessControl> access = AccessControl::FromFile(tokens);
  ASSERT_TRUE(access.ok()) << access.status();
  access_ = *access;
  StartDaemon();
  v1::Module module;
  const grpc::Status sam = Upload(Ptx(), &module, 100, "s-t");
  EXPECT_EQ(sam.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(sam.error_message(), HasSubstr("kernel"));
  EXPECT_TRUE(Upload(Ptx(), &module, 100, "k-t").ok());
  EXPECT_TRUE(Upload(Ptx(200), &module, 100, "a-t").ok());
  grpc::ClientContext context;
  context.AddMetadata("authorization", "Bearer k-t");
  v1::SubmitRequest request;
  *request.mutable_sweep() = SmallSweepRequest();
  v1::Job job;
  EXPECT_TRUE(stub_->Submit(&context, request, &job).ok());
}

// A kernel job naming `module`'s kernel "spin", as params_json.
v1::SubmitRequest KernelJob(const std::string& module) {
  v1::SubmitRequest request;
  v1::ProbeRequest& probe = *request.mutable_probe();
  probe.set_probe("kernel");
  probe.set_params_json(absl::StrCat(
      R"({"buffers": [{"name": "flag", "sizeBytes": "64"}], "arms": [{"name": "spin", )",
      R"("launches": [{"module": ")", module,
      R"(", "kernel": "spin", "grid": [1], "block": [1], "args": [{"buffer": "flag"}]}]}]})"));
  return request;
}

TEST_F(ModuleUploadTest, AKernelJobNeedsTheKernelRoleItsModulesStoredAndACudaDevice) {
  const std::string tokens = data_dir_ + "/tokens";
  std::ofstream(tokens) << "k-t kernel kim\ns-t submit sam\n";
  absl::StatusOr<AccessControl> access = AccessControl::FromFile(tokens);
  ASSERT_TRUE(access.ok()) << access.status();
  access_ = *access;
  StartDaemon();
  auto submit = [&](const v1::SubmitRequest& request, const std::string& token) {
    grpc::ClientContext context;
    context.AddMetadata("authorization", "Bearer " + token);
    v1::Job job;
    return stub_->Submit(&context, request, &job);
  };
  const std::string ptx = Ptx();
  const grpc::Status sam = submit(KernelJob(Sha256Hex(ptx)), "s-t");
  EXPECT_EQ(sam.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(sam.error_message(), HasSubstr("Submit needs the kernel role"));
  // Not uploaded yet: refused naming the module, nothing stored.
  const grpc::Status missing = submit(KernelJob(Sha256Hex(ptx)), "k-t");
  EXPECT_EQ(missing.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(missing.error_message(),
              HasSubstr(absl::StrCat("module ", Sha256Hex(ptx), " is not stored: upload it")));
  v1::Module module;
  ASSERT_TRUE(Upload(ptx, &module, 100, "k-t").ok());
  // Stored, but this daemon's device is the cpu.
  const grpc::Status cpu = submit(KernelJob(module.id()), "k-t");
  EXPECT_EQ(cpu.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(cpu.error_message(), HasSubstr("the kernel probe needs a cuda device"));
  v1::SubmitRequest bad = KernelJob(module.id());
  bad.mutable_probe()->set_params_json(R"({"arms": 3})");
  const grpc::Status json = submit(bad, "k-t");
  EXPECT_EQ(json.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(json.error_message(), HasSubstr("params_json: not a gpuprobe.v1.KernelParams"));
  v1::ListJobsRequest list;
  v1::ListJobsResponse jobs;
  grpc::ClientContext context;
  context.AddMetadata("authorization", "Bearer k-t");
  ASSERT_TRUE(stub_->ListJobs(&context, list, &jobs).ok());
  EXPECT_EQ(jobs.jobs_size(), 0);

  QueueLimits off;
  off.client_kernels = false;
  StartDaemon(off);
  const grpc::Status refused = submit(KernelJob(module.id()), "k-t");
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(refused.error_message(), HasSubstr("--client-kernels=false"));
}

}  // namespace
}  // namespace gpuprobe
