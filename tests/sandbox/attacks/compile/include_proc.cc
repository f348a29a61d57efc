// A13 compile-time theft through /proc: the box's init is a copy of the supervisor, so its
// environment and memory are what an #include of /proc/1/environ would read. Must fail.
const char stolen[] = {
#include "/proc/1/environ"
};
int main() { return stolen[0]; }
