// A shared object for runner_like: built by the test build, dlopen'ed from a read-only bind.
extern "C" int kg_plugin_square(int x) { return x * x; }
