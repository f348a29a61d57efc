// A small ELF64 reader for the static rules: what the dynamic loader would see in an artifact.
//
// Why written here: the artifact is the submission's (hostile) output, read in the trusted
// supervisor. libelf and binutils are large parsers with a history of memory-safety bugs on
// crafted input; this reads only what the rules need, every offset and count bounds-checked
// against the file before use (Bytes::at), and it follows the loader's view (program headers,
// PT_DYNAMIC, DT_SYMTAB) rather than section headers, which the loader ignores and a crafted
// file may fake. Section headers are consulted only to find symbols the dynamic view might
// under-count (the larger symbol count wins). Any inconsistency is a std::runtime_error that
// names the file and the table; nothing here can read outside the bytes it was given.
#include "kernelgate/rules.h"
#include "x86_decode.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

namespace kg::policy {
namespace {

// ELF constants (from the System V ABI and the GNU extensions), named here so that no system
// header is needed and the values are visible where they are checked.
constexpr uint8_t kClass64 = 2, kData2Lsb = 1;
constexpr uint16_t kEtDyn = 3;
constexpr uint16_t kEmX86_64 = 62, kEmAarch64 = 183;
constexpr uint32_t kPtLoad = 1, kPtDynamic = 2, kPtGnuStack = 0x6474e551;
constexpr uint32_t kPfX = 1, kPfW = 2;
constexpr uint32_t kShtProgbits = 1, kShtSymtab = 2, kShtDynsym = 11;
constexpr uint64_t kShfExecinstr = 0x4;
constexpr unsigned kSttFunc = 2;
constexpr int64_t kDtNull = 0, kDtNeeded = 1, kDtPltRelSz = 2, kDtHash = 4, kDtStrtab = 5, kDtSymtab = 6, kDtRela = 7, kDtRelaSz = 8,
                  kDtInit = 12, kDtSoname = 14, kDtRel = 17, kDtRelSz = 18, kDtTextrel = 22, kDtJmpRel = 23, kDtInitArraySz = 27,
                  kDtFlags = 30, kDtGnuHash = 0x6ffffef5;
constexpr uint64_t kDfTextrel = 0x4;
constexpr size_t kEhdrSize = 64, kPhdrSize = 56, kShdrSize = 64, kDynSize = 16, kSymSize = 24, kRelaSize = 24, kRelSize = 16;
// Caps that keep a crafted header from making the reader loop or allocate for long.
constexpr uint64_t kMaxFileSize = uint64_t(1) << 30;
constexpr uint64_t kMaxSymbols = uint64_t(1) << 24;
constexpr size_t kMaxLibraryStrings = 64;
constexpr size_t kMaxStringLength = 200;
constexpr size_t kMaxCounterReads = 16;

std::string hex(uint64_t v) {
  std::ostringstream o;
  o << "0x" << std::hex << v;
  return o.str();
}

// The file's bytes; every read is checked against the size, with overflow-safe arithmetic.
class Bytes {
 public:
  Bytes(const uint8_t* p, size_t n, const std::string& name) : p_(p), n_(n), name_(name) {}
  size_t size() const { return n_; }
  const uint8_t* data() const { return p_; }

  bool contains(uint64_t off, uint64_t len) const { return off <= n_ && len <= n_ - off; }

  // Checks that [off, off+len) lies in the file; `what` names the table in the error.
  void need(uint64_t off, uint64_t len, const std::string& what) const {
    if (!contains(off, len))
      fail("truncated or corrupt: " + what + " at offset " + hex(off) + " (" + std::to_string(len) + " bytes) lies outside the file's " +
           std::to_string(n_) + " bytes");
  }

  template <typename T>
  T at(uint64_t off, const std::string& what) const {
    need(off, sizeof(T), what);
    T v;
    std::memcpy(&v, p_ + off, sizeof(T));  // little-endian host checked at compile time below
    return v;
  }

