// The module checks (InspectModule) on modules nvcc built (TEST_MODULES_DIR), and on what is no
// module: each refused saying what it is.
#include "common/module_inspection.h"

#include <elf.h>

#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>

#include "common/sha256.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpuprobe {
namespace {

using testing::HasSubstr;

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << path;
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

#ifdef TEST_MODULES_DIR
std::string Module(const std::string& name) {
  return Read(std::string(TEST_MODULES_DIR) + "/" + name);
}

std::map<std::string, std::string> Kernels(const v1::Module& module) {
  std::map<std::string, std::string> kernels;  // name: text hash
  for (const v1::ModuleKernel& k : module.kernels()) kernels[k.name()] = k.text_sha256();
  return kernels;
}

TEST(ModuleInspectionTest, ACubinListsItsKernelsWithTheHashOfTheirMachineCode) {
  const std::string bytes = Module("scale.cubin");
  absl::StatusOr<v1::Module> module = InspectModule(bytes);
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(module->format(), v1::MODULE_FORMAT_CUBIN);
  EXPECT_EQ(module->id(), Sha256Hex(bytes));
  EXPECT_EQ(module->size_bytes(), bytes.size());
  const std::map<std::string, std::string> kernels = Kernels(*module);
  ASSERT_EQ(kernels.size(), 2u);
  ASSERT_TRUE(kernels.count("scale"));
  ASSERT_TRUE(kernels.count("_Z7add_oneIiEvPT_i"));
  EXPECT_TRUE(IsSha256Hex(kernels.at("scale")));
  EXPECT_NE(kernels.at("scale"), kernels.at("_Z7add_oneIiEvPT_i"));
  // A module with a kernel more: other bytes, the same machine code for the kernels it shares.
  absl::StatusOr<v1::Module> extra = InspectModule(Module("scale_extra.cubin"));
  ASSERT_TRUE(extra.ok()) << extra.status();
  EXPECT_NE(extra->id(), module->id());
  std::map<std::string, std::string> shared = Kernels(*extra);
  ASSERT_TRUE(shared.count("negate"));
  shared.erase("negate");
  EXPECT_EQ(shared, kernels);
}

TEST(ModuleInspectionTest, AFatbinsCubinsAreReadUnlessCompressedAndPtxListsItsEntries) {
  const std::map<std::string, std::string> cubin = Kernels(*InspectModule(Module("scale.cubin")));
  absl::StatusOr<v1::Module> plain = InspectModule(Module("scale_plain.fatbin"));
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->format(), v1::MODULE_FORMAT_FATBIN);
  // Its PTX and its sm_90a cubin name the same kernels, listed once each, with the standalone
  // cubin's machine code.
  EXPECT_EQ(Kernels(*plain), cubin);
  absl::StatusOr<v1::Module> compressed = InspectModule(Module("scale.fatbin"));
  ASSERT_TRUE(compressed.ok()) << compressed.status();
  EXPECT_EQ(compressed->format(), v1::MODULE_FORMAT_FATBIN);

  absl::StatusOr<v1::Module> ptx = InspectModule(Module("scale.ptx"));
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  EXPECT_EQ(ptx->format(), v1::MODULE_FORMAT_PTX);
  ASSERT_EQ(ptx->kernels_size(), 2);
  EXPECT_TRUE(ptx->kernels(0).text_sha256().empty());
}

TEST(ModuleInspectionTest, ATruncatedOrDamagedCubinIsRefused) {
  const std::string bytes = Module("scale.cubin");
  EXPECT_THAT(InspectModule(bytes.substr(0, 40)).status().message(), HasSubstr("truncated"));
  EXPECT_THAT(InspectModule(bytes.substr(0, bytes.size() / 2)).status().message(),
              HasSubstr("runs past its end"));
}

