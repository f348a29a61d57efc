// A13 compile-time probing with pragmas and __has_include: `#pragma GCC dependency` of a verifier
// file (must fail: the file is not in the box), and, when compiled with -DKG_PROBE_ONLY,
// __has_include of it, which must say "absent" (the build succeeds only if it is invisible).
#ifdef KG_PROBE_ONLY
#if __has_include(KG_SECRET_FILE)
#error "the verifier file is visible inside the compile box"
#endif
#else
#pragma GCC dependency KG_SECRET_FILE
#endif
int main() { return 0; }