  [[noreturn]] void fail(const std::string& problem) const { throw std::runtime_error(name_ + ": " + problem); }

 private:
  const uint8_t* p_;
  size_t n_;
  std::string name_;
};

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the ELF reader assumes a little-endian host");

struct Load {
  uint64_t vaddr, memsz, offset, filesz;
  uint32_t flags;
};

struct Dynamic {
  std::vector<uint64_t> needed;  // string-table offsets
  uint64_t strtab = 0, strsz = 0, symtab = 0, hash = 0, gnu_hash = 0, soname = 0;
  uint64_t rela = 0, relasz = 0, rel = 0, relsz = 0, jmprel = 0, pltrelsz = 0;
  bool has_strtab = false, has_symtab = false, has_hash = false, has_gnu_hash = false, has_soname = false;
  bool textrel = false, has_init = false;
  uint64_t init_array_sz = 0;
};

class Reader {
 public:
  explicit Reader(const Bytes& b) : b_(b) {}

  ArtifactInfo read(const std::string& path) {
    ArtifactInfo info;
    info.path = path;
    header();
    program_headers(info);
    dynamic_section();
    info.textrel = dyn_.textrel;
    info.has_init = dyn_.has_init;
    info.init_array_size = dyn_.init_array_sz / 8;
    if (!dyn_.has_strtab) b_.fail("the dynamic section has no DT_STRTAB");
    if (dyn_.strsz == 0) b_.fail("the dynamic section has no DT_STRSZ (or it is 0)");
    strtab_off_ = file_offset(dyn_.strtab, dyn_.strsz, "the dynamic string table (DT_STRTAB)");
    for (uint64_t n : dyn_.needed) info.needed.push_back(dynstr(n, "DT_NEEDED"));
    if (dyn_.has_soname) info.soname = dynstr(dyn_.soname, "DT_SONAME");
    symbols(info);
    library_strings(info);
    counter_reads(info, machine_);
    return info;
  }

 private:
  void header() {
    b_.need(0, kEhdrSize, "the ELF header");
    const uint8_t* e = b_.data();
    if (!(e[0] == 0x7f && e[1] == 'E' && e[2] == 'L' && e[3] == 'F')) b_.fail("not an ELF file (bad magic)");
    if (e[4] != kClass64) b_.fail("not a 64-bit ELF file (EI_CLASS " + std::to_string(e[4]) + ")");
    if (e[5] != kData2Lsb) b_.fail("not a little-endian ELF file (EI_DATA " + std::to_string(e[5]) + ")");
    const auto type = b_.at<uint16_t>(16, "e_type");
    if (type != kEtDyn) b_.fail("not a shared object (e_type " + std::to_string(type) + ", expected ET_DYN)");
    const auto machine = machine_ = b_.at<uint16_t>(18, "e_machine");
    if (machine != kEmX86_64 && machine != kEmAarch64) b_.fail("unsupported machine (e_machine " + std::to_string(machine) + ")");
    phoff_ = b_.at<uint64_t>(32, "e_phoff");
    shoff_ = b_.at<uint64_t>(40, "e_shoff");
    phentsize_ = b_.at<uint16_t>(54, "e_phentsize");
    phnum_ = b_.at<uint16_t>(56, "e_phnum");
    shentsize_ = b_.at<uint16_t>(58, "e_shentsize");
    shnum_ = b_.at<uint16_t>(60, "e_shnum");
    if (phnum_ == 0xffff) {
      // PN_XNUM: the real count is in section 0's sh_info.
      if (shoff_ == 0 || shentsize_ < kShdrSize) b_.fail("e_phnum is PN_XNUM but there is no section 0");
      phnum_ = b_.at<uint32_t>(shoff_ + 44, "section 0 (sh_info holding the program header count)");
    }
    if (shnum_ == 0 && shoff_ != 0 && shentsize_ >= kShdrSize && b_.contains(shoff_, kShdrSize))
      shnum_ = b_.at<uint64_t>(shoff_ + 32, "section 0 (sh_size holding the section count)");
    if (phnum_ == 0) b_.fail("no program headers (a shared object the loader cannot map)");
    if (phentsize_ < kPhdrSize) b_.fail("e_phentsize " + std::to_string(phentsize_) + " is smaller than an Elf64_Phdr");
    if (phnum_ > b_.size() / phentsize_) b_.fail("e_phnum " + std::to_string(phnum_) + " program headers do not fit in the file");
    b_.need(phoff_, phnum_ * phentsize_, "the program header table");
  }

