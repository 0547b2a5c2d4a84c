/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The batch mode's new threads, held without a clone stop (user/inject/ptrace_hold.h,
 * async_threads): each thread the target starts is told to user space here, as it is made,
 * and seized then (PTRACE_SEIZE does not stop it). Until it is, no request signals it
 * (held_by_us, hook_watch.bpf.h).
 *
 * One thing needs it seized before it runs Python: a thread of threading whose class has no
 * name path yet stops at its bootstrap while user space reads its name (REQ_THREAD_NAME),
 * which only a traced thread can. So the thread that starts it is stopped here instead, on its
 * way back from clone(), holding the GIL (the new thread cannot run Python until it lets go):
 * user space seizes the new thread and learns the class's path from the Thread it starts (the
 * first local of the frame it runs, Thread.start's self) meanwhile. Each class stops its first
 * start so, as the first Thread of each class stopped before; a start whose frame does not
 * show a Thread of a class known (another thread staged since, a thread started from C) stops
 * too.
 */
#ifndef __PYUPROF_THREAD_BIRTHS_BPF_H
#define __PYUPROF_THREAD_BIRTHS_BPF_H

/* the target's new threads, as they are made: struct thread_birth */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 10);
} births SEC(".maps");

/* user space is woken for a birth at most once in BIRTH_WAKE_NS (each wake-up of its, on the
 * few CPUs of a VM, costs the target's thread start as much as the clone stop did); it looks
 * for those not woken for as often meanwhile (user/record/session_loop.c) */
#define BIRTH_WAKE_NS 2000000ULL
__u64 births_woke_ns = 0;

/* births the ring had no room for: seized at the next stop instead (ptrace_hold__stop) */
__u64 births_lost = 0;
/* Set by user space once it reads the ring (a starter stopped for a birth nobody reads would
 * have its REQUEST_SIGNAL taken for the target's) */
__u32 births_read = 0;

/* The Thread the calling thread starts, if its running frame, the one it entered last
 * through the batch path, is a method's; 0 if not known. */
static __always_inline __u64 starting_self(void)
{
	__u64 top = 0, self = 0;
	__u32 owner = 0;

	if (!stage_addr || !key_off ||
	    bpf_probe_read_user(&owner, sizeof(owner), (void *)(stage_addr + STAGE_OWNER)) ||
	    owner != own_ns_tid() ||
	    bpf_probe_read_user(&top, sizeof(top), (void *)(stage_addr + STAGE_TOP)) || !top ||
	    bpf_probe_read_user(&self, sizeof(self), (void *)(top + localsplus_off)))
		return 0;
	return self & ~(__u64)off.stackref_tags;
}

/* Where glibc keeps the mask a new thread starts with in its thread block (user/target/
 * thread_block.h): pthread_create's caller's own, which the clone does not run with */
const volatile __u32 sigmask_off = 0;

/* Whether the starter blocks REQUEST_SIGNAL (the signal would wait, pending, while it runs
 * on): pthread_create makes the clone with every signal blocked, and the mask it goes back to
 * is the one it gave the new thread (checked where its block is glibc's: its self pointer) */
static __always_inline bool starter_blocks(struct task_struct *child)
{
	__u64 mask = BPF_CORE_READ(bpf_get_current_task_btf(), blocked.sig[0]);
	__u64 all = ~((1ULL << (9 - 1)) | (1ULL << (19 - 1))); /* but SIGKILL, SIGSTOP */
	__u64 fs = BPF_CORE_READ(child, thread.fsbase), self = 0;

	if ((mask & all) != all)
		return mask & (1ULL << (REQUEST_SIGNAL - 1));
	if (!sigmask_off || !fs || bpf_probe_read_user(&self, sizeof(self), (void *)(fs + 16)) ||
	    self != fs || bpf_probe_read_user(&mask, sizeof(mask), (void *)(fs + sigmask_off)))
		return true;
	return mask & (1ULL << (REQUEST_SIGNAL - 1));
}

/* Whether self is a Thread of a class whose name path the BPF side has */
static __always_inline bool class_known(__u64 self)
{
	__u64 type = 0;

	return self && !bpf_probe_read_user(&type, sizeof(type), (void *)(self + ob_type_off)) &&
	       bpf_map_lookup_elem(&thread_name_paths, &type);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(thread_born, struct task_struct *parent, struct task_struct *child)
{
	__u32 tgid = parent->tgid;
	struct thread_birth *b;
	__u64 self, now;
	bool wake;

	if (!births_on || !births_read || tgid != targ_tgid || child->tgid != tgid)
		return 0;
	b = bpf_ringbuf_reserve(&births, sizeof(*b), 0);
	if (!b) {
		__sync_fetch_and_add(&births_lost, 1);
		return 0;
	}
	self = starting_self();
	b->tid = child->pid;
	b->creator = parent->pid;
	b->self = self;
	b->pad = 0;
	/* (current is the parent) */
	b->signalled = signal_requests && !class_known(self) && held_by_us(parent) &&
		       !starter_blocks(child) && !bpf_send_signal_thread(REQUEST_SIGNAL);
	now = bpf_ktime_get_ns();
	wake = b->signalled || now - births_woke_ns >= BIRTH_WAKE_NS;
	if (wake)
		births_woke_ns = now;
	bpf_ringbuf_submit(b, wake ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
	return 0;
}

#endif /* __PYUPROF_THREAD_BIRTHS_BPF_H */
