/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Writes into the target: the eval_frame hook (the probe trampoline on every version, or on
 * 3.11+ _PyEval_EvalFrameDefault itself: either stops CPython from inlining Python-to-Python
 * calls) and its undo. The BPF side only reads (kernels in lockdown refuse BPF writes to
 * user memory); it reports what needs writing. Every function here expects the target stopped
 * (ptrace_hold.h), or at least the thread that asked, so no thread reads a half-written pointer.
 */
#ifndef __PYUPROF_HOOK_H
#define __PYUPROF_HOOK_H

#include <linux/types.h>
#include <stdint.h>
#include <sys/types.h>
#include "pyuprof.h"
#include "target/py_target.h"

#define MAX_HOOKED_INTERPS 256
#define MAX_PENDING 256

struct hook_pending {
	uint64_t addr; /* interpreter or thread state */
	uint32_t tid, what;
};

struct hook_state {
	uint64_t value; /* what we write: the trampoline, or _PyEval_EvalFrameDefault (3.11+) */
	uint64_t unset; /* the slot with no hook: NULL (3.11+), _PyEval_EvalFrameDefault (<= 3.10) */
	unsigned slot;	/* eval_frame's offset in an interpreter; 0: nothing is written */
	bool watch_off; /* <= 3.10: a request found only others' hooks: stop asking */
	uint64_t interp[MAX_HOOKED_INTERPS]; /* interpreters holding our value: restored at the end */
	int n;
	struct hook_pending pending[MAX_PENDING];
	int npending;
	uint64_t resets_setter, resets_entry; /* the target reset the hook; caught where */
	uint64_t yields; /* withdrawn for the perf trampoline */
	int foreign; /* interpreters found with someone else's hook at attach: left alone */
	bool wait_all;	  /* a request of a stopped thread needs the whole process stopped */
	uint64_t waited_all; /* whole-process stops made for such requests */
};

/* Chooses what is written: the trampoline at tramp, or (tramp 0) the 3.11+ switch alone. */
void hook__setup(struct hook_state *h, const struct py_target *t, uint64_t tramp);
/* Launch mode, before the interpreter starts: switch the main interpreter (3.11+: it is static;
 * earlier ones are switched at their first call, on request). Returns 0 or -errno. */
int hook__preinit(const struct py_target *t, struct hook_state *h);

/* Attach mode, target stopped: switch every interpreter with no hook. Returns 0 or -errno. */
int hook__install(const struct py_target *t, struct hook_state *h);

/* A process forked from a recorded one, stopped at its birth: its memory is a copy, so its
 * parent's switches are in it if it was forked after them; else (forked while an attach
 * loaded) they are made now, as hook__install does. Returns 0 or -errno. */
int hook__inherit(const struct py_target *t, struct hook_state *h);
/* Notes one request from the BPF side. */
void hook__request(struct hook_state *h, const struct ev_request *r);

/* Does the pending requests of thread tid (stopped), or all of them if tid is 0 (target
 * stopped). Of tid's, those that would write where a thread of another interpreter may be
 * running are left pending with wait_all set: the caller keeps tid stopped and does them
 * with the whole process stopped. Returns 0 or -errno. */
int hook__service(const struct py_target *t, struct hook_state *h, pid_t tid);

/* Target stopped: puts the unset value back in each interpreter that still holds ours.
 * Returns the number restored. */
int hook__restore(const struct py_target *t, struct hook_state *h);

#endif /* __PYUPROF_HOOK_H */