  void program_headers(ArtifactInfo& info) {
    bool have_dynamic = false;
    for (uint64_t i = 0; i < phnum_; ++i) {
      const uint64_t at = phoff_ + i * phentsize_;
      const std::string what = "program header " + std::to_string(i);
      const auto type = b_.at<uint32_t>(at, what);
      const auto flags = b_.at<uint32_t>(at + 4, what);
      const auto offset = b_.at<uint64_t>(at + 8, what);
      const auto vaddr = b_.at<uint64_t>(at + 16, what);
      const auto filesz = b_.at<uint64_t>(at + 32, what);
      const auto memsz = b_.at<uint64_t>(at + 40, what);
      if (type == kPtLoad) {
        if ((flags & (kPfW | kPfX)) == (kPfW | kPfX)) info.wx_segment = true;
        if (filesz > memsz) b_.fail(what + " (PT_LOAD) has p_filesz > p_memsz");
        b_.need(offset, filesz, what + " (PT_LOAD contents)");
        loads_.push_back({vaddr, memsz, offset, filesz, flags});
      } else if (type == kPtDynamic) {
        if (have_dynamic) b_.fail("more than one PT_DYNAMIC");
        have_dynamic = true;
        b_.need(offset, filesz, what + " (PT_DYNAMIC contents)");
        dyn_off_ = offset;
        dyn_size_ = filesz;
      } else if (type == kPtGnuStack) {
        if (flags & kPfX) info.exec_stack = true;
      }
    }
    if (!have_dynamic) b_.fail("no PT_DYNAMIC program header (not a dynamically linked shared object)");
    if (loads_.empty()) b_.fail("no PT_LOAD program header");
  }

  // The loader's view: a virtual address inside a PT_LOAD's file-backed part -> file offset.
  uint64_t file_offset(uint64_t vaddr, uint64_t len, const std::string& what) const {
    for (const Load& l : loads_) {
      if (vaddr < l.vaddr) continue;
      const uint64_t rel = vaddr - l.vaddr;
      if (rel > l.filesz || len > l.filesz - rel) continue;
      const uint64_t off = l.offset + rel;
      b_.need(off, len, what);  // the PT_LOAD contents were checked; this is belt and braces
      return off;
    }
    b_.fail(what + " at address " + hex(vaddr) + " (" + std::to_string(len) +
            " bytes) is not inside the file-backed part of any PT_LOAD segment");
  }