// A section that claims no bytes in the file (SHT_NOBITS) far past its end, named by a kernel
// symbol or as the symbols' names: refused, never read.
TEST(ModuleInspectionTest, SectionsWithoutBytesAreNeverRead) {
  const std::string bytes = Module("scale.cubin");
  Elf64_Ehdr header;
  std::memcpy(&header, bytes.data(), sizeof(header));
  int edited = 0;
  for (int i = 0; i < header.e_shnum; ++i) {
    const size_t at = header.e_shoff + sizeof(Elf64_Shdr) * i;
    Elf64_Shdr section;
    std::memcpy(&section, bytes.data() + at, sizeof(section));
    if (section.sh_type != SHT_PROGBITS && section.sh_type != SHT_STRTAB) continue;
    std::string damaged = bytes;
    section.sh_type = SHT_NOBITS;
    section.sh_offset = 0xFFFFFFFF;
    std::memcpy(damaged.data() + at, &section, sizeof(section));
    absl::StatusOr<v1::Module> m = InspectModule(damaged);
    if (!m.ok()) {
      EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument) << m.status();
    }
    ++edited;
  }
  EXPECT_GT(edited, 2);
}

// Any bytes a client sends are read without crashing the daemon: modules with random bytes
// overwritten (the ELF header and section table among them) are accepted or refused, never more.
TEST(ModuleInspectionTest, DamagedModulesAreReadSafely) {
  std::mt19937 rng(20261206);
  for (const std::string name : {"scale.cubin", "scale_plain.fatbin"}) {
    const std::string bytes = Module(name);
    int refused = 0;
    for (int trial = 0; trial < 3000; ++trial) {
      std::string damaged = bytes;
      const int changes = 1 + static_cast<int>(rng() % 8);
      for (int c = 0; c < changes; ++c) {
        // Mostly the first 1 KiB (headers, section table offsets), sometimes anywhere.
        const size_t at = rng() % 4 == 0 ? rng() % damaged.size() : rng() % 1024;
        damaged[at] = static_cast<char>(rng());
      }
      absl::StatusOr<v1::Module> m = InspectModule(damaged);
      if (!m.ok()) {
        EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument) << m.status();
        ++refused;
      }
    }
    EXPECT_GT(refused, 0) << name;
  }
}
#endif

TEST(ModuleInspectionTest, WhatIsNoModuleIsRefusedSayingWhatItIs) {
  auto refusal = [](const std::string& bytes) {
    absl::StatusOr<v1::Module> m = InspectModule(bytes);
    EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(m.status().message());
  };
  EXPECT_THAT(refusal(""), HasSubstr("empty"));
  EXPECT_THAT(refusal(Read("/proc/self/exe")), HasSubstr("an ELF for machine 62"));
  EXPECT_THAT(refusal(std::string("\x1f\x8b\x08\x00", 4) + "rest"), HasSubstr("gzip"));
  EXPECT_THAT(refusal("__global__ void k() {}\n"), HasSubstr("CUDA source"));
  EXPECT_THAT(refusal("hello\n"), HasSubstr("not PTX"));
  EXPECT_THAT(refusal(std::string("\x00\x01\x02\xff", 4)), HasSubstr("binary data"));
  EXPECT_THAT(refusal(".version 8.0\n.target sm_90\n"), HasSubstr("without a kernel"));
  EXPECT_THAT(refusal("hello\n"), HasSubstr("nvcc -cubin"));  // says what a module is
}

TEST(ModuleInspectionTest, PtxTextIsAModuleNamingItsEntries) {
  absl::StatusOr<v1::Module> m = InspectModule(
      ".version 8.0\n.target sm_90\n.address_size 64\n"
      ".visible .entry spin(\n .param .u64 spin_param_0\n)\n{\n ret;\n}\n");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->format(), v1::MODULE_FORMAT_PTX);
  ASSERT_EQ(m->kernels_size(), 1);
  EXPECT_EQ(m->kernels(0).name(), "spin");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace gpuprobe
