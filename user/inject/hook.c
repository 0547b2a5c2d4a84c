// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The writes themselves. process_vm_writev is not documented to store 8 bytes at once, and the
 * interpreter reads eval_frame at every call, so every function here is called with the target
 * stopped (ptrace_hold__stop), or with the thread that asked stopped by our signal: it holds its
 * interpreter's GIL, so no other thread of that interpreter runs Python code meanwhile. With
 * 3.12+ per-interpreter GILs a thread of another interpreter may, so a write outside the
 * asker's own interpreter waits for the whole process to stop (hook__service).
 */
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "base/log.h"
#include "base/proc.h"
#include "inject/hook.h"


static uint64_t first_interp(const struct py_target *t)
{
	uint64_t head = 0;

	if (!t->runtime_addr)
		return 0;
	proc__read(t->pid, t->runtime_addr + t->offsets->PyRuntime_interpreters_head, &head,
		  sizeof(head));
	return head;
}

static bool listed(const uint64_t *arr, int n, uint64_t v)
{
	for (int i = 0; i < n; i++)
		if (arr[i] == v)
			return true;
	return false;
}

void hook__setup(struct hook_state *h, const struct py_target *t, uint64_t tramp)
{
	bool inlines = t->offsets->bpf.PyInterpreterState_eval_frame != 0; /* 3.11+ */

	h->value = tramp ? tramp : t->eval_addr;
	h->unset = inlines ? 0 : t->eval_addr;
	h->slot = tramp ? t->offsets->PyInterpreterState_hook
			: t->offsets->bpf.PyInterpreterState_eval_frame;
}

/*
 * Whether addr is an interpreter of the target now: a request names it as it was when it was
 * made, and one serviced later must not write into memory that has been freed since.
 */
static bool live(const struct py_target *t, uint64_t addr)
{
	uint64_t interp;
	int i;

	for (interp = first_interp(t), i = 0; interp && i < MAX_HOOKED_INTERPS; i++) {
		if (interp == addr)
			return true;
		if (proc__read(t->pid, interp + t->offsets->PyInterpreterState_next, &interp,
			       sizeof(interp)))
			break;
	}
	return false;
}

/* Writes our value into interp if it has no hook. The target must be stopped. */
static int switch_interp(const struct py_target *t, struct hook_state *h, uint64_t interp)
{
	uint64_t slot = interp + h->slot, cur;
	int err;

	if (!h->slot)
		return 0;
	err = proc__read(t->pid, slot, &cur, sizeof(cur));
	if (err)
		return err;
	if (cur != h->unset && cur != h->value) {
		h->foreign++;
		return 0;
	}
	if (cur == h->unset) {
		err = proc__write(t->pid, slot, &h->value, sizeof(h->value));
		if (err)
			return err;
	}
	if (!listed(h->interp, h->n, interp) && h->n < MAX_HOOKED_INTERPS)
		h->interp[h->n++] = interp;
	return 0;
}

/* Switches every interpreter of the target that has no hook (address unknown to the asker). */
static int switch_all(const struct py_target *t, struct hook_state *h)
{
	uint64_t interp;
	int i, err = 0;

	for (interp = first_interp(t), i = 0; interp && i < MAX_HOOKED_INTERPS && !err; i++) {
		err = switch_interp(t, h, interp);
		if (proc__read(t->pid, interp + t->offsets->PyInterpreterState_next, &interp,
			      sizeof(interp)))
			break;
	}
	return err;
}

/*
 * Withdraws our value from interp (0: wherever it is) for a hook that will not share (the perf
 * trampoline starting in that interpreter).
 */
static int yield_hooks(const struct py_target *t, struct hook_state *h, uint64_t interp)
{
	uint64_t slot, cur, zero = 0;
	int i, err = 0;

	for (i = 0; i < h->n && !err; i++) {
		if (interp && h->interp[i] != interp)
			continue;
		slot = h->interp[i] + h->slot;
		err = proc__read(t->pid, slot, &cur, sizeof(cur));
		if (!err && cur == h->value)
			err = proc__write(t->pid, slot, &zero, sizeof(zero));
	}
	h->yields++;
	return err;
}

int hook__preinit(const struct py_target *t, struct hook_state *h)
{
	if (!h->slot || !t->offsets->bpf.PyInterpreterState_eval_frame || !t->runtime_addr ||
	    !t->main_interp_off)
		return 0;
	/* the static main interpreter keeps this value through Py_Initialize (checked on 3.11,
	 * 3.12, 3.13), so the very first Python call already runs with inlining off */
	return switch_interp(t, h, t->runtime_addr + t->main_interp_off);
}