  void dynamic_section() {
    const uint64_t n = dyn_size_ / kDynSize;
    bool terminated = false;
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t at = dyn_off_ + i * kDynSize;
      const auto tag = b_.at<int64_t>(at, "dynamic entry " + std::to_string(i));
      const auto val = b_.at<uint64_t>(at + 8, "dynamic entry " + std::to_string(i));
      if (tag == kDtNull) {
        terminated = true;
        break;
      }
      switch (tag) {
        case kDtNeeded:
          if (dyn_.needed.size() >= 4096) b_.fail("more than 4096 DT_NEEDED entries");
          dyn_.needed.push_back(val);
          break;
        case kDtStrtab:
          dyn_.strtab = val;
          dyn_.has_strtab = true;
          break;
        case 10 /* DT_STRSZ */: dyn_.strsz = val; break;
        case kDtSymtab:
          dyn_.symtab = val;
          dyn_.has_symtab = true;
          break;
        case kDtHash:
          dyn_.hash = val;
          dyn_.has_hash = true;
          break;
        case kDtGnuHash:
          dyn_.gnu_hash = val;
          dyn_.has_gnu_hash = true;
          break;
        case kDtSoname:
          dyn_.soname = val;
          dyn_.has_soname = true;
          break;
        case kDtRela: dyn_.rela = val; break;
        case kDtRelaSz: dyn_.relasz = val; break;
        case kDtRel: dyn_.rel = val; break;
        case kDtRelSz: dyn_.relsz = val; break;
        case kDtJmpRel: dyn_.jmprel = val; break;
        case kDtPltRelSz: dyn_.pltrelsz = val; break;
        case kDtTextrel: dyn_.textrel = true; break;
        case kDtFlags:
          if (val & kDfTextrel) dyn_.textrel = true;
          break;
        case kDtInit: dyn_.has_init = true; break;
        case kDtInitArraySz: dyn_.init_array_sz = val; break;
        default: break;
      }
    }
    if (!terminated) b_.fail("the dynamic section (PT_DYNAMIC) has no DT_NULL terminator");
  }

  std::string dynstr(uint64_t off, const std::string& what) const {
    if (off >= dyn_.strsz)
      b_.fail(what + " name offset " + hex(off) + " is outside the dynamic string table (" + std::to_string(dyn_.strsz) + " bytes)");
    const uint8_t* start = b_.data() + strtab_off_ + off;
    const size_t room = static_cast<size_t>(dyn_.strsz - off);
    const void* nul = std::memchr(start, 0, room);
    if (!nul) b_.fail(what + " name at string-table offset " + hex(off) + " is not NUL-terminated inside the table");
    return std::string(reinterpret_cast<const char*>(start), static_cast<const uint8_t*>(nul) - start);
  }

  // Number of symbols in DT_SYMTAB. The dynamic section does not say; the loader never needs
  // the count (it looks names up through the hash tables and relocations name indices), so the
  // largest of every source is taken: DT_HASH's nchain, the end of DT_GNU_HASH's last chain,
  // the highest index a relocation names, and the .dynsym section header if present.
  uint64_t symbol_count() const {
    uint64_t count = 0;
    if (dyn_.has_hash) {
      const uint64_t h = file_offset(dyn_.hash, 8, "DT_HASH");
      count = std::max<uint64_t>(count, b_.at<uint32_t>(h + 4, "DT_HASH nchain"));
    }
    if (dyn_.has_gnu_hash) count = std::max(count, gnu_hash_count());
    count = std::max(count, reloc_max_index(dyn_.rela, dyn_.relasz, kRelaSize, "DT_RELA"));
    count = std::max(count, reloc_max_index(dyn_.jmprel, dyn_.pltrelsz, kRelaSize, "DT_JMPREL"));
    count = std::max(count, reloc_max_index(dyn_.rel, dyn_.relsz, kRelSize, "DT_REL"));
    count = std::max(count, section_dynsym_count());
    if (count > kMaxSymbols)
      b_.fail("claims " + std::to_string(count) + " dynamic symbols (more than " + std::to_string(kMaxSymbols) + ")");
    return count;
  }

  uint64_t gnu_hash_count() const {
    const uint64_t h = file_offset(dyn_.gnu_hash, 16, "DT_GNU_HASH header");
    const uint64_t nbuckets = b_.at<uint32_t>(h, "DT_GNU_HASH nbuckets");
    const uint64_t symoffset = b_.at<uint32_t>(h + 4, "DT_GNU_HASH symoffset");
    const uint64_t bloom_size = b_.at<uint32_t>(h + 8, "DT_GNU_HASH bloom size");
    // All three are 32-bit, so these products cannot overflow 64 bits.
    const uint64_t buckets_at = h + 16 + bloom_size * 8;
    b_.need(buckets_at, nbuckets * 4, "DT_GNU_HASH buckets");
    uint64_t last = 0;
    for (uint64_t i = 0; i < nbuckets; ++i) last = std::max<uint64_t>(last, b_.at<uint32_t>(buckets_at + i * 4, "DT_GNU_HASH bucket"));
    if (last < symoffset) return symoffset;  // no hashed symbols: only the undefined prefix
    const uint64_t chains_at = buckets_at + nbuckets * 4;
    // Walk the last bucket's chain to its end (low bit set); bounded by the file's size.
    for (uint64_t i = last;; ++i) {
      if (i - symoffset > b_.size() / 4) b_.fail("DT_GNU_HASH chain does not end inside the file");
      const auto v = b_.at<uint32_t>(chains_at + (i - symoffset) * 4, "DT_GNU_HASH chain");
      if (v & 1) return i + 1;
    }
  }

