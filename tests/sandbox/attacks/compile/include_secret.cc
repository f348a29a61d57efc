// A13 compile-time theft by #include: the test compiles this with -DKG_SECRET_FILE="\"<path>\""
// where <path> is a verifier file on the host that is not bound into the compile box.
// The build must fail (no such file); nothing secret may appear in the compiler's output.
const char stolen[] = {
#include KG_SECRET_FILE
};
int main() { return stolen[0]; }
