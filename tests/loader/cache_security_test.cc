// CachePrivacy*, CacheIntegrity*, CacheEviction*: the build cache is private to the running user,
// every entry is checked against the digests the supervisor recorded (not against what the entry
// says of itself), and the cache stays within its cap. Each test runs the attack for real on a
// cache of its own.
#include "cache.h"
#include "digest_index.h"
#include "toolchain.h"
#include "util.h"
#include "loader_test_util.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

namespace fs = std::filesystem;
using namespace kg::loader;
using namespace kg::loader::test;

namespace {

const char* kReluCpu = R"(#include <ATen/ATen.h>
at::Tensor relu__default_kernel_impl(const at::Tensor& self) { return self.clamp_min(0); }
)";

// A build of relu with a source of its own, against the cache folder `cache`.
struct CachedBuild {
  TempDir sub;
  OpFolder op;
  BuildOptions opt;
  CachedBuild(const std::string& cache, uint64_t cap = 0) {
    op = make_op(sub.path, "relu.default", {{"relu__default_implementation.cpp", unique_tag() + kReluCpu}});
    opt = options(sub.path);
    opt.cache_dir = cache;
    opt.cache_max_bytes = cap;
  }
  BuildResult run() const { return build(op, opt); }
};

// The message cache::root() throws for `dir`, "" when it accepts it.
std::string refusal(const std::string& dir) {
  try {
    cache::root(dir);
  } catch (const std::exception& e) { return e.what(); }
  return "";
}

// Sets an environment variable for the scope (unset when `value` is null).
struct ScopedEnv {
  std::string name, saved;
  bool had;
  ScopedEnv(const std::string& n, const char* value) : name(n) {
    const char* old = std::getenv(n.c_str());
    had = old != nullptr;
    if (had) saved = old;
    if (value) ::setenv(n.c_str(), value, 1);
    else ::unsetenv(n.c_str());
  }
  ~ScopedEnv() {
    if (had) ::setenv(name.c_str(), saved.c_str(), 1);
    else ::unsetenv(name.c_str());
  }
};

}  // namespace

TEST(CachePrivacy, RootOwnedByAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "chown to another uid needs root";
  TempDir d;
  const std::string root = d.path + "/cache";
  ASSERT_EQ(::mkdir(root.c_str(), 0700), 0);
  ASSERT_EQ(::chown(root.c_str(), 65534, 65534), 0);
  const std::string why = refusal(root);
  EXPECT_NE(why.find(root), std::string::npos) << why;
  EXPECT_NE(why.find("owned by uid 65534"), std::string::npos) << why;
  EXPECT_NE(why.find("KERNELGATE_CACHE="), std::string::npos) << why;
  // Through a build too: a clear error, no artifact.
  CachedBuild b(root);
  BuildResult r = b.run();
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("owned by uid 65534"), std::string::npos) << r.error;
  // And as $KERNELGATE_CACHE (the precompiled prelude's root).
  ScopedEnv env("KERNELGATE_CACHE", root.c_str());
  EXPECT_THROW(cache_root(), std::runtime_error);
}

TEST(CachePrivacy, FolderInsideTheRootOwnedByAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "chown to another uid needs root";
  TempDir d;
  const std::string root = d.path + "/cache";
  ASSERT_EQ(refusal(root), "") << "a fresh root is created private";
  // objects/ swapped for a folder another user made, as a planted artifact tree would be.
  ASSERT_EQ(::rmdir((root + "/objects").c_str()), 0);
  ASSERT_EQ(::mkdir((root + "/objects").c_str(), 0755), 0);
  ASSERT_EQ(::chown((root + "/objects").c_str(), 65534, 65534), 0);
  const std::string why = refusal(root);
  EXPECT_NE(why.find(root + "/objects"), std::string::npos) << why;
  EXPECT_NE(why.find("owned by uid 65534"), std::string::npos) << why;
}

