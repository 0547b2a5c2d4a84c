/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * System calls made by a thread of the target on pyuprof's behalf, for what only the target
 * can do for itself (map the trampoline page). The thread stands in a ptrace-stop of ours; it
 * is pointed at a `syscall` instruction that exists in its memory, stepped through one call at
 * a time with its signals blocked, and put back as it was, in a PTRACE_EVENT_STOP from which
 * the kernel restarts an interrupted call of its own, or not, by its own rules.
 */
#ifndef __PYUPROF_INJECT_H
#define __PYUPROF_INJECT_H

#include <stdint.h>
#include <sys/types.h>

struct inject_call {
	long nr;
	uint64_t args[6];
	uint64_t via; /* the `syscall` instruction to run it from (0: the one given for all) */
	int64_t ret; /* set: the call's return value (-errno on failure) */
};

/*
 * Runs calls[0..n) in thread tid, stopped by us and with no signal of the target's pending in
 * that stop, through the syscall instruction at insn. Signals of the target's that arrive
 * meanwhile wait in its queue and are taken when it is resumed. Stops at the first call that
 * fails. Returns 0 (look at each ret); -EBUSY if this thread cannot make them (it runs under
 * seccomp, or waits in vfork), untouched; -ESRCH if it died; or -errno of ptrace.
 */
int inject__syscalls(pid_t tid, uint64_t insn, struct inject_call *calls, int n);

/* The address of a `syscall` instruction in pid's vDSO (the same image in every process of
 * this kernel), checked in pid's memory. Returns 0 or -errno (-ENOENT: none found). */
int inject__find_syscall(pid_t pid, uint64_t *insn);

#endif /* __PYUPROF_INJECT_H */
