/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Asking user space to act on the target, which BPF cannot write (lockdown): keeping the
 * eval_frame hook in place (3.11+; the trampoline on <= 3.10, through note_direct), from the
 * entries and from probes on the two functions that reset it.
 */
#ifndef __PYUPROF_HOOK_WATCH_BPF_H
#define __PYUPROF_HOOK_WATCH_BPF_H

/* the trampoline, or &_PyEval_EvalFrameDefault (3.11+): set with targ_tgid */
__u64 hook_value = 0;

/* How long an interpreter's eval_frame, once found switched, is not read again at entries */
#define HOOK_CHECK_NS 1000000ULL

/* Set by user space: while 1, an interpreter found with a NULL eval_frame is reported. */
__u32 hook_enabled = 0;
/* Set by user space while it holds the target: a thread that asks is stopped by a signal */
__u32 signal_requests = 0;
/* Set by user space (trampoline, <= 3.10): a call that bypasses the trampoline asks for the
 * hook to be set, as a NULL eval_frame does on 3.11+ */
__u32 tramp_watch = 0;

/* interpreter -> time of our last request to switch its eval_frame (one at a time) */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MAX_INTERPRETERS);
	__type(key, __u64);
	__type(value, __u64);
} hook_requests SEC(".maps");

/* tid -> interp argument of a pending _PyInterpreterState_SetEvalFrameFunc call */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} setter_args SEC(".maps");

/* tid -> activate argument of a pending _PyPerfTrampoline_Init call */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} perf_init_args SEC(".maps");

/* Set by user space while new threads are seized late, not held by a clone stop (then
 * pidns_ino is 0: pyuprof's ids are the kernel's): bpf/thread_births.bpf.h */
__u32 births_on = 0;
/* pyuprof's process: a thread traced by one of its threads is held (task->parent, traced) */
__u32 tracer_tgid = 0;

/* Whether task is traced by pyuprof: always, unless new threads are seized late (births_on);
 * a signal sent to a thread not traced would reach the target */
static __always_inline bool held_by_us(struct task_struct *task)
{
	return !births_on ||
	       (BPF_CORE_READ(task, ptrace) && BPF_CORE_READ(task, parent, tgid) == tracer_tgid);
}

/*
 * Whether the calling thread blocks REQUEST_SIGNAL (pthread_sigmask: a program that keeps its
 * signals to one thread blocks them in the others). Sent, it would wait there, pending, while
 * the thread runs on: a request it made would be done late, and a full ring's records, which
 * the thread goes on to write over, read wrong.
 */
static __always_inline bool request_signal_blocked(void)
{
	struct task_struct *task = bpf_get_current_task_btf();

	return BPF_CORE_READ(task, blocked.sig[0]) & (1ULL << (REQUEST_SIGNAL - 1));
}

/*
 * Asks user space for what. The thread is sent REQUEST_SIGNAL while user space holds the
 * target: the signal is taken on the way back to user mode, so this thread runs no further
 * instruction of the target before user space has done the request. A thread that blocks the
 * signal, or that pyuprof does not trace yet (bpf/thread_births.bpf.h), is not sent it: user
 * space does its request with the whole process stopped, later.
 * With must_stop, a request whose thread cannot be stopped so is not sent. Returns whether
 * the thread was signalled.
 */
static __always_inline bool send_request(__u64 addr, __u32 what, __u32 tid, __u64 now,
					 bool must_stop)
{
	struct ev_request *e;
	bool signalled, blocked = signal_requests && request_signal_blocked();
	bool held = held_by_us(bpf_get_current_task_btf());

	if (blocked)
		__sync_fetch_and_add(&exit_stats.signal_blocked, 1);
	else if (signal_requests && !held)
		__sync_fetch_and_add(&exit_stats.signal_unheld, 1);
	if (must_stop && (!signal_requests || blocked || !held))
		return false;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		if (!must_stop) /* (else its caller does without) */
			__sync_fetch_and_add(&stats.lost_requests, 1);
		return false;
	}
	e->type = EV_REQUEST;
	e->tid = tid;
	e->ts_ns = now;
	e->addr = addr;
	e->what = what;
	/* (a thread not traced yet is not: the signal would reach the target) */
	signalled = signal_requests && !blocked && held && !bpf_send_signal_thread(REQUEST_SIGNAL);
	e->signalled = signalled;
	if (must_stop && !signalled) {
		bpf_ringbuf_discard(e, 0);
		return false;
	}
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
	return signalled;
}

static __always_inline void request(__u64 addr, __u32 what, __u32 tid, __u64 now)
{
	send_request(addr, what, tid, now, false);
}

