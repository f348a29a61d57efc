// kg-artifact-dump SO [OP] [PROFILE]: what the static rules see in an artifact (imports demangled,
// exports, DT_NEEDED, flags) and what they find. A developer's and auditor's tool for checking
// the rules' symbol lists against real artifacts; not installed.
#include "kernelgate/rules.h"

#include <iostream>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: kg-artifact-dump SO [OP] [PROFILE]\n";
    return 2;
  }
  try {
    const auto info = kg::policy::read_artifact(argv[1]);
    for (const auto& n : info.needed) std::cout << "needed " << n << "\n";
    for (const auto& s : info.imports) std::cout << "import " << kg::policy::demangle(s) << "\t" << s << "\n";
    for (const auto& s : info.exports) std::cout << "export " << kg::policy::demangle(s) << "\t" << s << "\n";
    for (const auto& s : info.library_strings) std::cout << "string " << s << "\n";
    for (const auto& c : info.counter_reads) std::cout << "counter " << c << "\n";
    std::cout << "textrel " << info.textrel << " wx " << info.wx_segment << " execstack " << info.exec_stack << " init_array "
              << info.init_array_size << "\n";
    const auto pol = kg::policy::load(argc > 3 ? argv[3] : "competition");
    for (const auto& f : kg::policy::inspect_artifact(info, pol, argc > 2 ? argv[2] : ""))
      std::cout << "FINDING " << kg::policy::rule_id(f.rule) << ": " << f.evidence << "\n";
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
}
