// The cuda prefix kept preprocessed, and the build script's join (loader/src/pp_splice.h).
#include "loader_test_util.h"
#include "pp_splice.h"
#include "util.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

using namespace kg::loader;
using namespace kg::loader::test;

TEST(PpSplice, MacroStateIsThePrefixsMacrosLessTheCompilers) {
  const std::string builtin = "#define __GNUC__ 12\n#define __STDC__ 1\n#define linux 1\n#define __OPTIMIZE__ 1\n";
  const std::string after =
      "#define __GNUC__ 12\n#define __STDC__ 1\n#define __OPTIMIZE__ 2\n#define TORCH_CHECK(cond,...) kg(cond)\n"
      "#define AT_GUARD \n";
  const std::string m = splice::macro_state(after, builtin, 2, "kg_unit.cu");
  EXPECT_EQ(m.find("__GNUC__"), std::string::npos) << m;        // unchanged builtins are not repeated
  EXPECT_NE(m.find("#undef linux\n"), std::string::npos) << m;  // the prefix removed it
  EXPECT_NE(m.find("#undef __OPTIMIZE__\n#define __OPTIMIZE__ 2\n"), std::string::npos) << m;
  EXPECT_NE(m.find("#define TORCH_CHECK(cond,...) kg(cond)\n"), std::string::npos) << m;
  EXPECT_NE(m.find("#define AT_GUARD \n"), std::string::npos) << m;
  EXPECT_NE(m.find("#define __BASE_FILE__ \"kg_unit.cu\"\n"), std::string::npos) << m;
  size_t counters = 0;
  for (size_t at = m.find("#if __COUNTER__"); at != std::string::npos; at = m.find("#if __COUNTER__", at + 1)) ++counters;
  EXPECT_EQ(counters, 2u);
}

TEST(PpSplice, ReadsLineMarkersSearchPathAndPragmaOnce) {
  const std::string ii =
      "# 0 \"kg_unit.cu\"\n# 1 \"/usr/include/stdc-predef.h\" 1 3 4\n# 0 \"<command-line>\" 2\n"
      "# 1 \"/inc/a.h\" 1\nint a;\n# 1 \"/inc/b.h\" 1 3\n# 2 \"/inc/a.h\" 2\n# 1 \"/inc/b.h\" 1 3\n# 5 \"kg_unit.cu\"\n";
  EXPECT_EQ(splice::entered_files(ii), (std::vector<std::string>{"/usr/include/stdc-predef.h", "/inc/a.h", "/inc/b.h"}));
  EXPECT_EQ(splice::tokens(ii + "  int   b ;\n\n"), "inta;intb;");
  const std::string verbose =
      "ignoring nonexistent directory \"/x\"\n#include \"...\" search starts here:\n"
      "#include <...> search starts here:\n /shim\n /cuda/bin/../include\n /usr/include\nEnd of search list.\n";
  EXPECT_EQ(splice::search_dirs(verbose), (std::vector<std::string>{"/shim", "/cuda/bin/../include", "/usr/include"}));
  EXPECT_TRUE(splice::has_pragma_once("// c\n#pragma once\nint x;\n"));
  EXPECT_TRUE(splice::has_pragma_once("  #  pragma   once  // guard\n"));
  EXPECT_TRUE(splice::has_pragma_once("# pragma once\n"));
  EXPECT_FALSE(splice::has_pragma_once("#ifndef A_H\n#define A_H\n#pragma pack(push)\n#endif\n"));
  EXPECT_FALSE(splice::has_pragma_once("// #pragma once\n"));
}

TEST(PpSplice, RestUnitKeepsTheUnitsLineNumbers) {
  EXPECT_EQ(splice::rest_unit("a\nb\nc\nd\n", 3, "kg_unit.cu"), "#line 4 \"kg_unit.cu\"\nd\n");
  EXPECT_EQ(splice::rest_unit("a\nb\n", 3, "kg_unit.cu"), "");
}

// The build script's kg_splice, run by /bin/sh on files made here.
class PpSpliceJoin : public ::testing::Test {
 protected:
  TempDir dir;
  int join(const std::string& rest) {
    write_file(dir.path + "/rest.ii", rest);
    write_file(dir.path + "/prefix.ii", "# 0 \"kg_unit.cu\"\nint from_prefix;\n# 3 \"kg_unit.cu\" 2\n");
    write_file(dir.path + "/once.txt", dir.path + "/once.h\n");
    write_file(dir.path + "/once.h", "#pragma once\n");
    write_file(dir.path + "/join.sh", splice::shell_function(3, "kg_unit.cu") + "kg_splice rest.ii prefix.ii once.txt out.ii\n");
    return std::system(("cd " + sh_quote(dir.path) + " && /bin/sh join.sh").c_str());
  }
};

TEST_F(PpSpliceJoin, JoinsThePrefixWithTheRestFromItsLine) {
  ASSERT_EQ(join("# 0 \"kg_unit_rest.cu\"\n# 1 \"/tmp/macros.h\" 1\n# 1 \"kg_unit_rest.cu\"\n# 4 \"kg_unit.cu\"\nint from_rest;\n"), 0);
  EXPECT_EQ(read(dir.path + "/out.ii"), "# 0 \"kg_unit.cu\"\nint from_prefix;\n# 3 \"kg_unit.cu\" 2\n# 4 \"kg_unit.cu\"\nint from_rest;\n");
}

TEST_F(PpSpliceJoin, RefusesARestThatEntersAPragmaOnceHeaderOfThePrefix) {
  // By another spelling of the same path, as an include relative to its includer would give.
  EXPECT_NE(join("# 4 \"kg_unit.cu\"\n# 1 \"" + dir.path + "/./sub/../once.h\" 1\nint again;\n"), 0);
  EXPECT_NE(join("# 5 \"kg_unit.cu\"\nint no_line_directive;\n"), 0);  // not the rest of a 3-line prefix
  EXPECT_EQ(join("# 4 \"kg_unit.cu\"\n# 1 \"" + dir.path + "/other.h\" 1\nint fine;\n"), 0);
}
