// The stores' modules (JobStore::PutModule, GetModule), on both stores: content-addressed, stored
// once, bounded by the store's and each uploader's quota, aged out least recently used first
// unless a queued or running job names them.
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/sha256.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/store/store_test_fixture.h"

namespace gpuprobe {
namespace {

using testing::HasSubstr;

class ModuleStoreTest : public StoreTest {
 protected:
  // A module of `size` bytes whose content is `seed`'s (the store takes the record as given).
  static NewModule Module(int seed, int64_t size, const std::string& uploader = "ann") {
    NewModule m;
    m.bytes = std::string(static_cast<size_t>(size), static_cast<char>('a' + seed));
    m.module.set_id(Sha256Hex(m.bytes));
    m.module.set_format(v1::MODULE_FORMAT_PTX);
    m.module.set_size_bytes(static_cast<uint64_t>(size));
    m.module.add_kernels()->set_name(absl::StrCat("k", seed));
    m.uploader = uploader;
    return m;
  }
};

TEST_P(ModuleStoreTest, AModuleIsStoredOnceAndReadBackWhole) {
  std::unique_ptr<JobStore> store = Open();
  ASSERT_NE(store, nullptr);
  const absl::Time t0 = absl::FromUnixSeconds(1'000'000);
  const NewModule m = Module(1, 1000);
  absl::StatusOr<v1::Module> first = store->PutModule(m, ModuleQuota{}, t0);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE(first->already_stored());
  EXPECT_EQ(first->id(), m.module.id());
  absl::StatusOr<v1::Module> again = store->PutModule(m, ModuleQuota{}, t0 + absl::Seconds(5));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->already_stored());
  EXPECT_EQ(again->used_at().seconds() - again->uploaded_at().seconds(), 5);

  absl::StatusOr<StoredModule> read = store->GetModule(m.module.id(), /*with_bytes=*/true);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->bytes, m.bytes);
  EXPECT_EQ(read->module.kernels(0).name(), "k1");
  EXPECT_EQ(store->GetModule(Sha256Hex("none"), false).status().code(),
            absl::StatusCode::kNotFound);
  // Another daemon of a shared store sees it (a SQLite file serves one daemon).
  if (GetParam() == "postgresql") {
    std::unique_ptr<JobStore> other = Open();
    ASSERT_NE(other, nullptr);
    EXPECT_TRUE(other->GetModule(m.module.id(), false).ok());
  }
}

TEST_P(ModuleStoreTest, AnUploaderPastItsQuotaIsRefusedNamingIt) {
  std::unique_ptr<JobStore> store = Open();
  ASSERT_NE(store, nullptr);
  const ModuleQuota quota{.store_bytes = 100'000, .client_bytes = 2500};
  ASSERT_TRUE(store->PutModule(Module(1, 2000), quota, absl::Now()).ok());
  absl::StatusOr<v1::Module> refused = store->PutModule(Module(2, 1000), quota, absl::Now());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(refused.status().message(), HasSubstr("--client-module-quota-bytes"));
  EXPECT_THAT(refused.status().message(), HasSubstr("ann"));
  // Another uploader has a quota of its own; the same bytes again take nothing more.
  EXPECT_TRUE(store->PutModule(Module(2, 1000, "bob"), quota, absl::Now()).ok());
  EXPECT_TRUE(store->PutModule(Module(1, 2000), quota, absl::Now()).ok());
}

TEST_P(ModuleStoreTest, TheLeastRecentlyUsedUnnamedModulesAgeOutAndNamedOnesStay) {
  std::unique_ptr<JobStore> store = Open();
  ASSERT_NE(store, nullptr);
  const ModuleQuota quota{.store_bytes = 3000, .client_bytes = 1'000'000};
  const absl::Time t0 = absl::FromUnixSeconds(1'000'000);
  const NewModule named = Module(0, 1000), old = Module(1, 1000), recent = Module(2, 1000);
  ASSERT_TRUE(store->PutModule(named, quota, t0).ok());
  ASSERT_TRUE(store->PutModule(old, quota, t0 + absl::Seconds(1)).ok());
  ASSERT_TRUE(store->PutModule(recent, quota, t0 + absl::Seconds(2)).ok());
  // A job naming a module that is not stored is refused, and nothing of it is stored.
  v1::SubmitRequest request;
  request.mutable_sweep()->set_reps(3);
  const auto first_event = [](const v1::Job&) { return v1::JobEvent(); };
  absl::StatusOr<JobStore::Inserted> refused_job =
      store->Insert(NewJob{.request = request, .modules = {named.module.id(), Sha256Hex("none")}},
                    "ann", "", t0, first_event);
  EXPECT_EQ(refused_job.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(refused_job.status().message(), HasSubstr(Sha256Hex("none")));
  EXPECT_EQ(*store->CountQueued(), 0);
  // A queued job names the oldest module: ageing keeps it.
  absl::StatusOr<JobStore::Inserted> job = store->Insert(
      NewJob{.request = request, .modules = {named.module.id()}}, "ann", "", t0, first_event);
  ASSERT_TRUE(job.ok()) << job.status();

  ASSERT_TRUE(store->PutModule(Module(3, 1000), quota, t0 + absl::Seconds(3)).ok());
  EXPECT_TRUE(store->GetModule(named.module.id(), false).ok());
  EXPECT_EQ(store->GetModule(old.module.id(), false).status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(store->GetModule(recent.module.id(), false).ok());

  // Named modules alone fill the quota: a module larger than what ageing frees is refused.
  absl::StatusOr<v1::Module> refused =
      store->PutModule(Module(4, 2500), quota, t0 + absl::Seconds(4));
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(refused.status().message(), HasSubstr("--module-quota-bytes"));
  EXPECT_TRUE(store->GetModule(named.module.id(), false).ok());
}

INSTANTIATE_TEST_SUITE_P(BothStores, ModuleStoreTest, testing::Values("sqlite", "postgresql"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace gpuprobe