/*
 * Keeps interp->eval_frame at _PyEval_EvalFrameDefault while recording (3.11+): a NULL found
 * here is reported to user space, which writes the value with the target stopped. A non-NULL
 * value that is not ours belongs to someone else (a PEP 523 user such as Dynamo): leave it;
 * the frames it evaluates still come through our probes. Returns whether a hook is in place.
 */
static __always_inline bool keep_hook(__u64 interp, __u32 what, __u32 tid, __u64 now)
{
	__u64 cur, *last;

	if (!hook_enabled || !interp)
		return false;
	if (read_user(&cur, sizeof(cur), interp + off.PyInterpreterState_eval_frame))
		return false;
	if (cur) {
		if (cur != hook_value)
			__sync_fetch_and_add(&stats.foreign_hook, 1);
		return true;
	}
	last = bpf_map_lookup_elem(&hook_requests, &interp);
	if (last && what == REQ_HOOK_ENTRY && now - *last < REQUEST_RETRY_NS)
		return false; /* asked already; user space is on it */
	bpf_map_update_elem(&hook_requests, &interp, &now, BPF_ANY);
	request(interp, what, tid, now);
	return false;
}

/*
 * Whether an entry must read its interpreter's eval_frame: a read per call costs ~90 ns, so a
 * hook found in place is trusted for HOOK_CHECK_NS on this CPU for this thread state (whose
 * interpreter never changes). Resets through the setter or the perf trampoline are seen by
 * their own probes at once; this check is for a value written directly.
 */
static __always_inline bool hook_check_due(const struct entry_cache *cc, __u64 tstate, __u64 now)
{
	return off.PyInterpreterState_eval_frame && hook_enabled &&
	       !(cc && cc->hook.tstate == tstate && now - cc->hook.ns < HOOK_CHECK_NS);
}

/* _PyInterpreterState_SetEvalFrameFunc(interp, func): remember interp for the return probe. */
static __noinline int set_eval_frame(struct pt_regs *ctx)
{
	__u64 interp = PT_REGS_PARM1(ctx);
	__u32 tid = current_tid();

	if (tid)
		bpf_map_update_elem(&setter_args, &tid, &interp, BPF_ANY);
	return 0;
}

/*
 * At each ret of the setter: if it stored NULL (a PEP 523 user turning itself off; 3.11+ also
 * turns "set to the default evaluator" into NULL), ask for our value back at once.
 */
static __noinline int set_eval_frame_ret(void)
{
	__u32 tid = current_tid();
	__u64 *interp;

	if (!tid)
		return 0;
	interp = bpf_map_lookup_elem(&setter_args, &tid);
	if (!interp)
		return 0;
	keep_hook(*interp, REQ_HOOK_SETTER, tid, bpf_ktime_get_ns());
	bpf_map_delete_elem(&setter_args, &tid);
	return 0;
}

/*
 * _PyPerfTrampoline_Init(activate) (3.12+, sys.activate_stack_trampoline and -X perf) refuses
 * to start while the calling thread's interpreter has any eval_frame hook, ours included:
 * withdraw ours there first (from that one only: the other interpreters keep theirs). The
 * trampoline's own hook keeps inlining off; when it goes, the setter probe switches ours back.
 */
static __noinline int perf_trampoline_init(struct pt_regs *ctx)
{
	__u32 tid = current_tid();
	__u64 arg = (int)PT_REGS_PARM1(ctx);

	if (!tid)
		return 0;
	if (arg && hook_enabled)
		request(current_interp(), REQ_HOOK_YIELD, tid, bpf_ktime_get_ns());
	bpf_map_update_elem(&perf_init_args, &tid, &arg, BPF_ANY);
	return 0;
}

/*
 * A build stripped of _PyPerfTrampoline_Init's symbol: where (each copy of) it reads eval_frame
 * to refuse any hook but its own, turning on or off. Ours is withdrawn there; a trampoline
 * turned on brings its own hook; turned off, it puts back the one it found (NULL) through the
 * setter, whose probe switches ours back.
 */
static __noinline int perf_trampoline_check(void)
{
	__u32 tid = current_tid();

	if (tid && hook_enabled)
		request(current_interp(), REQ_HOOK_YIELD, tid, bpf_ktime_get_ns());
	return 0;
}

/* Its ret: turning the trampoline off stores NULL directly (3.12), past the setter probe. */
static __noinline int perf_trampoline_init_ret(void)
{
	__u32 tid = current_tid();
	__u64 *activate;

	if (!tid)
		return 0;
	activate = bpf_map_lookup_elem(&perf_init_args, &tid);
	if (!activate)
		return 0;
	if (!*activate && hook_enabled)
		request(current_interp(), REQ_HOOK_SETTER, tid, bpf_ktime_get_ns());
	bpf_map_delete_elem(&perf_init_args, &tid);
	return 0;
}

#endif /* __PYUPROF_HOOK_WATCH_BPF_H */
