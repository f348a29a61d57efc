// A seed for elf_fuzz: an absolute address in code (a text relocation) and an executable stack.
extern long kg_counter;
long kg_counter = 1;
extern "C" long kg_read() {
  long v;
  asm volatile("movabsq $kg_counter, %0" : "=r"(v));
  return v;
}