  uint64_t reloc_max_index(uint64_t addr, uint64_t size, uint64_t entsize, const std::string& what) const {
    if (addr == 0 || size == 0) return 0;
    const uint64_t off = file_offset(addr, size, what);
    uint64_t max_index = 0;
    for (uint64_t i = 0; i < size / entsize; ++i) {
      const auto info = b_.at<uint64_t>(off + i * entsize + 8, what + " entry");
      max_index = std::max<uint64_t>(max_index, (info >> 32) + 1);
    }
    return max_index;
  }

  uint64_t section_dynsym_count() const {
    if (shoff_ == 0 || shnum_ == 0 || shentsize_ < kShdrSize) return 0;
    if (shnum_ > b_.size() / shentsize_ || !b_.contains(shoff_, shnum_ * shentsize_)) return 0;  // the loader ignores sections
    for (uint64_t i = 0; i < shnum_; ++i) {
      const uint64_t at = shoff_ + i * shentsize_;
      if (b_.at<uint32_t>(at + 4, "section header") != kShtDynsym) continue;
      const auto addr = b_.at<uint64_t>(at + 16, "section header");
      const auto size = b_.at<uint64_t>(at + 32, "section header");
      if (addr != dyn_.symtab) return 0;  // not the table the loader uses
      return size / kSymSize;
    }
    return 0;
  }

  void symbols(ArtifactInfo& info) {
    if (!dyn_.has_symtab) b_.fail("the dynamic section has no DT_SYMTAB");
    const uint64_t count = symbol_count();
    if (count == 0) return;
    const uint64_t base =
        file_offset(dyn_.symtab, count * kSymSize, "the dynamic symbol table (DT_SYMTAB, " + std::to_string(count) + " symbols)");
    std::set<std::string> seen_imports, seen_exports, seen_weak;
    for (uint64_t i = 1; i < count; ++i) {  // index 0 is the reserved null symbol
      const uint64_t at = base + i * kSymSize;
      const std::string what = "dynamic symbol " + std::to_string(i);
      const auto name_off = b_.at<uint32_t>(at, what);
      const auto st_info = b_.at<uint8_t>(at + 4, what);
      const auto st_other = b_.at<uint8_t>(at + 5, what);
      const auto shndx = b_.at<uint16_t>(at + 6, what);
      if (name_off == 0) continue;
      const std::string name = dynstr(name_off, what);
      if (name.empty()) continue;
      if ((st_info & 0xf) == kSttFunc && shndx != 0) functions_.push_back({b_.at<uint64_t>(at + 8, what), name});
      const unsigned bind = st_info >> 4, vis = st_other & 3;
      if (bind == 0) continue;  // STB_LOCAL: never resolved against another object
      if (shndx == 0) {         // SHN_UNDEF
        if (seen_imports.insert(name).second) info.imports.push_back(name);
        if (bind == 2 && seen_weak.insert(name).second) info.weak_imports.push_back(name);
      } else if (vis == 0 || vis == 3) {  // STV_DEFAULT or STV_PROTECTED: visible to other objects
        if (seen_exports.insert(name).second) info.exports.push_back(name);
      }
    }
  }

