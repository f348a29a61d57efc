// Instruction lengths of x86-64 machine code, for the static rules that look for single
// instructions (the time-stamp counter reads of timer_tampering) in an artifact's code.
//
// Why a length decoder and not a byte search: the bytes of `rdtsc` (0f 31) turn up inside other
// instructions' immediates and displacements about 40 times per MiB of compiled code, so a byte
// search would accuse honest kernels. Walking the code one instruction at a time finds only the
// instructions that are really there, the way the CPU reads them from the same start. What it
// decodes is the length and the few facts the rules need; it never interprets operands.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace kg::policy::x86 {

// What one instruction is, as far as the rules care.
struct Insn {
  size_t length = 0;
  // 0 when the instruction is none of these; else the mnemonic's id below.
  enum class Counter { None, Rdtsc, Rdtscp, Rdpmc } counter = Counter::None;
  // Direct relative branch or call (jmp, jcc, call, loop, jrcxz): its target relative to the
  // instruction's end.
  bool relative_branch = false;
  int64_t displacement = 0;
};

// Decodes the instruction at p[0..n) in 64-bit mode. nullopt for bytes that are not a valid
// instruction there (an opcode invalid in 64-bit mode, or one running past n or past 15 bytes).
std::optional<Insn> decode(const uint8_t* p, size_t n);

const char* counter_name(Insn::Counter c);

// Machine code as the loader maps it: an executable PT_LOAD's file-backed bytes at their address.
struct CodeRange {
  uint64_t address = 0;
  const uint8_t* bytes = nullptr;
  size_t size = 0;
};

struct CounterRead {
  uint64_t address = 0;
  Insn::Counter counter = Insn::Counter::None;
};

// Every counter-reading instruction reachable the way code is laid out and entered: a linear
// sweep over each `sweeps` range [begin, end) (the executable sections; an undecodable byte is
// stepped over, as objdump does), then a walk from each of `entries` (function symbols) and from
// the target of every direct branch or call found, until it meets an instruction already seen.
// So a branch into the middle of another instruction, or into bytes no section covers, is
// decoded from where it lands. Addresses outside `code` are ignored. Sorted by address.
std::vector<CounterRead> find_counter_reads(const std::vector<CodeRange>& code, const std::vector<std::pair<uint64_t, uint64_t>>& sweeps,
                                            const std::vector<uint64_t>& entries);

}  // namespace kg::policy::x86
