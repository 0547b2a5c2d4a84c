/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What every part of the BPF side shares: the target's identity (set by user space before
 * anything is attached) and layout (before the load), the counters user space reads, the ring buffer, and how the target is read.
 * Included once, by pyuprof.bpf.c, like the other *.bpf.h parts: they define the object's maps
 * and globals, so the skeleton sees one program.
 */
#ifndef __PYUPROF_TARGET_BPF_H
#define __PYUPROF_TARGET_BPF_H

const volatile struct py_offsets off = {};
/* as pyuprof sees it: in its own PID namespace. Set after the load, before anything is attached
 * (0 until then: no thread's), so that the object can load before the target is known or
 * stopped, or for the next process (probes.h: probes__aim) */
__u32 targ_tgid = 0;
/* pyuprof's PID namespace (nsfs device and inode) when it is not the initial one, else 0 */
const volatile __u64 pidns_dev = 0, pidns_ino = 0;
const volatile __u32 cpu_clock = 0; /* --clock cpu: events carry the thread's CPU time */

/* What the programs count, read by user space (and written into the raw format) */
struct pyuprof_stats stats = {};
struct pyuprof_exit_stats exit_stats = {};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, DEFAULT_RINGBUF_MB << 20);
} events SEC(".maps");

/*
 * Waking the consumer for every record costs more than the record itself (an interrupt raised
 * in the target's thread: on a VM an exit to the host, 2-5 µs), and a wake-up from the target's
 * thread tends to bring the consumer onto that thread's CPU, where it takes turns with the
 * target: the consumer reads on its own every POLL_MS (session.c), and is woken by the
 * record (or the last of the records) that filled the ring past a quarter, len bytes of it
 * (RB_BYTES). A consumer that sleeps went to sleep on an empty ring (its poll returns at once
 * while records wait), so until it wakes the data only grows and crosses the quarter once; one
 * that is awake needs no wake-up. (Two CPUs whose records cross it together may both miss it:
 * the consumer's own timer reads them.)
 */
#define RB_BYTES(size) ((((__u64)(size) + 7) & ~7ULL) + BPF_RINGBUF_HDR_SZ)

static __always_inline __u64 wakeup_flags(__u64 len)
{
	__u64 avail = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);
	__u64 quarter = bpf_ringbuf_query(&events, BPF_RB_RING_SIZE) / 4;

	return avail >= quarter && avail - len < quarter ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

/*
 * A field of a window read from the target (the windows: include/py_offsets.h). The mask gives
 * the verifier a bound; it never changes an offset of the table, which the build checks to fit
 * its window (py_layouts__check_windows).
 */
#define FIELD_MASK 0x7f
#define FIELD(buf, o, type) (*(type *)((char *)(buf) + ((o) & FIELD_MASK)))
_Static_assert(FRAME_WINDOW <= FIELD_MASK + 1 && CODE_WINDOW <= FIELD_MASK + 1 &&
		       TSTATE_WINDOW <= FIELD_MASK + 1 && STR_WINDOW <= FIELD_MASK + 1,
	       "a window larger than FIELD's mask");

/* The current thread's id as pyuprof sees it, if it is the target's, else 0. */
static __always_inline __u32 current_tid(void)
{
	struct bpf_pidns_info ns;
	__u64 id;

	if (pidns_ino) {
		/* run inside a container: the ids of the namespace pyuprof was given them in */
		if (bpf_get_ns_current_pid_tgid(pidns_dev, pidns_ino, &ns, sizeof(ns)))
			return 0;
		return ns.tgid == targ_tgid ? ns.pid : 0;
	}
	id = bpf_get_current_pid_tgid();
	if ((id >> 32) != targ_tgid)
		return 0;
	return (__u32)id;
}

static __always_inline int read_user(void *dst, __u32 size, __u64 src)
{
	if (!src || bpf_probe_read_user(dst, size, (const void *)src)) {
		__sync_fetch_and_add(&stats.read_fail, 1);
		return -1;
	}
	return 0;
}

/*
 * --clock cpu: a thread's CPU time, as its run slices add up. The scheduler's own figures are in
 * its clock_task, one per CPU, which lags the monotonic clock by that CPU's stolen time (steal,
 * on a VM): measured here, the two CPUs' lags differed by 206 ms, so that sum_exec_runtime +
 * (now - exec_start), read on the CPU a thread runs on, jumped by that much when it woke on
 * the other one (a 0.3 s sleep charged 0.147 s, the no-harm issue's calibration point). So the
 * slice a thread runs in is timed by the monotonic clock alone, from its start
 * (cpu_switch_in), and the slices before it by the scheduler's sum of them: nothing of two
 * clocks is ever subtracted. cpu_switch_in can miss a slice's start (seen: 1 recording in 20 of
 * sleep_compute.py on 3.10, on a loaded machine, charged the whole 0.3 s sleep; the likely
 * cause: bpf_task_storage_get gives nothing while the per-CPU storage lock is held by another
 * program on that CPU). Such a slice is told by the thread's switch count and timed from the
 * event that finds it, as a thread's first: its part before that event (at most a scheduler
 * tick: the sum is brought up to date at each) is left out, never a sleep charged.
 */
struct cpu_slice {
	__u64 sum_in; /* the thread's CPU time when its slice began (sum_exec_runtime) */
	__u64 at;     /* the monotonic time it began (0: not seen: its first event) */
	__u64 last;   /* the last time given: never less */
	__u64 switches; /* the thread's context switches (nvcsw + nivcsw) when its slice began */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct cpu_slice);
} cpu_slices SEC(".maps");

/* The target's tgid as the kernel's first PID namespace has it (its threads' task->tgid), set
 * by their first event: cpu_switch_in knows them by it. */
__u32 targ_tgid_root = 0;

/* tests: cpu_switch_in notes no slice, as when the task storage is busy at every switch */
const volatile __u32 test_miss_switch_in = 0;

static __always_inline __u64 event_ts(__u64 now)
{
	struct task_struct *task;
	struct cpu_slice *s;
	__u64 ts, switches;

	if (!cpu_clock)
		return now;
	task = bpf_get_current_task_btf();
	if (!targ_tgid_root)
		targ_tgid_root = task->tgid;
	s = bpf_task_storage_get(&cpu_slices, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!s)
		return 0; /* (no memory: the thread's previous time, profile/stacks.c) */
	/* a slice whose start was not seen (running when recording began, or cpu_switch_in
	 * found the storage busy): from here, less at most a tick of it */
	switches = task->nvcsw + task->nivcsw;
	if (!s->at || s->switches != switches) {
		s->sum_in = task->se.sum_exec_runtime;
		s->at = now;
		s->switches = switches;
	}
	ts = s->sum_in + (now - s->at);
	if (ts < s->last) /* (the stolen time of a slice, which the next one's sum leaves out) */
		ts = s->last;
	s->last = ts;
	return ts;
}

/* --clock cpu: a thread of the target's begins a run slice (scheduled in). */
SEC("tp_btf/sched_switch")
int BPF_PROG(cpu_switch_in, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct cpu_slice *s;

	if (!targ_tgid_root || next->tgid != targ_tgid_root || test_miss_switch_in)
		return 0;
	s = bpf_task_storage_get(&cpu_slices, next, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (s) {
		s->sum_in = next->se.sum_exec_runtime;
		s->at = bpf_ktime_get_ns();
		/* (its count went up as it last left a CPU, __schedule: it stays until it leaves) */
		s->switches = next->nvcsw + next->nivcsw;
	}
	return 0;
}

#endif /* __PYUPROF_TARGET_BPF_H */
