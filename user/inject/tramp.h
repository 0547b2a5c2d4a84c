/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The probe trampoline: one page of pyuprof's code in the target, set as each interpreter's
 * PEP 523 eval_frame hook in place of _PyEval_EvalFrameDefault. It calls the real function and
 * carries a 5-byte nop before and after the call, where the entry and return probes sit: this
 * kernel turns a probe on such a nop into a call, with no trap and no single step, about a
 * tenth of the cost of a probe on the function's ret instruction.
 *
 *   guard: the hook of a page without the batch path: the stack guard (below), and the hook
 *         put back if pyuprof is gone (below); then +0
 *   +0   nopl 0(%rax,%rax)   entry probe: registers exactly as at _PyEval_EvalFrameDefault
 *   +5   push %rsi           the frame (3.8: push %rdi), and the function's stack alignment
 *   +6   call <body>
 *   +11  nopl 0(%rax,%rax)   return probe: rax is the result, (%rsp) the frame that returns
 *   +16  pop  %rcx; ret
 *   body: 3.12+, the C recursion budget handed back around a call of what follows (below);
 *         then <the function's first instruction, replayed>; jmp *<slot>(%rip)
 *   batch: the stack guard; then stages an entry record and its chain, calls <body> as the
 *         head does, stages an exit record; the flush nop (a third probe) hands the staged
 *         records to the kernel (include/stage.h). A batch page's hook points here; a call it
 *         does not stage (3.12+: another interpreter's; one from an entry shim) goes to +0.
 *   then the parameters: the slot (the function's second instruction; for a pass-through page,
 *   the function), the hand-back's, the identity (IDENT, tramp_layout.h) and the function's
 *   address, the guard's and the hook's, the batch path's (its staging area, where it reads
 *   frames, code objects and strings).
 *
 * The code and its parameters are tramp_code.S, copied and filled in by tramp__build
 * (tramp_build.c); tramp.c places the page.
 *
 * 3.12+ keep a per-thread C recursion budget, and each activation of the eval function takes
 * units of it. CPython runs a Python-to-Python call inline, without an activation; any hook
 * turns that off, so every call would take units a native run does not spend, and a recursion
 * that runs natively would raise RecursionError. So the page gives the units back for the
 * call's duration (added before the call, taken again after it) to each call CPython would have
 * run inline (those that reach the hook from the eval loop through its call machinery alone:
 * inline_paths.h). On a stack whose bounds the page does not know (a stack of some C code's
 * own), only while the thread's Python depth is below TRAMP_HANDBACK_DEPTH: past it, the C
 * stack each hooked call uses (about half a KiB) is what the budget must protect, and
 * CPython's own accounting applies.
 *
 * The stack guard: each hooked call is a C activation, natively not one (3.11+: calls run
 * inline) or a smaller one (before), so a thread whose C stack natively suffices may run out of
 * it recorded (a thread with a small stack: threading.stack_size, musl's 128 KiB). A call made
 * with less than TRAMP_STACK_MARGIN of its thread's stack left raises RecursionError instead of
 * running into the stack's end: on 3.12 and 3.13 by CPython's own check, the thread's C budget
 * at 0 for the call; before, as the eval function's own check does when it fails (the function
 * is not called). The thread's stack is glibc's stack block (its thread block, at %fs), or the
 * main thread's mapping down to its stack limit (thread_block.h); 3.14+ check the C stack by
 * its address themselves, and the page does not. A probe on the guard's nop counts the calls
 * that raise.
 *
 * If pyuprof is gone (SIGKILL: the kernel removed its probes), the page finds its nops no
 * longer probed (the batch path at its next flush, then at each call; the guard at each call)
 * and puts the interpreter's eval_frame hook back as pyuprof does when it stops: the calls
 * after run natively (inline), the activations still on the stack return through the page.
 * 3.8 passes no thread state to the hook: there the page stays the hook.
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
#include "inject/inject.h"
#include "target/py_target.h"

/* its size: three pages (with the page's C functions' code: include/cfuncs.h, and the
 * recursion units they give back: .Lcf_units) */
