/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The probe trampoline: one page of pyuprof's code in the target, set as each interpreter's
 * PEP 523 eval_frame hook in place of _PyEval_EvalFrameDefault. It calls the real function and
 * carries a 5-byte nop before and after the call, where the entry and return probes sit: this
 * kernel turns a probe on such a nop into a call, with no trap and no single step, about a
 * tenth of the cost of a probe on the function's ret instruction.
 *
 *   +0   nopl 0(%rax,%rax)   entry probe: registers exactly as at _PyEval_EvalFrameDefault
 *   +5   sub  $8,%rsp
 *   +9   call +24
 *   +14  add  $8,%rsp
 *   +18  nopl 0(%rax,%rax)   return probe: rax is the result
 *   +23  ret
 *   +24  <the function's first instruction, replayed>; jmp *+64(%rip)
 *   +64  address of the function's second instruction
 *   +128 identity: "pyuprof-tramp 1", the function's address
 *
 * The call skips the function's first instruction, where pyuprof's probe for calls that
 * bypass the trampoline sits. The page is a memfd named pyuprof-tramp mapped private and
 * read+execute (uprobes go on a file's inode; the kernel would not probe a shared mapping),
 * placed by system calls the target itself makes (inject.h). It stays after pyuprof detaches:
 * activations on the C stacks return through it, and a later recording reuses it.
 */
#ifndef __PYUPROF_TRAMP_H
#define __PYUPROF_TRAMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "inject.h"
#include "py_target.h"

#define TRAMP_PAGE 4096
#define TRAMP_ENTRY_OFFSET 0
#define TRAMP_RETURN_OFFSET 18
#define TRAMP_NAME "pyuprof-tramp"

struct tramp {
	uint64_t addr;	/* where its code starts in the target: the hook value */
	char path[96];	/* /proc/PID/map_files/START-END: the file the probes go on */
	bool reused;	/* found in place, left by an earlier recording */
};

/* Runs system calls in a stopped thread of the target (ptrace_hold__inject, or inject__syscalls
 * directly while launch holds the one thread). Returns 0 or -errno. */
typedef int (*tramp_run_fn)(void *ctx, struct inject_call *call);

/*
 * Finds the trampoline for t in process pid, or places one. Returns 0, or -errno with why set
 * (-ENOTSUP: the function's first instruction is not one it can replay; -EPERM: the target
 * runs under a seccomp filter, which could kill it for a system call it does not expect).
 * Nothing is left changed in the target on failure but, at worst, an unused mapping.
 */
int tramp__get(pid_t pid, const struct py_target *t, tramp_run_fn run, void *ctx,
	       struct tramp *out, char *why, size_t why_len);

/* The page's bytes for t (unit tests, and the check of a page found in place). Returns 0 or
 * -ENOTSUP with why set. */
int tramp__build(const struct py_target *t, uint8_t page[TRAMP_PAGE], char *why, size_t why_len);

#endif /* __PYUPROF_TRAMP_H */
