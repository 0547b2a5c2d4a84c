/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the trampoline page reads about the thread it runs on: glibc's thread block (struct
 * pthread, at the thread pointer, %fs), which holds the thread's kernel id (the batch mode's
 * thread key) and its stack (stackblock, stackblock_size, guardsize, one after the other), and
 * the main thread's stack, which glibc does not describe there. The offsets are glibc's
 * internals: found in pyuprof's own thread block, and trusted in a target only where its C
 * library is glibc and, attached, where every thread's block checks out.
 */
#ifndef __PYUPROF_THREAD_BLOCK_H
#define __PYUPROF_THREAD_BLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct thread_block {
	uint32_t tid_off;   /* the thread's kernel id; 0: not found */
	uint32_t stack_off; /* stackblock, then stackblock_size and guardsize; 0: not found */
	/* the signal mask the thread starts with (its first word), set by pthread_create from
	 * its caller's before the clone (which runs with every signal blocked); 0: not found */
	uint32_t sigmask_off;
};

/* Where pyuprof's own glibc keeps them, found once in a thread of pyuprof's own. */
const struct thread_block *thread_block__own(void);

enum libc_kind {
	LIBC_UNKNOWN, /* a static program: no ELF interpreter names its C library */
	LIBC_GLIBC,   /* its ELF interpreter is glibc's (ld-linux*) */
	LIBC_OTHER,   /* another one (musl's ld-musl-*: an Alpine container) */
};

/* The C library pid's program runs with, by its ELF interpreter; why: the interpreter's path. */
enum libc_kind thread_block__libc(pid_t pid, char *why, size_t why_len);

/*
 * In process pid, stopped: whether each of its n threads (tids, with their FS bases) has a
 * thread block as pyuprof's glibc lays one out: its tid where the key is read, and its stack
 * block around the block itself (glibc keeps the block at the top of the thread's stack; the
 * main thread's has none: 0). Returns 0, or -EINVAL with why naming the first that does not.
 */
int thread_block__check(pid_t pid, const pid_t *tids, const uint64_t *bases, int n, char *why,
			size_t why_len);

/*
 * The main thread's stack in pid: its lowest address it can grow down to and the bytes from
 * there to its top. The [stack] mapping's end less the stack limit (RLIMIT_STACK, as the kernel
 * bounds its growth), or, if higher, the end of the mapping below it and the kernel's gap
 * (stack_guard_gap, 1 MiB by default). Returns 0 or -errno.
 */
int thread_block__main_stack(pid_t pid, uint64_t *low, uint64_t *span);

#endif /* __PYUPROF_THREAD_BLOCK_H */