  // Section headers, when they are all inside the file (the loader ignores them, so a crafted
  // file may leave them out or lie: they only add places to look, never remove any).
  struct Section {
    uint32_t type;
    uint64_t flags, addr, offset, size, link, entsize;
  };
  std::vector<Section> sections() const {
    std::vector<Section> out;
    if (shoff_ == 0 || shnum_ == 0 || shentsize_ < kShdrSize) return out;
    if (shnum_ > b_.size() / shentsize_ || !b_.contains(shoff_, shnum_ * shentsize_)) return out;
    for (uint64_t i = 0; i < shnum_; ++i) {
      const uint64_t at = shoff_ + i * shentsize_;
      out.push_back({b_.at<uint32_t>(at + 4, "section header"), b_.at<uint64_t>(at + 8, "section header"),
                     b_.at<uint64_t>(at + 16, "section header"), b_.at<uint64_t>(at + 24, "section header"),
                     b_.at<uint64_t>(at + 32, "section header"), b_.at<uint32_t>(at + 40, "section header"),
                     b_.at<uint64_t>(at + 56, "section header")});
    }
    return out;
  }

  // Function symbols of the static symbol table (.symtab), when present and inside the file.
  void static_functions(const std::vector<Section>& secs) {
    for (const Section& s : secs) {
      if (s.type != kShtSymtab || s.link >= secs.size() || !b_.contains(s.offset, s.size)) continue;
      const Section& str = secs[s.link];
      if (!b_.contains(str.offset, str.size)) continue;
      const uint64_t n = std::min<uint64_t>(s.size / kSymSize, kMaxSymbols);
      for (uint64_t i = 1; i < n; ++i) {
        const uint64_t at = s.offset + i * kSymSize;
        const auto name_off = b_.at<uint32_t>(at, "static symbol");
        const auto st_info = b_.at<uint8_t>(at + 4, "static symbol");
        const auto shndx = b_.at<uint16_t>(at + 6, "static symbol");
        if ((st_info & 0xf) != kSttFunc || shndx == 0 || name_off >= str.size) continue;
        const uint8_t* start = b_.data() + str.offset + name_off;
        const void* nul = std::memchr(start, 0, static_cast<size_t>(str.size - name_off));
        if (!nul) continue;
        functions_.push_back({b_.at<uint64_t>(at + 8, "static symbol"),
                              std::string(reinterpret_cast<const char*>(start), static_cast<const uint8_t*>(nul) - start)});
      }
    }
  }

  // "rdtsc at 0x1139 (kg_phase+0x9)": the nearest function symbol at or before the address.
  std::string describe(const char* what, uint64_t address) const {
    const std::pair<uint64_t, std::string>* best = nullptr;
    for (const auto& f : functions_)
      if (f.first <= address && (!best || f.first > best->first)) best = &f;
    std::string o = std::string(what) + " at " + hex(address);
    if (best) o += " (" + demangle(best->second) + "+" + hex(address - best->first) + ")";
    return o;
  }

