#include "server/artifacts/artifact_store.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/temp_dir.h"

namespace gpuprobe {
namespace {

namespace fs = std::filesystem;

class ArtifactStoreTest : public testing::Test {
 protected:
  testing_support::ScopedTempDir temp_{"gpuprobe_artifacts"};  // removed last

  void SetUp() override { root_ = temp_.path() + "/artifacts"; }
  static void Write(const std::string& path, size_t bytes) {
    std::ofstream(path, std::ios::binary) << std::string(bytes, 'x');
  }
  static std::string ReadAll(ArtifactReader& reader) {
    std::string all;
    while (true) {
      absl::StatusOr<std::string> next = reader.Next(7);
      EXPECT_TRUE(next.ok());
      if (!next.ok() || next->empty()) return all;
      all += *next;
    }
  }
  std::string root_;
};

TEST_F(ArtifactStoreTest, AJobGetsAFreshDirectoryUnderTheRootAndItsFilesAreListedAndRead) {
  ArtifactStore store(root_, 1 << 20);
  absl::StatusOr<std::string> dir = store.PrepareJob("job-3", 100);
  ASSERT_TRUE(dir.ok()) << dir.status();
  EXPECT_EQ(*dir, root_ + "/job-3");
  Write(*dir + "/b.npy", 10);
  Write(*dir + "/a.npy", 20);
  absl::StatusOr<std::vector<v1::Artifact>> list = store.List("job-3");
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].name(), "a.npy");
  EXPECT_EQ((*list)[0].bytes(), 20u);
  absl::StatusOr<std::unique_ptr<ArtifactReader>> reader = store.Open("job-3", "b.npy");
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ(ReadAll(**reader), std::string(10, 'x'));
  // A second attempt starts empty.
  ASSERT_TRUE(store.PrepareJob("job-3", 100).ok());
  EXPECT_TRUE(store.List("job-3")->empty());
}

TEST_F(ArtifactStoreTest, NamesAndIdsThatCouldLeaveTheRootAreNotFound) {
  ArtifactStore store(root_, 1 << 20);
  ASSERT_TRUE(store.PrepareJob("job-1", 10).ok());
  Write(root_ + "/../secret", 5);
  for (const std::string name : {"../../secret", "/etc/passwd", ".hidden", "", "a/b"}) {
    EXPECT_EQ(store.Open("job-1", name).status().code(), absl::StatusCode::kNotFound) << name;
  }
  for (const std::string id : {"../job-1", "job-1/..", "job-x", "/tmp"}) {
    EXPECT_EQ(store.Open(id, "a.npy").status().code(), absl::StatusCode::kNotFound) << id;
    EXPECT_EQ(store.PrepareJob(id, 1).status().code(), absl::StatusCode::kInvalidArgument) << id;
  }
}

TEST_F(ArtifactStoreTest, AnArtifactThatIsASymbolicLinkIsNeitherListedNorRead) {
  ArtifactStore store(root_, 1 << 20);
  absl::StatusOr<std::string> dir = store.PrepareJob("job-1", 10);
  ASSERT_TRUE(dir.ok());
  const std::string outside = root_ + "/../outside.txt";
  Write(outside, 4);
  ASSERT_EQ(symlink(outside.c_str(), (*dir + "/link.npy").c_str()), 0);
  EXPECT_TRUE(store.List("job-1")->empty());
  EXPECT_EQ(store.Open("job-1", "link.npy").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(ArtifactStoreTest, AJobDirectoryPlantedAsALinkIsReplacedNotWrittenThrough) {
  ArtifactStore store(root_, 1 << 20);
  ASSERT_TRUE(store.PrepareJob("job-1", 1).ok());  // makes the root
  const std::string target = root_ + "/../target";
  fs::create_directories(target);
  ASSERT_EQ(symlink(target.c_str(), (root_ + "/job-2").c_str()), 0);
  absl::StatusOr<std::string> dir = store.PrepareJob("job-2", 1);
  ASSERT_TRUE(dir.ok()) << dir.status();
  EXPECT_FALSE(fs::is_symlink(*dir));
  EXPECT_TRUE(fs::is_directory(target)) << "the link's target must survive";
  EXPECT_TRUE(fs::is_empty(target));
}

TEST_F(ArtifactStoreTest, TheOldestJobsGoFirstToMakeRoomAndAnOversizedJobIsRefused) {
  ArtifactStore store(root_, 100);
  for (const char* id : {"job-9", "job-10", "job-11"}) {
    absl::StatusOr<std::string> dir = store.PrepareJob(id, 40);
    ASSERT_TRUE(dir.ok());
    Write(*dir + "/data.npy", 40);
  }
  // 3 x 40 > 100: preparing job-11 removed job-9, the oldest.
  EXPECT_TRUE(store.List("job-9")->empty());
  EXPECT_EQ(store.List("job-10")->size(), 1u);
  EXPECT_LE(store.TotalBytes(), 100);
  EXPECT_EQ(store.PrepareJob("job-12", 101).status().code(), absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace gpuprobe
