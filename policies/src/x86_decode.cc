// x86-64 instruction lengths (Intel SDM vol. 2, chapter 2 and appendix A's opcode maps).
//
// An instruction is: legacy prefixes, an optional REX, then either a VEX/EVEX/XOP escape with
// its payload or one of the legacy opcode maps (one byte, 0f, 0f 38, 0f 3a), then ModRM, SIB,
// displacement and immediate as the opcode asks. Only what decides the length is modelled.
#include "x86_decode.h"

#include <algorithm>

namespace kg::policy::x86 {
namespace {

constexpr size_t kMaxLength = 15;

enum class Imm { None, B1, B2, B4, Z, B3 /* enter: iw ib */, Moffs, B8orZ /* mov r, imm64 with REX.W */ };

struct Form {
  bool valid = true;
  bool modrm = false;
  Imm imm = Imm::None;
  bool rel = false;  // the immediate is a branch displacement
};

Form invalid() { return Form{false, false, Imm::None, false}; }
Form plain() { return Form{}; }
Form with_modrm(Imm imm = Imm::None) { return Form{true, true, imm, false}; }
Form imm_only(Imm imm) { return Form{true, false, imm, false}; }
Form branch(Imm imm) { return Form{true, false, imm, true}; }

// The one-byte map, for opcodes that are not prefixes or escapes. `modrm_reg` is needed for
// the f6/f7 group, whose test form alone carries an immediate.
Form one_byte(uint8_t op, int modrm_reg) {
  if (op < 0x40) {
    switch (op & 7) {
      case 0:
      case 1:
      case 2:
      case 3: return with_modrm();
      case 4: return imm_only(Imm::B1);
      case 5: return imm_only(Imm::Z);
      default: return invalid();  // push/pop of segment registers, daa/das/aaa/aas: invalid in 64-bit mode
    }
  }
  if (op >= 0x50 && op <= 0x5f) return plain();
  if (op >= 0x70 && op <= 0x7f) return branch(Imm::B1);
  if (op >= 0x84 && op <= 0x8e) return with_modrm();
  if (op >= 0x90 && op <= 0x9f) return op == 0x9a ? invalid() : plain();
  if (op >= 0xb0 && op <= 0xb7) return imm_only(Imm::B1);
  if (op >= 0xb8 && op <= 0xbf) return imm_only(Imm::B8orZ);
  if (op >= 0xd8 && op <= 0xdf) return with_modrm();  // x87
  switch (op) {
    case 0x60:
    case 0x61: return invalid();
    case 0x63: return with_modrm();
    case 0x68: return imm_only(Imm::Z);
    case 0x69: return with_modrm(Imm::Z);
    case 0x6a: return imm_only(Imm::B1);
    case 0x6b: return with_modrm(Imm::B1);
    case 0x6c:
    case 0x6d:
    case 0x6e:
    case 0x6f: return plain();
    case 0x80:
    case 0x83: return with_modrm(Imm::B1);
    case 0x81: return with_modrm(Imm::Z);
    case 0x82: return invalid();
    case 0x8f: return with_modrm();  // pop r/m (XOP is handled before)
    case 0xa0:
    case 0xa1:
    case 0xa2:
    case 0xa3: return imm_only(Imm::Moffs);
    case 0xa4:
    case 0xa5:
    case 0xa6:
    case 0xa7:
    case 0xaa:
    case 0xab:
    case 0xac:
    case 0xad:
    case 0xae:
    case 0xaf: return plain();
    case 0xa8: return imm_only(Imm::B1);
    case 0xa9: return imm_only(Imm::Z);
    case 0xc0:
    case 0xc1:
    case 0xc6: return with_modrm(Imm::B1);  // c6 f8: xabort ib
    case 0xc2:
    case 0xca: return imm_only(Imm::B2);
    case 0xc3:
    case 0xc9:
    case 0xcb:
    case 0xcc:
    case 0xcf: return plain();
    case 0xc7: return with_modrm(Imm::Z);  // c7 f8: xbegin rel32, the same length
    case 0xc8: return imm_only(Imm::B3);
    case 0xcd: return imm_only(Imm::B1);
    case 0xce: return invalid();
    case 0xd0:
    case 0xd1:
    case 0xd2:
    case 0xd3: return with_modrm();
    case 0xd4:
    case 0xd5:
    case 0xd6: return invalid();
    case 0xd7: return plain();
    case 0xe0:
    case 0xe1:
    case 0xe2:
    case 0xe3:
    case 0xeb: return branch(Imm::B1);
    case 0xe4:
    case 0xe5:
    case 0xe6:
    case 0xe7: return imm_only(Imm::B1);
    case 0xe8:
    case 0xe9: return branch(Imm::Z);
    case 0xea: return invalid();
    case 0xec:
    case 0xed:
    case 0xee:
    case 0xef: return plain();
    case 0xf1:
    case 0xf4:
    case 0xf5: return plain();
    case 0xf6: return with_modrm(modrm_reg < 2 ? Imm::B1 : Imm::None);
    case 0xf7: return with_modrm(modrm_reg < 2 ? Imm::Z : Imm::None);
    case 0xf8:
    case 0xf9:
    case 0xfa:
    case 0xfb:
    case 0xfc:
    case 0xfd: return plain();
    case 0xfe:
    case 0xff: return with_modrm();
    default: return invalid();
  }
}

// The 0f map (two-byte opcodes); 0f 38 and 0f 3a are handled by the caller.
Form two_byte(uint8_t op) {
  if ((op >= 0x10 && op <= 0x1f) || (op >= 0x40 && op <= 0x6f) || (op >= 0x90 && op <= 0x9f) || op >= 0xd0) return with_modrm();
  if (op >= 0x80 && op <= 0x8f) return branch(Imm::Z);
  if (op >= 0xc8 && op <= 0xcf) return plain();  // bswap
  switch (op) {
    case 0x00:
    case 0x01:
    case 0x02:
    case 0x03:
    case 0x0d: return with_modrm();
    case 0x05:
    case 0x06:
    case 0x07:
    case 0x08:
    case 0x09:
    case 0x0b:
    case 0x0e: return plain();
    case 0x0f: return with_modrm(Imm::B1);  // 3DNow!: the immediate is the opcode suffix
    case 0x20:
    case 0x21:
    case 0x22:
    case 0x23: return with_modrm();
    case 0x28:
    case 0x29:
    case 0x2a:
    case 0x2b:
    case 0x2c:
    case 0x2d:
    case 0x2e:
    case 0x2f: return with_modrm();
    case 0x30:
    case 0x31:
    case 0x32:
    case 0x33:
    case 0x34:
    case 0x35:
    case 0x37: return plain();
    case 0x70:
    case 0x71:
    case 0x72:
    case 0x73: return with_modrm(Imm::B1);
    case 0x74:
    case 0x75:
    case 0x76:
    case 0x78:
    case 0x79:
    case 0x7a:
    case 0x7b:
    case 0x7c:
    case 0x7d:
    case 0x7e:
    case 0x7f: return with_modrm();
    case 0x77: return plain();
    case 0xa0:
    case 0xa1:
    case 0xa2:
    case 0xa8:
    case 0xa9:
    case 0xaa: return plain();
    case 0xa3:
    case 0xa5:
    case 0xab:
    case 0xad:
    case 0xae:
    case 0xaf: return with_modrm();
    case 0xa4:
    case 0xac:
    case 0xba:
    case 0xc2:
    case 0xc4:
    case 0xc5:
    case 0xc6: return with_modrm(Imm::B1);
    case 0xb0:
    case 0xb1:
    case 0xb2:
    case 0xb3:
    case 0xb4:
    case 0xb5:
    case 0xb6:
    case 0xb7:
    case 0xb8:
    case 0xb9:
    case 0xbb:
    case 0xbc:
    case 0xbd:
    case 0xbe:
    case 0xbf:
    case 0xc0:
    case 0xc1:
    case 0xc3:
    case 0xc7: return with_modrm();
    default: return invalid();
  }
}

// Immediates of VEX/EVEX-encoded instructions in map 1 (0f): the shuffles, shifts and compares.
bool vex_map1_imm8(uint8_t op) { return (op >= 0x70 && op <= 0x73) || op == 0xc2 || (op >= 0xc4 && op <= 0xc6); }

// Bytes of ModRM + SIB + displacement starting at p[at], or 0 when they run past n.
size_t modrm_bytes(const uint8_t* p, size_t n, size_t at) {
  if (at >= n) return 0;
  const uint8_t m = p[at];
  const int mod = m >> 6, rm = m & 7;
  size_t len = 1;
  if (mod == 3) return len;
  if (rm == 4) {
    if (at + 1 >= n) return 0;
    const uint8_t sib = p[at + 1];
    ++len;
    if (mod == 0 && (sib & 7) == 5) len += 4;
  }
  if (mod == 0 && rm == 5) len += 4;  // RIP-relative
  if (mod == 1) len += 1;
  if (mod == 2) len += 4;
  return len;
}

}  // namespace

const char* counter_name(Insn::Counter c) {
  switch (c) {
    case Insn::Counter::Rdtsc: return "rdtsc";
    case Insn::Counter::Rdtscp: return "rdtscp";
    case Insn::Counter::Rdpmc: return "rdpmc";
    case Insn::Counter::None: break;
  }
  return "";
}

namespace {

// The legacy and REX prefixes in front of the opcode.
struct Prefixes {
  size_t length = 0;
  bool opsize = false, addrsize = false;
  uint8_t rex = 0;
};

std::optional<Prefixes> read_prefixes(const uint8_t* p, size_t n) {
  Prefixes pre;
  for (size_t& i = pre.length;; ++i) {
    if (i >= n) return std::nullopt;
    const uint8_t b = p[i];
    if (b == 0x66) pre.opsize = true;
    else if (b == 0x67) pre.addrsize = true;
    else if (b == 0xf0 || b == 0xf2 || b == 0xf3 || b == 0x2e || b == 0x36 || b == 0x3e || b == 0x26 || b == 0x64 || b == 0x65) {
    } else if (b >= 0x40 && b <= 0x4f) {
      pre.rex = b;
      continue;
    } else {
      return pre;
    }
    pre.rex = 0;  // a REX that a legacy prefix follows is ignored
  }
}

size_t immediate_bytes(const Form& form, const Prefixes& pre) {
  switch (form.imm) {
    case Imm::None: return 0;
    case Imm::B1: return 1;
    case Imm::B2: return 2;
    case Imm::B3: return 3;
    case Imm::B4: return 4;
    case Imm::Z: return pre.opsize && !form.rel ? 2 : 4;  // a 66 prefix does not shorten near branches in 64-bit mode
    case Imm::Moffs: return pre.addrsize ? 4 : 8;
    case Imm::B8orZ: return (pre.rex & 0x08) ? 8 : pre.opsize ? 2 : 4;
  }
  return 0;
}

}  // namespace

std::optional<Insn> decode(const uint8_t* p, size_t n) {
  if (n > kMaxLength + 1) n = kMaxLength + 1;  // enough to tell "too long" from "fits"
  const std::optional<Prefixes> pre = read_prefixes(p, n);
  if (!pre) return std::nullopt;
  size_t i = pre->length;
  Insn insn;
  Form form;
  const uint8_t op = p[i++];
  auto need = [&](size_t k) { return i + k <= n; };
  uint8_t opcode = op;
  enum class Map { One, Two, Three38, Three3a, Vex1, VexNoImm, VexImm8, Xop8, Xop9, XopA } map = Map::One;

  if (op == 0xc4 || op == 0xc5 || op == 0x62 || (op == 0x8f && need(1) && (p[i] & 0x38) != 0)) {
    // VEX (c5: 1 payload byte, c4: 2), EVEX (62: 3), XOP (8f with a non-zero reg field: 2).
    size_t payload = op == 0xc5 ? 1 : op == 0x62 ? 3 : 2;
    if (!need(payload + 1)) return std::nullopt;
    const uint8_t select = p[i] & 0x1f;
    if (op == 0xc5) map = Map::Vex1;
    else if (op == 0x8f) map = select == 8 ? Map::Xop8 : select == 9 ? Map::Xop9 : select == 0xa ? Map::XopA : Map::One;
    else {
      const uint8_t m = op == 0x62 ? (p[i] & 0x07) : select;
      map = m == 1                               ? Map::Vex1
            : m == 2                             ? Map::VexNoImm
            : m == 3                             ? Map::VexImm8
            : (op == 0x62 && (m == 5 || m == 6)) ? Map::VexNoImm
                                                 : Map::One;
    }
    if (map == Map::One) return std::nullopt;  // reserved map
    i += payload;
    opcode = p[i++];
    if (map == Map::Vex1) form = opcode == 0x77 && op != 0x62 ? plain() : with_modrm(vex_map1_imm8(opcode) ? Imm::B1 : Imm::None);
    else if (map == Map::VexNoImm || map == Map::Xop9) form = with_modrm();
    else if (map == Map::VexImm8 || map == Map::Xop8) form = with_modrm(Imm::B1);
    else form = with_modrm(Imm::B4);  // XOP map 0a: a 32-bit immediate
  } else if (op == 0x0f) {
    if (!need(1)) return std::nullopt;
    opcode = p[i++];
    if (opcode == 0x38) {
      if (!need(1)) return std::nullopt;
      ++i;
      map = Map::Three38;
      form = with_modrm();
    } else if (opcode == 0x3a) {
      if (!need(1)) return std::nullopt;
      ++i;
      map = Map::Three3a;
      form = with_modrm(Imm::B1);
    } else {
      map = Map::Two;
      form = two_byte(opcode);
      if (opcode == 0x31) insn.counter = Insn::Counter::Rdtsc;
      if (opcode == 0x33) insn.counter = Insn::Counter::Rdpmc;
    }
  } else {
    const int reg = need(1) ? (p[i] >> 3) & 7 : 0;
    form = one_byte(op, reg);
  }
  if (!form.valid) return std::nullopt;
  if (form.modrm) {
    if (map == Map::Two && opcode == 0x01 && need(1) && p[i] == 0xf9) insn.counter = Insn::Counter::Rdtscp;
    const size_t m = modrm_bytes(p, n, i);
    if (m == 0) return std::nullopt;
    i += m;
  }
  const size_t imm = immediate_bytes(form, *pre);
  if (!need(imm)) return std::nullopt;
  if (form.rel) {
    insn.relative_branch = true;
    if (imm == 1) insn.displacement = static_cast<int8_t>(p[i]);
    else
      insn.displacement =
          static_cast<int32_t>(uint32_t(p[i]) | uint32_t(p[i + 1]) << 8 | uint32_t(p[i + 2]) << 16 | uint32_t(p[i + 3]) << 24);
  }
  i += imm;
  if (i > kMaxLength) return std::nullopt;
  insn.length = i;
  return insn;
}

std::vector<CounterRead> find_counter_reads(const std::vector<CodeRange>& code, const std::vector<std::pair<uint64_t, uint64_t>>& sweeps,
                                            const std::vector<uint64_t>& entries) {
  // One mark per byte of each range: an instruction was decoded starting there.
  std::vector<std::vector<uint8_t>> seen(code.size());
  for (size_t r = 0; r < code.size(); ++r) seen[r].assign(code[r].size, 0);
  auto locate = [&](uint64_t a, size_t* range, size_t* offset) {
    for (size_t r = 0; r < code.size(); ++r)
      if (a >= code[r].address && a - code[r].address < code[r].size) {
        *range = r;
        *offset = static_cast<size_t>(a - code[r].address);
        return true;
      }
    return false;
  };
  std::vector<CounterRead> found;
  std::vector<uint64_t> pending(entries.begin(), entries.end());
  // Decodes one instruction at a, records what the rules need; the length, or 0 when invalid.
  auto step = [&](size_t r, size_t off) -> size_t {
    const std::optional<Insn> insn = decode(code[r].bytes + off, code[r].size - off);
    if (!insn) return 0;
    seen[r][off] = 1;
    const uint64_t a = code[r].address + off;
    if (insn->counter != Insn::Counter::None) found.push_back({a, insn->counter});
    if (insn->relative_branch) pending.push_back(a + insn->length + static_cast<uint64_t>(insn->displacement));
    return insn->length;
  };
  for (const auto& [begin, end] : sweeps) {
    size_t r = 0, off = 0;
    if (end <= begin || !locate(begin, &r, &off)) continue;
    const size_t stop = static_cast<size_t>(std::min<uint64_t>(code[r].size, end - code[r].address));
    while (off < stop) {
      if (seen[r][off]) break;
      const size_t len = step(r, off);
      off += len ? len : 1;
    }
  }
  while (!pending.empty()) {
    const uint64_t a = pending.back();
    pending.pop_back();
    size_t r = 0, off = 0;
    if (!locate(a, &r, &off)) continue;
    while (off < code[r].size && !seen[r][off]) {
      const size_t len = step(r, off);
      if (!len) break;
      off += len;
    }
  }
  std::sort(found.begin(), found.end(), [](const CounterRead& x, const CounterRead& y) { return x.address < y.address; });
  return found;
}

}  // namespace kg::policy::x86