  // Instructions that read the time-stamp or performance counters (timer_tampering): with them a
  // kernel can time the gaps between its calls and tell judged calls from timed ones.
  void counter_reads(ArtifactInfo& info, uint16_t machine) {
    const std::vector<Section> secs = sections();
    static_functions(secs);
    std::vector<x86::CodeRange> code;
    for (const Load& l : loads_)
      if (l.flags & kPfX) code.push_back({l.vaddr, b_.data() + l.offset, static_cast<size_t>(l.filesz)});
    if (machine == kEmAarch64) {
      // Fixed-width instructions: every aligned word is one. mrs Xt, cntvct_el0 / cntpct_el0 and
      // their self-synchronised forms (cntvctss_el0, cntpctss_el0).
      for (const auto& c : code)
        for (size_t off = 0; off + 4 <= c.size && info.counter_reads.size() < kMaxCounterReads; off += 4) {
          uint32_t w;
          std::memcpy(&w, c.bytes + off, 4);
          const uint32_t reg = w & 0xffffffe0u;
          if (reg == 0xd53be040u || reg == 0xd53be020u || reg == 0xd53be0c0u || reg == 0xd53be0a0u)
            info.counter_reads.push_back(describe("mrs of the system counter", c.address + off));
        }
      return;
    }
    std::vector<std::pair<uint64_t, uint64_t>> sweeps;
    for (const Section& s : secs)
      if (s.type == kShtProgbits && (s.flags & kShfExecinstr) && s.size > 0 && s.addr + s.size > s.addr)
        sweeps.push_back({s.addr, s.addr + s.size});
    if (sweeps.empty())
      for (const auto& c : code) sweeps.push_back({c.address, c.address + c.size});
    std::vector<uint64_t> entries;
    for (const auto& f : functions_) entries.push_back(f.first);
    for (const auto& hit : x86::find_counter_reads(code, sweeps, entries)) {
      if (info.counter_reads.size() >= kMaxCounterReads) break;
      info.counter_reads.push_back(describe(x86::counter_name(hit.counter), hit.address));
    }
  }

  // Printable runs that name a vendor library or its entry points: what a dlopen/dlsym of one
  // would have to carry (unless the name is computed at run time: see docs/rules.md).
  void library_strings(ArtifactInfo& info) const {
    static const char* const needles[] = {"blas",   "lapack",   "cudnn",    "dnnl",     "mkldnn", "mkl_",  "libmkl", "cufft",
                                          "curand", "cusolver", "cusparse", "cutensor", "nccl",   "sgemm", "dgemm"};
    std::set<std::string> seen;
    const uint8_t* p = b_.data();
    const size_t n = b_.size();
    size_t i = 0;
    while (i < n && info.library_strings.size() < kMaxLibraryStrings) {
      size_t j = i;
      while (j < n && p[j] >= 0x20 && p[j] < 0x7f) ++j;
      if (j - i >= 6) {
        std::string s(reinterpret_cast<const char*>(p + i), std::min(j - i, kMaxStringLength));
        std::string lower = s;
        std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        for (const char* needle : needles)
          if (lower.find(needle) != std::string::npos) {
            if (seen.insert(s).second) info.library_strings.push_back(s);
            break;
          }
      }
      i = j + 1;
    }
  }

  const Bytes& b_;
  uint64_t phoff_ = 0, shoff_ = 0, phentsize_ = 0, phnum_ = 0, shentsize_ = 0, shnum_ = 0;
  uint64_t dyn_off_ = 0, dyn_size_ = 0, strtab_off_ = 0;
  std::vector<Load> loads_;
  Dynamic dyn_;
  uint16_t machine_ = 0;
  std::vector<std::pair<uint64_t, std::string>> functions_;  // address, raw name
};

}  // namespace

ArtifactInfo read_artifact_bytes(const uint8_t* data, size_t size, const std::string& name) {
  if (size > kMaxFileSize) throw std::runtime_error(name + ": larger than 1 GiB");
  if (!data && size) throw std::runtime_error(name + ": no data");
  static const uint8_t empty = 0;
  Bytes b(data ? data : &empty, size, name);
  return Reader(b).read(name);
}

ArtifactInfo read_artifact(const std::string& so_path) {
  std::ifstream in(so_path, std::ios::binary);
  if (!in) throw std::runtime_error(so_path + ": cannot open: " + std::strerror(errno));
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0) throw std::runtime_error(so_path + ": cannot determine the size");
  if (static_cast<uint64_t>(size) > kMaxFileSize) throw std::runtime_error(so_path + ": larger than 1 GiB");
  in.seekg(0, std::ios::beg);
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  if (size > 0 && !in.read(reinterpret_cast<char*>(bytes.data()), size)) throw std::runtime_error(so_path + ": read failed");
  return read_artifact_bytes(bytes.data(), bytes.size(), so_path);
}

}  // namespace kg::policy
