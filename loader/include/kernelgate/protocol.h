// The supervisor <-> kg-runner protocol. Both sides include this header; bump kVersion on any
// change of layout.
//
// Control: a SOCK_SEQPACKET socketpair, the runner's end is fd 3. Every message is one
// fixed-size struct below; a Call carries a memfd in SCM_RIGHTS.
// Data: the memfd holds an input region and an output region, each an encoded value list
// (see wire.h): the supervisor writes the inputs, the runner writes the call's returns followed
// by the post-call state of every tensor argument. The supervisor decodes the output region as
// hostile bytes.
#pragma once

#include <cstdint>

namespace kg::protocol {

constexpr uint32_t kMagic = 0x3150474B;  // "KGP1"
constexpr uint32_t kVersion = 1;
constexpr int kRunnerFd = 3;

enum class MsgType : uint32_t {
  Hello = 1,       // runner -> supervisor, once after start-up
  Load = 2,        // supervisor -> runner: dlopen an artifact
  LoadResult = 3,  // runner -> supervisor
  Call = 4,        // supervisor -> runner: run the loaded op on the inputs in the memfd
  CallResult = 5,  // runner -> supervisor
  Shutdown = 6,    // supervisor -> runner
};

enum class CallStatus : uint32_t {
  Ok = 0,
  Exception = 1,      // the op threw (message says what)
  OutputTooLarge = 2, // returns did not fit in the output region
  BadInput = 3,       // the runner could not decode the inputs (a supervisor bug)
};

struct MsgHeader {
  uint32_t magic;
  uint32_t version;
  uint32_t type;   // MsgType
  uint32_t size;   // sizeof the whole message
};

struct HelloMsg {
  MsgHeader h;
  int32_t pid;
  uint32_t reserved;
  char torch_version[64];
};

struct LoadMsg {
  MsgHeader h;
  char artifact_path[1024];   // path inside the sandbox
  char op_name[256];          // registered name, e.g. "kgsub::relu__default"
  char aten_name[256];        // the aten overload, e.g. "aten::relu" + overload in aten_overload
  char aten_overload[128];
};

struct LoadResultMsg {
  MsgHeader h;
  uint32_t ok;
  uint32_t reserved;
  char message[4096];
};

struct CallMsg {
  MsgHeader h;
  uint64_t call_id;
  uint64_t arena_bytes;      // size of the memfd
  uint64_t input_offset;
  uint64_t input_bytes;
  uint64_t output_offset;
  uint64_t output_capacity;
  uint32_t warmup;           // untimed calls before the timed ones
  uint32_t reps;             // timed calls (0: one untimed call whose outputs are returned)
};

constexpr int kMaxTimedReps = 1000;

struct CallResultMsg {
  MsgHeader h;
  uint64_t call_id;
  uint32_t status;           // CallStatus
  uint32_t n_times;
  uint64_t output_bytes;     // bytes written into the output region
  double times_s[kMaxTimedReps];  // per timed call, the runner's own clock (evidence, never trusted alone)
  char message[4096];
};

template <typename Msg>
inline void init_header(Msg& m, MsgType t) {
  m.h.magic = kMagic;
  m.h.version = kVersion;
  m.h.type = static_cast<uint32_t>(t);
  m.h.size = sizeof(Msg);
}

template <typename Msg>
inline bool header_ok(const Msg& m, MsgType t, long received) {
  return received == static_cast<long>(sizeof(Msg)) && m.h.magic == kMagic &&
         m.h.version == kVersion && m.h.type == static_cast<uint32_t>(t) && m.h.size == sizeof(Msg);
}

}  // namespace kg::protocol
