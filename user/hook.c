// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The writes themselves. process_vm_writev is not documented to store 8 bytes at once, and the
 * interpreter reads eval_frame at every call, so every function here is called with the target
 * stopped (tracee__stop), or with the thread that asked stopped by our signal: it holds the
 * GIL, so no other thread of its interpreter runs Python code meanwhile.
 */
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "hook.h"
#include "log.h"
#include "proc.h"

#define MAX_THREADS 8192 /* a bound on thread-list walks in the target */

static uint64_t first_interp(const struct py_target *t)
{
	uint64_t head = 0;

	if (!t->runtime_addr)
		return 0;
	proc_read(t->pid, t->runtime_addr + t->offsets->PyRuntime_interpreters_head, &head,
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

/* Writes our value into interp if it has no hook. The target must be stopped. */
static int switch_interp(const struct py_target *t, struct hook_state *h, uint64_t interp)
{
	uint64_t slot = interp + t->offsets->bpf.PyInterpreterState_eval_frame, cur;
	int err = proc_read(t->pid, slot, &cur, sizeof(cur));

	if (err)
		return err;
	if (cur && cur != t->eval_addr) {
		h->foreign++;
		return 0;
	}
	if (!cur) {
		err = proc_write(t->pid, slot, &t->eval_addr, sizeof(t->eval_addr));
		if (err)
			return err;
	}
	if (!listed(h->interp, h->n, interp) && h->n < MAX_HOOKED_INTERPS)
		h->interp[h->n++] = interp;
	return 0;
}

/* Adds the bonus to one thread's C recursion budget, once. The target must be stopped. */
static int raise_budget(const struct py_target *t, struct hook_state *h, uint64_t tstate,
			uint64_t tid)
{
	uint64_t slot = tstate + t->offsets->bpf.PyThreadState_c_recursion_remaining, *seen;
	int32_t remaining;
	int err;

	seen = u64_map_upsert(&h->raised, hash_u64(tstate) ^ tid);
	if (!seen)
		return -ENOMEM;
	if (*seen)
		return 0;
	*seen = 1;
	err = proc_read(t->pid, slot, &remaining, sizeof(remaining));
	if (err)
		return err;
	remaining += (int32_t)t->offsets->c_recursion_bonus;
	err = proc_write(t->pid, slot, &remaining, sizeof(remaining));
	if (!err)
		h->budgets_raised++;
	return err;
}

/* Switches back every interpreter we switched before (address unknown to the asker). */
static int switch_all(const struct py_target *t, struct hook_state *h)
{
	int i, err = 0;

	for (i = 0; i < h->n && !err; i++)
		err = switch_interp(t, h, h->interp[i]);
	return err;
}

/* Withdraws our value wherever it is, for a hook that will not share (the perf trampoline). */
static int yield_hooks(const struct py_target *t, struct hook_state *h)
{
	uint64_t slot, cur, zero = 0;
	int i, err = 0;

	for (i = 0; i < h->n && !err; i++) {
		slot = h->interp[i] + t->offsets->bpf.PyInterpreterState_eval_frame;
		err = proc_read(t->pid, slot, &cur, sizeof(cur));
		if (!err && cur == t->eval_addr)
			err = proc_write(t->pid, slot, &zero, sizeof(zero));
	}
	h->yields++;
	return err;
}

int hook_preinit(const struct py_target *t, struct hook_state *h)
{
	if (!t->offsets->bpf.PyInterpreterState_eval_frame || !t->runtime_addr ||
	    !t->offsets->PyRuntime_main_interpreter)
		return 0;
	/* the static main interpreter keeps this value through Py_Initialize (checked on 3.11,
	 * 3.12, 3.13), so the very first Python call already runs with inlining off */
	return switch_interp(t, h, t->runtime_addr + t->offsets->PyRuntime_main_interpreter);
}

int hook_install(const struct py_target *t, struct hook_state *h)
{
	const struct py_offsets_entry *o = t->offsets;
	uint64_t interp, tstate, tid;
	int err = 0, i, j;

	if (!o->bpf.PyInterpreterState_eval_frame)
		return 0;
	for (interp = first_interp(t), i = 0; interp && i < MAX_HOOKED_INTERPS && !err; i++) {
		err = switch_interp(t, h, interp);
		if (proc_read(t->pid, interp + o->PyInterpreterState_threads_head, &tstate,
			      sizeof(tstate)))
			tstate = 0;
		for (j = 0; o->c_recursion_bonus && tstate && j < MAX_THREADS && !err; j++) {
			tid = 0;
			proc_read(t->pid, tstate + o->PyThreadState_native_thread_id, &tid,
				  sizeof(tid));
			err = raise_budget(t, h, tstate, tid);
			if (proc_read(t->pid, tstate + o->PyThreadState_next, &tstate,
				      sizeof(tstate)))
				break;
		}
		if (proc_read(t->pid, interp + o->PyInterpreterState_next, &interp, sizeof(interp)))
			break;
	}
	return err;
}

int hook_inherit(const struct py_target *t, struct hook_state *h, const struct hook_state *parent)
{
	const struct py_offsets_entry *o = t->offsets;
	uint64_t interp, tstate, *seen;
	int i, j;

	memcpy(h->interp, parent->interp, sizeof(h->interp));
	h->n = parent->n;
	if (!o->c_recursion_bonus)
		return 0;
	/* the budgets in the copied thread states were raised in the parent already: mark them
	 * for the child's thread (its tid is its pid), or they would be raised twice */
	for (interp = first_interp(t), i = 0; interp && i < MAX_HOOKED_INTERPS; i++) {
		if (proc_read(t->pid, interp + o->PyInterpreterState_threads_head, &tstate,
			      sizeof(tstate)))
			tstate = 0;
		for (j = 0; tstate && j < MAX_THREADS; j++) {
			seen = u64_map_upsert(&h->raised, hash_u64(tstate) ^ (uint64_t)t->pid);
			if (!seen)
				return -ENOMEM;
			*seen = 1;
			if (proc_read(t->pid, tstate + o->PyThreadState_next, &tstate,
				      sizeof(tstate)))
				break;
		}
		if (proc_read(t->pid, interp + o->PyInterpreterState_next, &interp, sizeof(interp)))
			break;
	}
	return 0;
}

void hook_request(struct hook_state *h, const struct ev_request *r)
{
	if (r->what == REQ_HOOK_SETTER || r->what == REQ_HOOK_ENTRY) {
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

int hook_service(const struct py_target *t, struct hook_state *h, pid_t tid)
{
	int i, n = 0, err = 0, e;

	for (i = 0; i < h->npending; i++) {
		struct hook_pending *p = &h->pending[i];

		if (tid && p->tid != (uint32_t)tid) {
			h->pending[n++] = *p; /* another thread's: kept for its own stop */
			continue;
		}
		if (p->what == REQ_RECURSION)
			e = raise_budget(t, h, p->addr, p->tid);
		else if (p->what == REQ_HOOK_YIELD)
			e = yield_hooks(t, h);
		else if (p->addr)
			e = switch_interp(t, h, p->addr);
		else
			e = switch_all(t, h);
		if (e && !err)
			err = e;
	}
	h->npending = n;
	return err;
}

int hook_restore(const struct py_target *t, struct hook_state *h)
{
	unsigned slot_off = t->offsets->bpf.PyInterpreterState_eval_frame;
	uint64_t cur, zero = 0;
	int i, restored = 0;

	for (i = 0; i < h->n; i++) {
		/* only our own value: a hook someone installed since then stays theirs */
		if (proc_read(t->pid, h->interp[i] + slot_off, &cur, sizeof(cur)) ||
		    cur != t->eval_addr)
			continue;
		if (!proc_write(t->pid, h->interp[i] + slot_off, &zero, sizeof(zero)))
			restored++;
	}
	return restored;
}

void hook_state_free(struct hook_state *h)
{
	u64_map_free(&h->raised);
}
