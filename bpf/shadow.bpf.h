/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Each thread's shadow of its activations of the eval function (task storage), and what it
 * answers without a read of the target: the caller chain of a call from the top, the thread's
 * current interpreter.
 */
#ifndef __PYUPROF_SHADOW_BPF_H
#define __PYUPROF_SHADOW_BPF_H

/* 0 where exits come from the USDT probe, which also fires for frames run inline */
const volatile __u32 use_shadow = 0;

/*
 * Each thread's activations of the eval function, pushed at entry and popped at ret, with
 * what walking the frame chain from each one gives. A call made from the frame on top (nearly
 * always) takes its chain from here instead of reading the caller frames from the target (two
 * reads, about 160 ns per call); what it records is the same either way. The top SHADOW_CAP
 * activations are kept; below them the chain is read as before.
 */
#define SHADOW_CAP 32
struct shadow_frame {
	__u64 frame, code;			/* the activation's frame and code object */
	__u64 next; /* 3.11: where a frame it calls starts on the data stack (0: unknown) */
	__u64 cframe; /* 3.11, 3.12: its activation's _PyCFrame, once read (0: not yet) */
	__u64 caller, caller_code, caller_back; /* its own chain (<= 3.11) */
	__u64 tstate; /* its thread state (3.11+; 0: unknown): the thread's current one */
	__u32 depth;				/* its depth + 1; 0: its entry was not read */
	__u32 pad;
};

struct shadow {
	__u32 depth;
	__u32 pad;
	/* the frame the reader has on top of the thread's stack after its last event (the one
	 * entered, or returned to), 0: not known. A return of another frame (greenlet switched
	 * the thread's stack) names it first (EV_RESUME). */
	__u64 top;
	struct shadow_frame f[SHADOW_CAP];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct shadow);
} shadows SEC(".maps");

static __always_inline struct shadow *get_shadow(void)
{
	if (!use_shadow)
		return NULL;
	return bpf_task_storage_get(&shadows, bpf_get_current_task_btf(), 0,
				    BPF_LOCAL_STORAGE_GET_F_CREATE);
}

/* The activation on top, if its entry was read, else NULL. */
static __always_inline struct shadow_frame *shadow_top(struct shadow *sh)
{
	struct shadow_frame *f;

	if (!sh || !sh->depth)
		return NULL;
	f = &sh->f[(sh->depth - 1) & (SHADOW_CAP - 1)];
	/* depth tells an overwritten slot (SHADOW_CAP deeper) from the one wanted */
	return f->depth == sh->depth && f->frame ? f : NULL;
}

/* frame 0: an activation whose entry was not read; its ret still pops it. */
static __always_inline void shadow_push(struct shadow *sh, __u64 frame, __u64 code, __u64 next,
					const __u64 *chain, const __u64 *chain_code, __u64 back)
{
	struct shadow_frame *f;

	if (!sh)
		return;
	f = &sh->f[sh->depth & (SHADOW_CAP - 1)];
	sh->depth++;
	f->depth = frame ? sh->depth : 0;
	f->frame = frame;
	f->code = code;
	f->next = next;
	f->cframe = 0;
	f->caller = chain[0];
	f->caller_code = chain_code[0];
	f->caller_back = chain[1];
}

/*
 * Without the shadow (the batch mode: the calls it stages pass no program), each thread's
 * last thread state seen: at an entry with a probe of its own, or at a flush of its records.
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} thread_tstates SEC(".maps");

static __always_inline void note_tstate(__u64 tstate)
{
	__u64 *ts;

	if (use_shadow || !tstate)
		return;
	ts = bpf_task_storage_get(&thread_tstates, bpf_get_current_task_btf(), 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (ts)
		*ts = tstate;
}

/*
 * The interpreter of the thread's current thread state, from its innermost activation (or its
 * last thread state seen), or 0 (not known: user space then acts on every interpreter, with
 * the whole process stopped).
 */
static __always_inline __u64 current_interp(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct shadow *sh = use_shadow ? bpf_task_storage_get(&shadows, task, 0, 0) : NULL;
	struct shadow_frame *top = shadow_top(sh);
	__u64 interp = 0, tstate = top ? top->tstate : 0, *ts;

	if (!use_shadow) {
		ts = bpf_task_storage_get(&thread_tstates, task, 0, 0);
		tstate = ts ? *ts : 0;
	}
	if (tstate)
		read_user(&interp, sizeof(interp), tstate + off.PyThreadState_interp);
	return interp;
}

#endif /* __PYUPROF_SHADOW_BPF_H */
