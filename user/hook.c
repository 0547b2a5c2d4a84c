// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Stop-the-world writes of interp->eval_frame. process_vm_writev is not documented to store 8
 * bytes at once, and the interpreter reads the field at every call, so every thread is stopped
 * with PTRACE_SEIZE + PTRACE_INTERRUPT (no signal is sent, the target sees nothing) around it.
 */
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "hook.h"
#include "log.h"
#include "proc.h"

#define MAX_TASKS 8192

struct world {
	pid_t tids[MAX_TASKS];
	int n;
};

static bool stopped_already(const struct world *w, pid_t tid)
{
	for (int i = 0; i < w->n; i++)
		if (w->tids[i] == tid)
			return true;
	return false;
}

static int wait_stop(pid_t tid)
{
	struct timespec ts = { 0, 1000000 };
	int st, i;

	for (i = 0; i < 3000; i++) {
		pid_t r = waitpid(tid, &st, __WALL | WNOHANG);

		if (r == tid)
			return WIFSTOPPED(st) ? 0 : -ESRCH;
		if (r < 0)
			return -errno;
		nanosleep(&ts, NULL);
	}
	return -ETIMEDOUT;
}

static void world_resume(struct world *w)
{
	for (int i = 0; i < w->n; i++)
		ptrace(PTRACE_DETACH, w->tids[i], NULL, NULL);
	w->n = 0;
}

/* Stops every thread of pid, including threads started while we stop the others. */
static int world_stop(pid_t pid, struct world *w)
{
	char path[64];
	bool added;
	int err;

	w->n = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	do {
		struct dirent *d;
		DIR *dir = opendir(path);

		if (!dir) {
			err = -errno;
			goto fail;
		}
		added = false;
		while ((d = readdir(dir))) {
			pid_t tid = (pid_t)atoi(d->d_name);

			if (tid <= 0 || stopped_already(w, tid))
				continue;
			if (w->n == MAX_TASKS) {
				closedir(dir);
				err = -E2BIG;
				goto fail;
			}
			if (ptrace(PTRACE_SEIZE, tid, NULL, NULL)) {
				if (errno == ESRCH)
					continue; /* exited meanwhile */
				err = -errno;
				closedir(dir);
				goto fail;
			}
			w->tids[w->n++] = tid;
			added = true;
			if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) || wait_stop(tid))
				dlog("thread %d did not stop (exiting?)", tid);
		}
		closedir(dir);
	} while (added);
	return 0;
fail:
	world_resume(w);
	return err;
}

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
	static struct world w;
	int err = 0, i, j;

	if (!o->bpf.PyInterpreterState_eval_frame)
		return 0;
	err = world_stop(t->pid, &w);
	if (err)
		return err;
	for (interp = first_interp(t), i = 0; interp && i < MAX_HOOKED_INTERPS && !err; i++) {
		err = switch_interp(t, h, interp);
		if (proc_read(t->pid, interp + o->PyInterpreterState_threads_head, &tstate,
			      sizeof(tstate)))
			tstate = 0;
		for (j = 0; o->c_recursion_bonus && tstate && j < MAX_TASKS && !err; j++) {
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
	world_resume(&w);
	return err;
}

void hook_request(struct hook_state *h, const struct ev_request *r)
{
	switch (r->what) {
	case REQ_HOOK_SETTER:
	case REQ_HOOK_ENTRY:
		if (listed(h->interp, h->n, r->addr)) {
			/* it held our value: the target reset it */
			if (r->what == REQ_HOOK_SETTER)
				h->resets_setter++;
			else
				h->resets_entry++;
		}
		if (!listed(h->pending_interp, h->npending_interp, r->addr) &&
		    h->npending_interp < MAX_PENDING)
			h->pending_interp[h->npending_interp++] = r->addr;
		break;
	case REQ_RECURSION:
		if (h->npending_tstate < MAX_PENDING) {
			h->pending_tstate[h->npending_tstate] = r->addr;
			h->pending_tid[h->npending_tstate++] = r->tid;
		}
		break;
	}
}

int hook_service(const struct py_target *t, struct hook_state *h)
{
	static struct world w;
	int err, i;

	if (!h->npending_interp && !h->npending_tstate)
		return 0;
	err = world_stop(t->pid, &w);
	if (err)
		return err;
	for (i = 0; i < h->npending_interp && !err; i++)
		err = switch_interp(t, h, h->pending_interp[i]);
	for (i = 0; i < h->npending_tstate && !err; i++)
		err = raise_budget(t, h, h->pending_tstate[i], h->pending_tid[i]);
	h->npending_interp = h->npending_tstate = 0;
	world_resume(&w);
	return err;
}

int hook_restore(const struct py_target *t, struct hook_state *h)
{
	unsigned slot_off = t->offsets->bpf.PyInterpreterState_eval_frame;
	uint64_t cur, zero = 0;
	static struct world w;
	int i, err, restored = 0;

	if (!slot_off || !h->n || proc_alive(t->pid))
		return 0;
	err = world_stop(t->pid, &w);
	if (err)
		return err;
	for (i = 0; i < h->n; i++) {
		/* only our own value: a hook someone installed since then stays theirs */
		if (proc_read(t->pid, h->interp[i] + slot_off, &cur, sizeof(cur)) ||
		    cur != t->eval_addr)
			continue;
		if (!proc_write(t->pid, h->interp[i] + slot_off, &zero, sizeof(zero)))
			restored++;
	}
	world_resume(&w);
	return restored;
}

void hook_state_free(struct hook_state *h)
{
	u64_map_free(&h->raised);
}
