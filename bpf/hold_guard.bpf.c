// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The guard of a hold (user/inject/hold_guard.c): while pyuprof has a target stopped, a thread asleep
 * in a system call is left asleep rather than interrupted (an interrupt ends epoll_wait and a
 * few others with EINTR: signal(7)), and stops here instead, should it wake before the hold
 * ends: at its system call's exit, before any instruction of its own, by REQUEST_SIGNAL, which
 * user space takes as its own stop and never passes on.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "pyuprof.h" /* REQUEST_SIGNAL */

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define GUARD_MAX_THREADS 4096

/* tid -> its tgid: asleep in a held process; set and cleared by user space around a hold
 * (the tgid, so that a tid given to a thread of another process after ours ended is not it) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GUARD_MAX_THREADS);
	__type(key, __u32);
	__type(value, __u32);
} armed SEC(".maps");

/* tid -> its tgid: sent REQUEST_SIGNAL here; cleared by user space only, as it takes that
 * stop (so a signal sent while user space disarmed the thread is still known to be ours) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GUARD_MAX_THREADS);
	__type(key, __u32);
	__type(value, __u32);
} sent SEC(".maps");

#define REQUEST_BIT (1ULL << (REQUEST_SIGNAL - 1))

/* threads that woke armed but could not be sent REQUEST_SIGNAL (blocked: it would stay
 * pending; or failed): they ran on, and user space hears of it (missed) */
__u64 guard_missed = 0;

/* tid -> its tgid: woke armed and was not stopped (guard_missed) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GUARD_MAX_THREADS);
	__type(key, __u32);
	__type(value, __u32);
} missed SEC(".maps");

SEC("raw_tp/sys_exit")
int BPF_PROG(guard_exit)
{
	struct task_struct *task;
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, tgid = id >> 32, *v;

	v = bpf_map_lookup_elem(&armed, &tid);
	if (!v || *v != tgid)
		return 0;
	bpf_map_delete_elem(&armed, &tid); /* one signal a hold */
	task = bpf_get_current_task_btf();
	if (BPF_CORE_READ(task, blocked.sig[0]) & REQUEST_BIT) {
		bpf_map_update_elem(&missed, &tid, &tgid, BPF_ANY);
		__sync_fetch_and_add(&guard_missed, 1);
		return 0;
	}
	/* the target's own REQUEST_SIGNAL already pending: it stops for that one, which user
	 * space passes on (one sent here would merge with it, and be taken as ours) */
	if ((BPF_CORE_READ(task, pending.signal.sig[0]) |
	     BPF_CORE_READ(task, signal, shared_pending.signal.sig[0])) & REQUEST_BIT)
		return 0;
	if (bpf_map_update_elem(&sent, &tid, &tgid, BPF_ANY)) {
		bpf_map_update_elem(&missed, &tid, &tgid, BPF_ANY);
		__sync_fetch_and_add(&guard_missed, 1);
		return 0;
	}
	if (bpf_send_signal_thread(REQUEST_SIGNAL)) {
		bpf_map_delete_elem(&sent, &tid);
		bpf_map_update_elem(&missed, &tid, &tgid, BPF_ANY);
		__sync_fetch_and_add(&guard_missed, 1);
	}
	return 0;
}

/* What user space cannot read of a thread unless it is stopped: its FS base (x86-64: its
 * pthread_self()), and every mask that may be its own once its system call returns (one that
 * sleeps with a temporary mask, as ppoll and sigtimedwait set, gets its own back then) */
__u32 query_tid = 0;
__u64 query_fs_base = 0;
__u64 query_masks = 0;

extern struct task_struct *bpf_task_from_pid(s32 pid) __ksym;
extern void bpf_task_release(struct task_struct *p) __ksym;

SEC("syscall")
int thread_query(void *ctx)
{
	struct task_struct *task = bpf_task_from_pid(query_tid);

	if (!task)
		return 1;
	query_fs_base = BPF_CORE_READ(task, thread.fsbase);
	query_masks = BPF_CORE_READ(task, blocked.sig[0]) | BPF_CORE_READ(task, real_blocked.sig[0]) |
		      BPF_CORE_READ(task, saved_sigmask.sig[0]);
	bpf_task_release(task);
	return 0;
}