TEST(CachePrivacy, GroupWritableRootIsRefused) {
  TempDir d;
  const std::string root = d.path + "/cache";
  ASSERT_EQ(::mkdir(root.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(root.c_str(), 0775), 0);
  const std::string why = refusal(root);
  EXPECT_NE(why.find(root), std::string::npos) << why;
  EXPECT_NE(why.find("mode 0775"), std::string::npos) << why;
  // Control: the same folder made private is accepted.
  ASSERT_EQ(::chmod(root.c_str(), 0700), 0);
  EXPECT_EQ(refusal(root), "");
}

TEST(CachePrivacy, SymlinkedRootIsRefused) {
  TempDir d;
  const std::string real = d.path + "/real", link = d.path + "/cache";
  ASSERT_EQ(::mkdir(real.c_str(), 0700), 0);
  ASSERT_EQ(::symlink(real.c_str(), link.c_str()), 0);
  const std::string why = refusal(link);
  EXPECT_NE(why.find(link), std::string::npos) << why;
  EXPECT_NE(why.find("symbolic link"), std::string::npos) << why;
  EXPECT_FALSE(fs::exists(real + "/objects")) << "nothing is created through the link";
}

TEST(CachePrivacy, NewRootIsCreatedOwnerOnly) {
  TempDir d;
  ScopedEnv env("KERNELGATE_CACHE", (d.path + "/fresh").c_str());
  const std::string root = cache_root();
  struct stat st {};
  ASSERT_EQ(::lstat(root.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_EQ(st.st_uid, ::geteuid());
}

TEST(CachePrivacy, FallbackWithoutHomeIsPerUser) {
  ScopedEnv a("KERNELGATE_CACHE", nullptr), b("XDG_CACHE_HOME", nullptr), c("HOME", nullptr);
  const std::string root = cache_root();
  EXPECT_EQ(root, "/tmp/kernelgate-cache-" + std::to_string(::geteuid()));
  struct stat st {};
  ASSERT_EQ(::lstat(root.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, ::geteuid());
  EXPECT_EQ(st.st_mode & 022, 0u);
}

TEST(CacheIntegrity, ArtifactReplacedAfterPublishingIsRejectedAndRebuilt) {
  TempDir cache;
  CachedBuild b(cache.path);
  BuildResult a = b.run();
  ASSERT_TRUE(a.ok) << all_diagnostics(a);
  const std::string genuine = read(a.artifact);
  // An attacker with write access to the entry: other bytes, and a MANIFEST that lists them.
  const std::string planted =
      "\x7f"
      "ELF planted artifact";
  std::ofstream(a.artifact, std::ios::binary | std::ios::trunc) << planted;
  std::ofstream(fs::path(a.artifact).parent_path() / "MANIFEST", std::ios::trunc)
      << "kernelgate-cache 2\nkey " << a.cache_key << "\nfile " << fs::path(a.artifact).filename().string() << "\n";
  BuildResult r = b.run();
  ASSERT_TRUE(r.ok) << all_diagnostics(r);
  EXPECT_FALSE(r.cache_hit) << "an altered entry must not be served";
  EXPECT_NE(r.cache_rejected.find("does not match its recorded digest"), std::string::npos) << r.cache_rejected;
  EXPECT_NE(read(r.artifact), planted);
  EXPECT_EQ(read(r.artifact).size(), genuine.size());
  // Honest control: the rebuilt entry is a plain hit.
  BuildResult again = b.run();
  ASSERT_TRUE(again.ok);
  EXPECT_TRUE(again.cache_hit);
  EXPECT_EQ(again.cache_rejected, "");
}

TEST(CacheIntegrity, EntryWithoutAnIndexRecordIsRejected) {
  TempDir cache;
  CachedBuild b(cache.path);
  BuildResult a = b.run();
  ASSERT_TRUE(a.ok) << all_diagnostics(a);
  // A whole entry planted under a key kernelgate never recorded (here: its record deleted).
  ASSERT_EQ(::unlink((cache.path + "/index/" + a.cache_key).c_str()), 0);
  BuildResult r = b.run();
  ASSERT_TRUE(r.ok) << all_diagnostics(r);
  EXPECT_FALSE(r.cache_hit);
  EXPECT_NE(r.cache_rejected.find("no index entry"), std::string::npos) << r.cache_rejected;
  EXPECT_TRUE(b.run().cache_hit);
}

TEST(CacheIntegrity, BuildFolderIsNeverTheIndex) {
  TempDir cache;
  const std::string root = cache::root(cache.path);
  const std::string build_dir = cache::make_build_dir(root, std::string(64, 'a'));
  digest_index::Lock lock(cache::index_dir(root));  // registers the index folder
  EXPECT_FALSE(digest_index::reachable_from(build_dir));
  EXPECT_TRUE(digest_index::reachable_from(root));
  EXPECT_TRUE(digest_index::reachable_from(root + "/"));
}

TEST(CacheIntegrity, PlantedShimHeaderIsRemoved) {
  TempDir d;
  ScopedEnv env("KERNELGATE_CACHE", (d.path + "/cache").c_str());
  const std::string shim = toolchain::shim_dir();
  // A header that would shadow the toolkit's in every cuda build (the shim is -I first).
  std::ofstream(shim + "/cuda_runtime.h") << "__attribute__((constructor)) static void planted() {}\n";
  EXPECT_EQ(toolchain::shim_dir(), shim);
  EXPECT_FALSE(fs::exists(shim + "/cuda_runtime.h")) << "the planted header must be gone";
  EXPECT_EQ(digest_index::check(d.path + "/cache/index", fs::path(shim).filename().string(), shim), "");
}

TEST(CacheIntegrity, PlantedPreludeIsRebuilt) {
  TempDir d;
  ScopedEnv env("KERNELGATE_CACHE", (d.path + "/cache").c_str());
  BuildOptions o = options(d.path);
  std::string rejected;
  const std::string prelude = toolchain::prelude_dir(o, &rejected);
  if (prelude.empty()) GTEST_SKIP() << "no precompiled prelude can be built here";
  EXPECT_EQ(rejected, "");
  const std::string genuine = read(prelude + "/kg_prelude.h");
  // The attack: a constructor injected into the header every cpu build -includes.
  std::ofstream(prelude + "/kg_prelude.h", std::ios::app) << "__attribute__((constructor)) static void planted() {}\n";
  EXPECT_EQ(toolchain::prelude_dir(o, &rejected), prelude);
  EXPECT_NE(rejected.find("precompiled prelude"), std::string::npos) << rejected;
  EXPECT_NE(rejected.find("kg_prelude.h does not match its recorded digest"), std::string::npos) << rejected;
  EXPECT_EQ(read(prelude + "/kg_prelude.h"), genuine);
  EXPECT_NE(toolchain::recorded_digest(prelude), "none");
  // Control: the rebuilt prelude is used as it is.
  rejected.clear();
  EXPECT_EQ(toolchain::prelude_dir(o, &rejected), prelude);
  EXPECT_EQ(rejected, "");
}

TEST(CacheEviction, KeepsTheCacheUnderItsCapInLruOrder) {
  TempDir cache;
  CachedBuild a(cache.path), b(cache.path), c(cache.path);
  BuildResult ra = a.run();
  ASSERT_TRUE(ra.ok) << all_diagnostics(ra);
  digest_index::Listing la;
  ASSERT_TRUE(digest_index::read(cache.path + "/index", ra.cache_key, &la));
  // Room for two entries, not three.
  const uint64_t cap = la.bytes * 5 / 2;
  a.opt.cache_max_bytes = b.opt.cache_max_bytes = c.opt.cache_max_bytes = cap;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  BuildResult rb = b.run();
  ASSERT_TRUE(rb.ok) << all_diagnostics(rb);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(a.run().cache_hit) << "a hit makes a the most recently used";
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  BuildResult rc = c.run();
  ASSERT_TRUE(rc.ok) << all_diagnostics(rc);
  const fs::path objects = fs::path(cache.path) / "objects";
  EXPECT_FALSE(fs::exists(objects / rb.cache_key)) << "b was the least recently used";
  EXPECT_FALSE(fs::exists(fs::path(cache.path) / "index" / rb.cache_key));
  EXPECT_TRUE(fs::exists(objects / ra.cache_key));
  EXPECT_TRUE(fs::exists(objects / rc.cache_key));
  uint64_t total = 0;
  for (const auto& e : fs::recursive_directory_iterator(objects))
    if (e.is_regular_file()) total += e.file_size();
  EXPECT_LE(total, cap);
  EXPECT_TRUE(a.run().cache_hit);
  EXPECT_TRUE(c.run().cache_hit);
  EXPECT_FALSE(b.run().cache_hit) << "an evicted entry is built again";
}

TEST(CacheEviction, OversizedArtifactIsUsedOnceAndNotCached) {
  TempDir cache;
  CachedBuild b(cache.path);
  b.opt.cache_artifact_max_bytes = 1024;  // any shared object is larger
  BuildResult r = b.run();
  ASSERT_TRUE(r.ok) << all_diagnostics(r);
  EXPECT_FALSE(r.cache_hit);
  ASSERT_NE(r.uncached_dir, "");
  EXPECT_TRUE(fs::exists(r.artifact)) << "the build is usable once";
  bool noted = false;
  for (const auto& n : r.notes) noted |= n.rfind("not cached", 0) == 0 && n.find("limits.cache_artifact_mb") != std::string::npos;
  EXPECT_TRUE(noted) << join(r.notes, "; ");
  EXPECT_FALSE(fs::exists(fs::path(cache.path) / "objects" / r.cache_key));
  EXPECT_FALSE(fs::exists(fs::path(cache.path) / "index" / r.cache_key));
  remove_uncached(r);
  EXPECT_FALSE(fs::exists(r.uncached_dir));
  EXPECT_FALSE(b.run().cache_hit) << "nothing was published";
  // Control: within the limit the same build is published and hit.
  b.opt.cache_artifact_max_bytes = uint64_t{64} << 20;
  ASSERT_TRUE(b.run().ok);
  EXPECT_TRUE(b.run().cache_hit);
}
