#include "common/module_inspection.h"

#include <elf.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/sha256.h"
#include "common/status_macros.h"

namespace gpuprobe {
namespace {

// A kernel's symbol in a cubin's symbol table: STT_FUNC with the CUDA entry flag in st_other
// (what the driver launches; device functions lack it).
constexpr unsigned char kCudaEntry = 0x10;

// nvcc's fat binary container: a 16-byte header (magic, version, header size, the size of what
// follows), then entries, each a header (its kind, its size, its payload's size, flags) and its
// payload: a cubin or PTX, possibly compressed (LZ4, or zstd since CUDA 12.8; nvcc compresses
// unless --compress-mode=none).
constexpr uint32_t kFatbinMagic = 0xBA55ED50;
constexpr uint16_t kFatbinEntryPtx = 1;
constexpr uint16_t kFatbinEntryElf = 2;
constexpr uint64_t kFatbinCompressed = 0x2000 | 0x8000;

absl::Status Refused(absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("module: ", what,
                   "; a module is a cubin (nvcc -cubin), a fatbin (nvcc "
                   "-fatbin) or PTX text (nvcc -ptx)"));
}

template <typename T>
bool ReadAt(absl::string_view bytes, uint64_t offset, T& out) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) return false;
  std::memcpy(&out, bytes.data() + offset, sizeof(T));
  return true;
}

// The bytes of [offset, offset + size), or nullopt where they run past the end.
std::optional<absl::string_view> Slice(absl::string_view bytes, uint64_t offset, uint64_t size) {
  if (offset > bytes.size() || bytes.size() - offset < size) return std::nullopt;
  return bytes.substr(offset, size);
}

// A kernel of the module by name, added where it is new.
v1::ModuleKernel& KernelNamed(v1::Module& module, const std::string& name) {
  for (v1::ModuleKernel& k : *module.mutable_kernels()) {
    if (k.name() == name) return k;
  }
  v1::ModuleKernel& added = *module.add_kernels();
  added.set_name(name);
  return added;
}

// A cubin's kernels: each entry symbol, with the sha256 of the section that holds its code.
absl::Status AddCubinKernels(absl::string_view elf, v1::Module& module) {
  Elf64_Ehdr header;
  if (!ReadAt(elf, 0, header)) return Refused("a truncated ELF header");
  if (header.e_ident[EI_CLASS] != ELFCLASS64) return Refused("a 32-bit ELF, not a CUDA cubin");
  if (header.e_machine != EM_CUDA) {
    return Refused(absl::StrFormat(
        "an ELF for machine %d (x86-64 is 62, AArch64 183), not a CUDA cubin (machine %d)",
        header.e_machine, EM_CUDA));
  }
  if (header.e_shentsize != sizeof(Elf64_Shdr) || header.e_shstrndx >= header.e_shnum) {
    return Refused("a cubin whose section table is malformed");
  }
  std::vector<Elf64_Shdr> sections(header.e_shnum);
  for (int i = 0; i < header.e_shnum; ++i) {
    if (!ReadAt(elf, header.e_shoff + uint64_t{sizeof(Elf64_Shdr)} * i, sections[i])) {
      return Refused("a cubin whose section table runs past its end");
    }
    if (sections[i].sh_type != SHT_NOBITS &&
        !Slice(elf, sections[i].sh_offset, sections[i].sh_size)) {
      return Refused(absl::StrFormat("a cubin whose section %d runs past its end", i));
    }
  }
  // A section's bytes (checked above to lie inside the ELF); none for a section without any.
  auto section_bytes = [&](int index) -> absl::string_view {
    if (sections[index].sh_type == SHT_NOBITS) return {};
    return elf.substr(sections[index].sh_offset, sections[index].sh_size);
  };
  auto name_at = [](absl::string_view table, uint64_t offset) -> std::optional<std::string> {
    if (offset >= table.size()) return std::nullopt;
    const size_t end = table.find('\0', offset);
    if (end == absl::string_view::npos) return std::nullopt;
    return std::string(table.substr(offset, end - offset));
  };
  for (int s = 0; s < header.e_shnum; ++s) {
    if (sections[s].sh_type != SHT_SYMTAB) continue;
    if (sections[s].sh_entsize != sizeof(Elf64_Sym) || sections[s].sh_link >= header.e_shnum) {
      return Refused("a cubin whose symbol table is malformed");
    }
    const absl::string_view symbols = section_bytes(s);
    const absl::string_view names = section_bytes(static_cast<int>(sections[s].sh_link));
    for (uint64_t offset = 0; offset + sizeof(Elf64_Sym) <= symbols.size();
         offset += sizeof(Elf64_Sym)) {
      Elf64_Sym symbol;
      ReadAt(symbols, offset, symbol);
      if (ELF64_ST_TYPE(symbol.st_info) != STT_FUNC || (symbol.st_other & kCudaEntry) == 0) {
        continue;
      }
      const std::optional<std::string> name = name_at(names, symbol.st_name);
      if (!name || symbol.st_shndx == SHN_UNDEF || symbol.st_shndx >= header.e_shnum ||
          sections[symbol.st_shndx].sh_type == SHT_NOBITS) {
        return Refused("a cubin with a kernel symbol that names no section of code");
      }
      v1::ModuleKernel& kernel = KernelNamed(module, *name);
      if (kernel.text_sha256().empty()) {
        kernel.set_text_sha256(Sha256Hex(section_bytes(symbol.st_shndx)));
      }
    }
  }
  return absl::OkStatus();
}

