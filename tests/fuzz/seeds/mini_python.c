// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Seed for fuzz_elf: a tiny ELF with the symbols, the USDT note and the rets pyuprof looks
 * for in an interpreter (built by make_elf_seeds.sh, several ways). */
#define PROBE(name)                                                                        \
	__asm__ volatile("990: nop\n"                                                      \
			 ".pushsection .note.stapsdt,\"?\",\"note\"\n"                     \
			 ".balign 4\n"                                                     \
			 ".4byte 992f-991f, 994f-993f, 3\n"                                \
			 "991: .asciz \"stapsdt\"\n"                                       \
			 "992: .balign 4\n"                                                \
			 "993: .8byte 990b\n"                                              \
			 ".8byte _.stapsdt.base\n"                                         \
			 ".8byte python_" name "_semaphore\n"                             \
			 ".asciz \"python\"\n"                                             \
			 ".asciz \"" name "\"\n"                                           \
			 ".asciz \"-8@%%rdi\"\n"                                           \
			 "994: .balign 4\n"                                                \
			 ".popsection\n" ::: "memory")

__asm__(".pushsection .stapsdt.base,\"aG\",\"progbits\",.stapsdt.base,comdat\n"
	".weak _.stapsdt.base\n.hidden _.stapsdt.base\n_.stapsdt.base: .space 1\n.popsection\n");

unsigned short python_function__entry_semaphore __attribute__((section(".probes")));
unsigned short python_function__return_semaphore __attribute__((section(".probes")));
const char Py_Version_str[] = "3.12.1";
unsigned long Py_Version = 0x030c01f0;
struct { long a[64]; } _PyRuntime = { { 1, 2, 3 } };
void *(*volatile hook)(void *, void *, int);

__attribute__((noinline)) void *_PyEval_EvalFrameDefault(void *ts, void *frame, int exc)
{
	long *f = frame;

	PROBE("function__entry");
	if (!f)
		return 0;
	for (int i = 0; i < exc; i++) {
		if (f[i] == 7)
			return f + i;
		if (hook)
			f = hook(ts, f, i);
	}
	PROBE("function__return");
	return exc > 3 ? ts : frame;
}

__attribute__((noinline)) void *_PyEval_Vector(void *a)
{
	return _PyEval_EvalFrameDefault(a, a, 2);
}

int Py_BytesMain(int argc, char **argv)
{
	return _PyEval_Vector(argv) == (void *)argv + argc;
}
