// A seed for elf_fuzz: the imports and exports the static rules look for (an aten call, a data
// pointer, dlsym of a BLAS routine, a clock_gettime of its own, a weak CUDA limit call, a static
// initialiser). Built without libc (-nostdlib) into small shared objects of both hash styles.
struct Tensor;
extern "C" void* kg_relu(const Tensor&) asm("_ZN2at4_ops4relu4callERKNS_6TensorE");
extern "C" void* kg_ptr() asm("_ZNK2at10TensorBase8data_ptrIfEEPT_v");
extern "C" void* dlsym(void*, const char*);
extern "C" void* kg_use(const Tensor& t) { return kg_relu(t) ? dlsym(kg_ptr(), "cblas_sgemm") : 0; }
extern "C" int clock_gettime(int, void*) { return 0; }
extern "C" __attribute__((weak)) int cudaDeviceSetLimit(int, unsigned long);
extern "C" int kg_limit() { return cudaDeviceSetLimit ? cudaDeviceSetLimit(6, 1 << 20) : 0; }
static int kg_init() { return 1; }
static int kg_once = kg_init();
