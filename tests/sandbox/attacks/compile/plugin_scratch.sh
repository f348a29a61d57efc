# A13 a compiler plugin: a shell script run in the compile box writes a shared object into the
# scratch (noexec) and asks g++ to load it with -fplugin; the load must fail. Also tries to load
# a plugin from a path that is not bound.
printf 'int plugin_is_GPL_compatible; int plugin_init(){return 0;}\n' > /tmp/p.c
/usr/bin/gcc -shared -fPIC -o /tmp/p.so /tmp/p.c || exit 3
echo 'int main(){return 0;}' > /tmp/m.cc
if /usr/bin/g++ -fplugin=/tmp/p.so -c -o /tmp/m.o /tmp/m.cc; then echo "RESULT plugin-scratch SUCCEEDED"; exit 42; fi
echo "RESULT plugin-scratch refused"
if /usr/bin/g++ -fplugin="$1" -c -o /tmp/m.o /tmp/m.cc; then echo "RESULT plugin-host SUCCEEDED"; exit 42; fi
echo "RESULT plugin-host refused"
exit 0
