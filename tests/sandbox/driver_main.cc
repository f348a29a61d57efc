// Temporary stand-in for the `kernelgate` binary's dispatch (tools/main.cc belongs to the tools
// layer): `kg_sandbox_cli ARGS` behaves like `kernelgate sandbox ARGS`. Used by the tests and by hand.
int kg_cmd_sandbox(int argc, char** argv);

int main(int argc, char** argv) {
  argv[0] = const_cast<char*>("sandbox");
  return kg_cmd_sandbox(argc, argv);
}