// PTX's .entry functions: `.entry NAME(` after optional .visible / .weak.
void AddPtxKernels(absl::string_view ptx, v1::Module& module) {
  for (size_t at = ptx.find(".entry"); at != absl::string_view::npos;
       at = ptx.find(".entry", at + 6)) {
    size_t begin = at + 6;
    if (begin >= ptx.size() || !absl::ascii_isspace(ptx[begin])) continue;
    while (begin < ptx.size() && absl::ascii_isspace(ptx[begin])) ++begin;
    size_t end = begin;
    while (end < ptx.size() &&
           (absl::ascii_isalnum(ptx[end]) || ptx[end] == '_' || ptx[end] == '$')) {
      ++end;
    }
    if (end > begin) KernelNamed(module, std::string(ptx.substr(begin, end - begin)));
  }
}

// PTX is text with a .version and a .target directive; a NUL may end it.
absl::Status CheckPtx(absl::string_view text) {
  while (!text.empty() && text.back() == '\0') text.remove_suffix(1);
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x80 || (u < 0x20 && c != '\n' && c != '\r' && c != '\t')) {
      return Refused("binary data, neither an ELF, a fatbin nor text");
    }
  }
  if (absl::StrContains(text, "__global__")) return Refused("CUDA source, not compiled");
  if (!absl::StrContains(text, ".version") || !absl::StrContains(text, ".target")) {
    return Refused("text, but not PTX (no .version and .target directives)");
  }
  return absl::OkStatus();
}

absl::Status AddFatbinKernels(absl::string_view bytes, v1::Module& module) {
  uint32_t magic = 0;
  uint16_t version = 0, header_size = 0;
  uint64_t fat_size = 0;
  if (!ReadAt(bytes, 0, magic) || !ReadAt(bytes, 4, version) || !ReadAt(bytes, 6, header_size) ||
      !ReadAt(bytes, 8, fat_size) || header_size < 16 || !Slice(bytes, header_size, fat_size)) {
    return Refused("a fatbin whose header is truncated or whose size runs past its end");
  }
  uint64_t at = header_size;
  const uint64_t end = header_size + fat_size;
  while (at < end) {
    uint16_t kind = 0;
    uint32_t entry_header = 0;
    uint64_t payload_size = 0, flags = 0;
    if (!ReadAt(bytes, at, kind) || !ReadAt(bytes, at + 4, entry_header) ||
        !ReadAt(bytes, at + 8, payload_size) || !ReadAt(bytes, at + 40, flags) ||
        entry_header < 48 || end - at < entry_header || end - at - entry_header < payload_size) {
      return Refused(absl::StrFormat("a fatbin whose entry at byte %d is malformed", at));
    }
    const absl::string_view payload = bytes.substr(at + entry_header, payload_size);
    if ((flags & kFatbinCompressed) == 0) {
      if (kind == kFatbinEntryElf) {
        RETURN_IF_ERROR(AddCubinKernels(payload, module));
      } else if (kind == kFatbinEntryPtx) {
        AddPtxKernels(payload, module);
      }
    }
    at += entry_header + payload_size;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<v1::Module> InspectModule(absl::string_view bytes) {
  if (bytes.empty()) return Refused("empty");
  v1::Module module;
  module.set_size_bytes(bytes.size());
  uint32_t magic = 0;
  ReadAt(bytes, 0, magic);
  if (absl::StartsWith(bytes, ELFMAG)) {
    module.set_format(v1::MODULE_FORMAT_CUBIN);
    RETURN_IF_ERROR(AddCubinKernels(bytes, module));
  } else if (magic == kFatbinMagic) {
    module.set_format(v1::MODULE_FORMAT_FATBIN);
    RETURN_IF_ERROR(AddFatbinKernels(bytes, module));
  } else if (absl::StartsWith(bytes, "\x1f\x8b")) {
    return Refused("a gzip file");
  } else if (absl::StartsWith(bytes, "PK\x03\x04")) {
    return Refused("a zip archive");
  } else {
    RETURN_IF_ERROR(CheckPtx(bytes));
    module.set_format(v1::MODULE_FORMAT_PTX);
    AddPtxKernels(bytes, module);
  }
  if (module.kernels().empty() && module.format() != v1::MODULE_FORMAT_FATBIN) {
    return Refused("a module without a kernel (no __global__ function)");
  }
  module.set_id(Sha256Hex(bytes));
  return module;
}

}  // namespace gpuprobe