#define TRAMP_PAGE 12288
#define TRAMP_ENTRY_OFFSET 0
#define TRAMP_RETURN_OFFSET 11
#define TRAMP_NAME "pyuprof-tramp"
/* Python depth below which a call's C budget is handed back on a stack of unknown bounds */
#define TRAMP_HANDBACK_DEPTH 4000
/* C stack left below which a hooked call raises RecursionError: CPython 3.14's own soft limit
 * (2 * _PyOS_STACK_MARGIN_BYTES above the stack's usable bottom) */
#define TRAMP_STACK_MARGIN (32 << 10)

/* How the guard raises RecursionError (tramp_code.S's STACK_*) */
enum tramp_stack_mode {
	TRAMP_STACK_NONE = 0,	/* no guard: 3.14+, or what it needs is not known */
	TRAMP_STACK_RAISE = 1,	/* before 3.12: PyErr_SetString and NULL, the function not called */
	TRAMP_STACK_BUDGET = 2, /* 3.12, 3.13: the thread's C budget at 0 for the call */
};

enum tramp_kind {
	TRAMP_PROBED, /* its nops carry the entry and return probes; the function's own first
		       * instruction keeps the probe for calls that bypass the page */
	TRAMP_PASS,   /* 3.12+ with exits from the function itself (--exits uretprobe|ret): a
		       * pass-through that only hands the C budget back */
	TRAMP_BATCH,  /* TRAMP_PROBED, and a batch path that stages calls and returns in a
		       * staging area (include/stage.h) and enters the kernel once per batch */
};

struct tramp {
	uint64_t addr;	/* where its code starts in the target */
	uint64_t hook;	/* what the eval_frame hook points at: addr, or its batch path */
	uint64_t stage; /* TRAMP_BATCH: the staging area it writes (found or placed with it) */
	char path[96];	/* /proc/PID/map_files/START-END: the file the probes go on */
	bool reused;	/* found in place, left by an earlier recording */
};

/* Where a page of kind puts the eval_frame hook: its batch path, or its guard */
uint64_t tramp__hook_offset(enum tramp_kind kind);
/* TRAMP_BATCH: the flush nop's offset in the page (the third probe) */
uint64_t tramp__flush_offset(void);
/* The stack guard's nop (a probe there counts the calls that raise), and how t's page guards
 * (TRAMP_STACK_NONE: it does not; why, if not) */
uint64_t tramp__stack_offset(void);
enum tramp_stack_mode tramp__stack_mode(const struct py_target *t, const char **why);

/* Runs system calls in a stopped thread of the target (ptrace_hold__inject, or inject__syscalls
 * directly while launch holds the one thread). Returns 0 or -errno. */
typedef int (*tramp_run_fn)(void *ctx, struct inject_call *call);

/* Whether t's interpreter needs a page in front of its eval function for kind's sake alone
 * (TRAMP_PASS: the C budget hand-back, 3.12+). */
bool tramp__wanted(const struct py_target *t, enum tramp_kind kind);

/*
 * Finds the trampoline of that kind for t in process pid (stopped), or places one. Returns 0, or
 * -errno with why set (-ENOTSUP: the function's first instruction is not one it can replay;
 * -EPERM: the target runs under a seccomp filter, which could kill it for a system call it
 * does not expect). Nothing is left changed in the target on failure but, at worst, an unused
 * mapping.
 */
int tramp__get(pid_t pid, const struct py_target *t, enum tramp_kind kind, tramp_run_fn run,
	       void *ctx, struct tramp *out, char *why, size_t why_len);

/* The page's bytes for t (unit tests, and the check of a page found in place); stage: the
 * staging area of a TRAMP_BATCH page; addr: where it is (or will be) mapped in the target,
 * which a few of its words hold (0 where not known: they are left 0). Returns 0 or -ENOTSUP
 * with why set. */
int tramp__build(const struct py_target *t, enum tramp_kind kind, uint64_t stage, uint64_t addr,
		 uint8_t page[TRAMP_PAGE], char *why, size_t why_len);

/*
 * Puts back, in process pid (stopped, with no probe of ours registered on it), the original
 * bytes of every trampoline page mapped there wherever its memory differs from its file: what
 * the kernel left of a probe (6.18 rewrites a probed nop into a call of its own page, which a
 * forked child does not inherit), or of a probe removal that restored part of an instruction.
 * Returns the number of bytes put back (0: every page was whole), or -errno.
 */
int tramp__restore(pid_t pid);

#endif /* __PYUPROF_TRAMP_H */
