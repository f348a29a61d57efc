// The sandbox's profiles: which syscall filter and which device nodes a box gets.
#pragma once

namespace kg::sandbox {

enum class Profile {
  Compile,  // toolchains: many processes, exec, files in scratch; AF_UNIX only
  RunCpu,   // kg-runner on CPU
  RunCuda,  // kg-runner on a GPU: adds /dev/nvidia*, memfd, the driver's ioctls
};

}  // namespace kg::sandbox