int hook__install(const struct py_target *t, struct hook_state *h)
{
	return h->slot ? switch_all(t, h) : 0;
}

int hook__inherit(const struct py_target *t, struct hook_state *h)
{
	/* its memory is its parent's at the fork: our value where the parent had it then. A
	 * child forked while an attach loaded, before the parent's hooks were written, has none:
	 * written now, as at an attach (every interpreter of its own with no hook) */
	return h->slot ? switch_all(t, h) : 0;
}

void hook__request(struct hook_state *h, const struct ev_request *r)
{
	if (r->what == REQ_THREAD_NAME) /* the stop was the point: the name is read by now */
		return;
	/* (<= 3.10 asks for the trampoline at its first calls: no reset) */
	if ((r->what == REQ_HOOK_SETTER || r->what == REQ_HOOK_ENTRY) && !h->unset) {
		/* it held our value: the target reset it */
		if (!r->addr || listed(h->interp, h->n, r->addr)) {
			if (r->what == REQ_HOOK_SETTER)
				h->resets_setter++;
			else
				h->resets_entry++;
		}
	}
	if (h->npending < MAX_PENDING) {
		h->pending[h->npending].addr = r->addr;
		h->pending[h->npending].tid = r->tid;
		h->pending[h->npending++].what = r->what;
	}
}

/* Whether the target has more than one interpreter (a bounded walk). */
static bool several_interps(const struct py_target *t)
{
	uint64_t interp = first_interp(t);

	return interp && !proc__read(t->pid, interp + t->offsets->PyInterpreterState_next, &interp,
				    sizeof(interp)) && interp;
}

/*
 * Whether p may be done with only its thread stopped: it writes into that thread's own state
 * (its thread state; the interpreter read from its thread state, at an entry or at the perf
 * trampoline's start), or the target has no other interpreter whose threads could run
 * meanwhile. (A setter's interpreter is its argument, not necessarily the caller's.)
 */
static bool alone_ok(const struct py_target *t, const struct hook_pending *p, int *several)
{
	if ((p->what == REQ_HOOK_ENTRY || p->what == REQ_HOOK_YIELD) && p->addr)
		return true;
	if (*several < 0)
		*several = several_interps(t);
	return !*several;
}

int hook__service(const struct py_target *t, struct hook_state *h, pid_t tid)
{
	int i, n = 0, err = 0, e, had = h->n, foreign = h->foreign, several = -1;
	bool entry_all = false, needed_all = false;

	for (i = 0; i < h->npending; i++) {
		struct hook_pending *p = &h->pending[i];

		if (tid && p->tid != (uint32_t)tid) {
			h->pending[n++] = *p; /* another thread's: kept for its own stop */
			continue;
		}
		if (!alone_ok(t, p, &several)) {
			if (tid) {
				h->pending[n++] = *p;
				h->wait_all = true;
				continue;
			}
			/* done now with the whole process stopped, whichever way it came */
			needed_all = true;
		}
		/* an address from the request is used only while it is still the target's */
		if (p->what == REQ_HOOK_YIELD)
			e = yield_hooks(t, h, p->addr);
		else if (p->addr)
			e = live(t, p->addr) ? switch_interp(t, h, p->addr) : 0;
		else
			e = switch_all(t, h);
		entry_all |= p->what == REQ_HOOK_ENTRY && !t->offsets->bpf.PyInterpreterState_eval_frame;
		if (e && !err)
			err = e;
	}
	h->npending = n;
	if (!tid) {
		h->waited_all += needed_all;
		h->wait_all = false;
	}
	/* <= 3.10: a call bypassed the trampoline, and no interpreter took it this time (each
	 * had someone else's hook): asking again would only stop the thread again */
	if (entry_all && h->n == had && h->foreign > foreign)
		h->watch_off = true;
	return err;
}

int hook__restore(const struct py_target *t, struct hook_state *h)
{
	uint64_t cur;
	int i, restored = 0;

	for (i = 0; i < h->n && h->slot; i++) {
		/* only our own value: a hook someone installed since then stays theirs; an
		 * interpreter that is gone is not written to */
		if (!live(t, h->interp[i]) ||
		    proc__read(t->pid, h->interp[i] + h->slot, &cur, sizeof(cur)) || cur != h->value)
			continue;
		if (!proc__write(t->pid, h->interp[i] + h->slot, &h->unset, sizeof(h->unset)))
			restored++;
	}
	return restored;
}

