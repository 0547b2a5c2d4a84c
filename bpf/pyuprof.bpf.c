// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Kernel side of pyuprof: probes on CPython's activations of _PyEval_EvalFrameDefault in one
 * target process. Where the probe trampoline is placed (user/tramp.c), entries and returns come
 * from its two 5-byte nops, which the kernel turns into calls without a trap; calls that bypass
 * it come from the function's own entry and a uretprobe. Otherwise from the entry and every ret
 * instruction (single-stepped: ~10 us a hit), or Debian's USDT frame exits. Entries carry the
 * code object and the caller's frame; returns carry only a timestamp (user space matches them
 * with a shadow stack). Each code
 * object's identity (filename, name, first line) crosses the ring buffer once. On 3.11+ the
 * programs also watch the interpreter's eval_frame hook, which user space keeps switched to the
 * default evaluator so that CPython does not run Python-to-Python calls inline, unseen.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "pyuprof.h"
#include "py_offsets.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile struct py_offsets off = {};
const volatile __u32 targ_tgid = 0; /* as pyuprof sees it: in its own PID namespace */
/* pyuprof's PID namespace (nsfs device and inode) when it is not the initial one, else 0 */
const volatile __u64 pidns_dev = 0, pidns_ino = 0;
const volatile __u64 hook_value = 0; /* the trampoline, or &_PyEval_EvalFrameDefault (3.11+) */
const volatile __u32 ob_type_off = 8, tp_name_off = 24; /* PyObject.ob_type, tp_name */
const volatile __u32 want_recursion_bonus = 0; /* 3.12: ask for each thread's budget raise */
/* 3.13: PyHeapTypeObject._spec_cache.init and PyFunctionObject.func_code */
const volatile __u32 spec_cache_init_off = 0, func_code_off = 0;
/* 3.12+: each activation of the eval function links its frame to a C-stack entry frame */
const volatile __u32 entry_shim = 0;
/* 0 where exits come from the USDT probe, which also fires for frames run inline */
const volatile __u32 use_shadow = 0;
/* 3.11: words of a _PyInterpreterFrame before its locals (CPython's FRAME_SPECIALS_SIZE) */
const volatile __u32 frame_specials = 0;
const volatile __u32 localsplus_off = 0; /* the frame's first local (self of a method) */
/* bench only (PYUPROF_BENCH_COUNT_ONLY): every probe only counts, the floor of its placement */
const volatile __u32 count_only = 0;
__u64 count_only_hits = 0;
const volatile __u32 qualname_off = 0; /* 3.11+: PyCodeObject.co_qualname; 0 = none */
const volatile __u32 cpu_clock = 0; /* --clock cpu: events carry the thread's CPU time */

/* How long an interpreter's eval_frame, once found switched, is not read again at entries */
#define HOOK_CHECK_NS 1000000ULL

/* Set by user space: while 1, an interpreter found with a NULL eval_frame is reported. */
__u32 hook_enabled = 0;
/* Set by user space while it holds the target: a thread that asks is stopped by a signal */
__u32 signal_requests = 0;
/* Set by user space (trampoline, <= 3.10): a call that bypasses the trampoline asks for the
 * hook to be set, as a NULL eval_frame does on 3.11+ */
__u32 tramp_watch = 0;
struct pyuprof_exit_stats exit_stats = {};
/* threading's _bootstrap and _bootstrap_inner, once seen (note_code): their self is sent */
__u64 bootstrap_codes[2] = {};
struct pyuprof_stats stats = {};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, DEFAULT_RINGBUF_MB << 20);
} events SEC(".maps");

/* code object address -> tag of its identity fields, to notice a new object at an old address */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MAX_CODE_OBJECTS);
	__type(key, __u64);
	__type(value, __u64);
} codes SEC(".maps");

/*
 * A per-CPU direct-mapped cache in front of codes, and of raised_tstates' last hit: an entry
 * looks up three code objects (its own, its caller's, their caller's), and a hash-map lookup
 * (hashing, bucket walk, LRU bookkeeping) costs several times an array access, which the
 * verifier inlines. A slot holds an address and its tag; a hit is what codes would answer.
 */
#define CODE_CACHE_SLOTS 512
struct entry_cache {
	__u64 addr[CODE_CACHE_SLOTS];
	__u64 tag[CODE_CACHE_SLOTS];
	struct {
		__u64 tstate, tid;
	} raised; /* the last thread state known to have its budget raised */
	struct {
		__u64 tstate, ns;
	} hook; /* the last thread state whose interpreter had a hook, and when it was read */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct entry_cache);
} entry_cache SEC(".maps");

static __always_inline __u32 cache_slot(__u64 addr)
{
	/* code objects are 16-byte aligned heap objects */
	return (__u32)((addr >> 4) ^ (addr >> 13)) & (CODE_CACHE_SLOTS - 1);
}

static __always_inline struct entry_cache *get_cache(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&entry_cache, &zero);
}

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

struct tstate_key {
	__u64 tstate;
	__u64 tid;
};

/* 3.12 thread states whose C recursion budget was already raised */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct tstate_key);
	__type(value, __u32);
} raised_tstates SEC(".maps");

/*
 * Waking the consumer for every record costs more than the record itself: wake it only once
 * this much is waiting (it also polls every 100 ms on its own).
 */
#define WAKEUP_BYTES (1 << 20)

static __always_inline __u64 wakeup_flags(void)
{
	return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= WAKEUP_BYTES ?
		       BPF_RB_FORCE_WAKEUP :
		       BPF_RB_NO_WAKEUP;
}

/* Enough of a frame for code, previous and owner on every version (frame_owner <= 70). */
#define FRAME_WINDOW 72
/* Enough of a code object for flags, firstlineno, filename and name (co_name <= 120). */
#define CODE_WINDOW 128
/* Enough of a thread state for interp, cframe and current_frame (<= 72). */
#define TSTATE_WINDOW 80
/* Enough of a str for length and state (state at 32). */
#define STR_WINDOW 40

#define FIELD(buf, o, type) (*(type *)((char *)(buf) + ((o) & 0x7f)))

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

/* A tag of the fields that make up a code object's identity. */
static __always_inline __u64 code_tag(const void *cw)
{
	return FIELD(cw, off.PyCodeObject_co_filename, __u64) * 31 ^
	       FIELD(cw, off.PyCodeObject_co_name, __u64) * 7 ^
	       (__u64)FIELD(cw, off.PyCodeObject_co_firstlineno, __s32);
}

/* Copies a str's characters raw (ASCII/Latin-1/UCS-2/UCS-4); returns the STR_* kind. */
static __always_inline __u8 copy_str(char *dst, __u32 cap, __u64 str, __u32 *len_out)
{
	__u64 sw[STR_WINDOW / 8];
	__u32 state, kind;
	__u64 data, n;
	__s64 len;

	*len_out = 0;
	if (read_user(sw, sizeof(sw), str))
		return STR_UNREADABLE;
	len = FIELD(sw, off.PyUnicode_length, __s64);
	state = FIELD(sw, off.PyUnicode_state, __u32);
	if (len < 0 || !(state & (1 << 5))) /* not compact: never seen for code names */
		return STR_UNREADABLE;
	kind = (state >> 2) & 7;
	if (state & (1 << 6)) {
		data = str + off.PyASCIIObject_size;
		kind = STR_ASCII;
	} else {
		data = str + off.PyCompactUnicodeObject_size;
	}
	n = (__u64)len * (kind ? kind : 1);
	*len_out = (__u32)len;
	if (n > cap)
		n = cap;
	/* re-check after the barrier, on the register the call uses, so the verifier sees
	 * the bound of the size it is given */
	barrier_var(n);
	if (n > cap)
		return STR_UNREADABLE;
	if (n && bpf_probe_read_user(dst, n, (void *)data)) {
		__sync_fetch_and_add(&stats.read_fail, 1);
		return STR_UNREADABLE;
	}
	return (__u8)kind;
}

/*
 * "_bootstrap" (slot 0) or "_bootstrap_inner" (slot 1) as copied, else -1. Only the name:
 * user space checks the file (threading.py) before it trusts what note_thread sends.
 */
static __always_inline int bootstrap_slot(const char *name, __u32 len, __u8 kind)
{
	const char want[] = "_bootstrap_inner";
	int i;

	if (kind != STR_ASCII || (len != 10 && len != 16))
		return -1;
	for (i = 0; i < 16; i++)
		if (i < len && name[i] != want[i])
			return -1;
	return len == 10 ? 0 : 1;
}

/*
 * A thread entering threading's bootstrap: its Thread (self) is sent at once, and the
 * consumer woken, so that user space reads the thread's name while the object still exists
 * (a short thread is gone long before a batched wake-up).
 */
static __always_inline void note_thread(__u64 frame, __u64 code, __u32 tid, __u64 now)
{
	struct ev_thread *e;
	__u64 self;

	if (bpf_probe_read_user(&self, sizeof(self), (void *)(frame + localsplus_off)) || !self)
		return;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		/* counted with the calls: struct pyuprof_stats is part of the raw format */
		__sync_fetch_and_add(&stats.lost_calls, 1);
		return;
	}
	e->type = EV_THREAD;
	e->tid = tid;
	e->ts_ns = now;
	e->code = code;
	e->self = self;
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
}

/* Sends the identity of the code object at addr (window cw already read), then remembers it. */
static __always_inline void note_code(__u64 addr, const void *cw, __u32 tid, __u64 now,
				      struct entry_cache *cc)
{
	__u64 tag = code_tag(cw), *known, type;
	__u32 slot = cache_slot(addr);
	struct ev_code *e;
	int bslot;

	if (cc && cc->addr[slot] == addr && cc->tag[slot] == tag)
		return;
	known = bpf_map_lookup_elem(&codes, &addr);
	if (known && *known == tag) {
		if (cc) {
			cc->addr[slot] = addr;
			cc->tag[slot] = tag;
		}
		return;
	}
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		/* not remembered: the next entry of this code object tries again */
		__sync_fetch_and_add(&stats.lost_codes, 1);
		return;
	}
	e->type = EV_CODE;
	e->tid = tid;
	e->ts_ns = now;
	e->code = addr;
	e->firstlineno = FIELD(cw, off.PyCodeObject_co_firstlineno, __s32);
	e->co_flags = FIELD(cw, off.PyCodeObject_co_flags, __u32);
	/* for user space's check that the layout fits: the type, while the object is alive */
	__builtin_memset(e->type_name, 0, sizeof(e->type_name));
	if (!bpf_probe_read_user(&type, sizeof(type), (void *)(addr + ob_type_off)) &&
	    !bpf_probe_read_user(&type, sizeof(type), (void *)(type + tp_name_off)))
		bpf_probe_read_user_str(e->type_name, sizeof(e->type_name), (void *)type);
	e->filename_kind = copy_str(e->filename, FILENAME_BYTES,
				    FIELD(cw, off.PyCodeObject_co_filename, __u64), &e->filename_len);
	e->name_kind = copy_str(e->name, FUNCNAME_BYTES, FIELD(cw, off.PyCodeObject_co_name, __u64),
				&e->name_len);
	/* beyond CODE_WINDOW, and read once per code object: a read of its own */
	e->qualname_len = 0;
	e->qualname_kind = STR_UNREADABLE;
	if (qualname_off && !read_user(&type, sizeof(type), addr + qualname_off))
		e->qualname_kind = copy_str(e->qualname, FUNCNAME_BYTES, type, &e->qualname_len);
	bslot = bootstrap_slot(e->name, e->name_len, e->name_kind);
	if (bslot >= 0)
		bootstrap_codes[bslot] = addr;
	/* submit before remembering, so an entry naming this code never precedes its identity */
	bpf_ringbuf_submit(e, wakeup_flags());
	bpf_map_update_elem(&codes, &addr, &tag, BPF_ANY);
	if (cc) {
		cc->addr[slot] = addr;
		cc->tag[slot] = tag;
	}
}

/* Whether the identity of the code object at addr was sent (its tag unchecked). */
static __always_inline bool code_known(__u64 addr, struct entry_cache *cc)
{
	__u32 slot = cache_slot(addr);

	if (cc && cc->addr[slot] == addr)
		return true;
	if (!bpf_map_lookup_elem(&codes, &addr))
		return false;
	if (cc) { /* its tag is not known here: the entry's own check refreshes it */
		cc->addr[slot] = addr;
		cc->tag[slot] = 0;
	}
	return true;
}

static __always_inline void request(__u64 addr, __u32 what, __u32 tid, __u64 now)
{
	struct ev_request *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		__sync_fetch_and_add(&stats.lost_requests, 1);
		return;
	}
	e->type = EV_REQUEST;
	e->tid = tid;
	e->ts_ns = now;
	e->addr = addr;
	e->what = what;
	/* the signal is taken on the way back to user mode: this thread runs no further
	 * instruction of the target before user space has done the request */
	e->signalled = signal_requests && !bpf_send_signal_thread(REQUEST_SIGNAL);
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
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

/*
 * 3.12 counts two units of its C recursion budget per Python call once calls are no longer
 * inlined, so a recursion that runs natively could raise RecursionError under us: ask for each
 * thread's budget to be raised once.
 */
static __always_inline void raise_recursion_budget(__u64 tstate, __u32 tid, __u64 now,
						   struct entry_cache *cc)
{
	struct tstate_key key = { .tstate = tstate, .tid = tid };
	__u32 one = 1;

	if (cc && cc->raised.tstate == tstate && cc->raised.tid == tid)
		return;
	if (!bpf_map_lookup_elem(&raised_tstates, &key)) {
		bpf_map_update_elem(&raised_tstates, &key, &one, BPF_ANY);
		request(tstate, REQ_RECURSION, tid, now);
	}
	if (cc) {
		cc->raised.tstate = tstate;
		cc->raised.tid = tid;
	}
}

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
	struct shadow_frame f[SHADOW_CAP];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct shadow);
} shadows SEC(".maps");

/* Each thread's pending uretprobes of ours: the kernel drops those past URETPROBE_DEPTH_MAX */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u32);
} uret_depth SEC(".maps");

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

/*
 * 3.11: where the next frame pushed on the thread's data stack would start, were it pushed
 * while this one (read into fw, its code into cw) is the last there: CPython's own size,
 * co_nlocalsplus + co_stacksize + the frame's fixed part, in words. 0 for a frame elsewhere (a
 * generator's), and on every other version: 3.12+ clears a returning frame inside its
 * activation, after pointing the thread at the activation's entry shim, so a __del__ run by
 * that clearing starts where a call from the frame would, called from the shim (seen in the
 * threads and asyncio fixtures); before 3.11 there is no data stack.
 */
static __always_inline __u64 next_frame(__u64 frame, const void *fw, const void *cw)
{
	__s64 words;

	if (!off.PyCodeObject_co_nlocalsplus || FIELD(fw, off.frame_owner, __u8) != 0)
		return 0;
	words = (__s64)FIELD(cw, off.PyCodeObject_co_nlocalsplus, __s32) +
		FIELD(cw, off.PyCodeObject_co_stacksize, __s32) + frame_specials;
	return words > 0 ? frame + words * 8 : 0;
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

/* The frame that was running when the eval function was entered (internals 9.3). */
static __always_inline __u64 caller_frame(const void *fw, const void *tw)
{
	__u64 cframe, caller = 0;

	switch (off.caller_mode) {
	case CALLER_FROM_F_BACK:
		return FIELD(fw, off.frame_back, __u64);
	case CALLER_FROM_TSTATE:
		return FIELD(tw, off.PyThreadState_current_frame, __u64);
	default:
		cframe = FIELD(tw, off.PyThreadState_cframe, __u64);
		if (cframe)
			read_user(&caller, sizeof(caller), cframe + off.PyCFrame_current_frame);
		return caller;
	}
}

/*
 * The timestamp of an event read at now (bpf_ktime_get_ns): that, or with --clock cpu the
 * thread's CPU time: what the scheduler has accounted to it, plus its current slice (it runs:
 * we are in its context). exec_start is the scheduler's clock (sched_clock, less IRQ time where
 * CONFIG_IRQ_TIME_ACCOUNTING is set), not ktime: their offset is constant between two events
 * of a slice and cancels in a call's duration; across slices the accounted sum carries on.
 */
static __always_inline __u64 event_ts(__u64 now)
{
	struct task_struct *task;

	if (!cpu_clock)
		return now;
	task = (struct task_struct *)bpf_get_current_task();
	return BPF_CORE_READ(task, se.sum_exec_runtime) + now - BPF_CORE_READ(task, se.exec_start);
}

/*
 * A call that bypassed the trampoline (direct): its return comes from a uretprobe, unless the
 * kernel's depth limit drops it. Returns the flags for its record. On <= 3.10 every call goes
 * through the hook, so a direct one means the hook is not the trampoline (not yet set after
 * the interpreter started, or someone else's): ask for it, as keep_hook does on 3.11+.
 */
static __always_inline __u32 note_direct(__u64 tstate, __u32 tid, __u64 now)
{
	__u32 *depth = bpf_task_storage_get(&uret_depth, bpf_get_current_task_btf(), 0,
					    BPF_LOCAL_STORAGE_GET_F_CREATE);
	__u64 interp = 0, *last;

	__sync_fetch_and_add(&exit_stats.direct_calls, 1);
	if (tramp_watch) {
		/* the interpreter from the thread state (3.9, 3.10); 0 (3.8): user space walks
		 * them all */
		if (tstate)
			read_user(&interp, sizeof(interp), tstate + off.PyThreadState_interp);
		last = bpf_map_lookup_elem(&hook_requests, &interp);
		if (!last || now - *last >= REQUEST_RETRY_NS) {
			bpf_map_update_elem(&hook_requests, &interp, &now, BPF_ANY);
			request(interp, REQ_HOOK_ENTRY, tid, now);
		}
	}
	if (!depth)
		return 0;
	if (*depth >= URETPROBE_DEPTH_MAX) {
		__sync_fetch_and_add(&exit_stats.uret_lost, 1);
		return CALL_NO_RETURN;
	}
	(*depth)++;
	return 0;
}

static __noinline int eval_entry(struct pt_regs *ctx, bool direct)
{
	/* 8-byte aligned: the verifier refuses misaligned stack loads */
	__u64 fw[FRAME_WINDOW / 8], tw[TSTATE_WINDOW / 8], cw[CODE_WINDOW / 8];
	__u64 arg0, arg1, frame, tstate, code, caller, back, now, next;
	__u64 chain[CHAIN_LEN] = {}, chain_code[CHAIN_LEN] = {};
	int i, k;
	struct shadow_frame *top;
	struct entry_cache *cc;
	struct shadow *sh;
	struct ev_call *e;
	__u32 tid, flags = 0;
	bool chain_ok = true, adjacent, cframe_known, check_hook;

	tid = current_tid();
	if (!tid)
		return 0;
	cc = get_cache();
	sh = get_shadow();
	now = bpf_ktime_get_ns();
	/* both loads unconditionally: the verifier refuses a ctx pointer with a variable offset */
	arg0 = PT_REGS_PARM1(ctx);
	arg1 = PT_REGS_PARM2(ctx);
	barrier_var(arg1);
	frame = off.eval_frame_arg ? arg1 : arg0;
	tstate = off.has_tstate_arg ? arg0 : 0;
	/* the slot this activation is pushed into (shadow_push, whatever path leads there) */
	if (sh)
		sh->f[sh->depth & (SHADOW_CAP - 1)].tstate = tstate;
	if (direct)
		flags = note_direct(tstate, tid, now);
	/* an activation not read is still pushed (its return pops it), but for one whose return
	 * will not be seen */
	if (flags & CALL_NO_RETURN)
		sh = NULL;
	if (read_user(fw, sizeof(fw), frame))
		goto unread;
	code = FIELD(fw, off.frame_code, __u64);
	if (read_user(cw, sizeof(cw), code))
		goto unread;
	next = next_frame(frame, fw, cw);

	/*
	 * 3.11: a frame that starts where the top activation's frame ends on the thread's data
	 * stack was called from that frame: any frame running in between would sit there itself.
	 * The caller is known then without reading the thread state and its cframe (two reads).
	 * Frames elsewhere (generators') take the reads; so does every other version (next_frame).
	 */
	top = shadow_top(sh);
	adjacent = top && top->next == frame;
	/* 3.11, 3.12: while an activation is on top, tstate->cframe is its own _PyCFrame (a
	 * local of the eval function): read once, it gives later callers in one read */
	cframe_known = off.caller_mode == CALLER_FROM_CFRAME && top && top->cframe;
	check_hook = hook_check_due(cc, tstate, now);
	if (off.has_tstate_arg &&
	    ((off.caller_mode != CALLER_FROM_F_BACK && !adjacent && !cframe_known) ||
	     check_hook)) {
		if (read_user(tw, sizeof(tw), tstate))
			goto unread;
		if (check_hook &&
		    keep_hook(FIELD(tw, off.PyThreadState_interp, __u64), REQ_HOOK_ENTRY, tid, now) &&
		    cc) {
			cc->hook.tstate = tstate;
			cc->hook.ns = now;
		}
	}
	if (want_recursion_bonus)
		raise_recursion_budget(tstate, tid, now, cc);
	/* 3.11+: calling a generator function runs a frame that only builds the generator */
	if (off.interp_frame && FIELD(fw, off.frame_owner, __u8) == 0 &&
	    (FIELD(cw, off.PyCodeObject_co_flags, __u32) & 0x3a0))
		flags |= CALL_GEN_CREATE;

	note_code(code, cw, tid, now, cc);
	if (code == bootstrap_codes[0] || code == bootstrap_codes[1])
		note_thread(frame, code, tid, now);

	/* The caller and its caller, with their code objects, let user space recover frames
	 * entered without an event (calls CPython still inlines, lost events). fw and cw are
	 * reused for it. */
	if (adjacent) {
		caller = top->frame;
	} else if (cframe_known) {
		if (read_user(&caller, sizeof(caller), top->cframe + off.PyCFrame_current_frame))
			caller = 0;
	} else {
		caller = caller_frame(fw, tw);
		if (top && off.caller_mode == CALLER_FROM_CFRAME)
			top->cframe = FIELD(tw, off.PyThreadState_cframe, __u64);
	}
	if (top && top->frame == caller) {
		/* what the walk below would read: the caller's frame links to the entry frame
		 * of its activation (3.12+) or to the caller it had when it was entered */
		chain[0] = caller;
		chain_code[0] = top->code;
		if (!entry_shim) {
			chain[1] = top->caller;
			chain_code[1] = top->caller_code;
			back = top->caller ? top->caller_back : 0;
		} else {
			back = 0;
		}
		goto emit;
	}
	for (i = 0, k = 0; k <= CHAIN_LEN && i < CHAIN_LEN && caller; k++) {
		chain[i] = caller;
		if (bpf_probe_read_user(fw, sizeof(fw), (void *)caller)) {
			chain_ok = false;
			break;
		}
		if (off.interp_frame && FIELD(fw, off.frame_owner, __u8) >= 3) {
			/* a shim: no Python frame below it in this activation */
			chain[i] = 0;
			/* 3.12+: the running frame is the activation's entry shim only once the
			 * activation's own frame has returned; it is being cleared, and what the
			 * clearing runs is called from the frame below, the shim's previous */
			if (!entry_shim || i || (flags & CALL_AFTER_RETURN))
				break;
			flags |= CALL_AFTER_RETURN;
			caller = FIELD(fw, off.frame_back, __u64);
			continue;
		}
		chain_code[i] = FIELD(fw, off.frame_code, __u64);
		caller = FIELD(fw, off.frame_back, __u64);
		/* rare: a frame never entered through the eval function (inlined) */
		if (chain_code[i] && !code_known(chain_code[i], cc) &&
		    !read_user(cw, sizeof(cw), chain_code[i]))
			note_code(chain_code[i], cw, tid, now, cc);
		i++;
	}
	back = i == CHAIN_LEN ? caller : 0;

emit:
	/* a frame whose chain could not be read is not used as a caller: read it again then */
	shadow_push(sh, chain_ok ? frame : 0, code, next, chain, chain_code, back);
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&stats.lost_calls, 1);
		return 0;
	}
	e->type = EV_CALL;
	e->tid = tid;
	e->ts_ns = event_ts(now);
	e->code = code;
	e->frame = frame;
	e->chain[0] = chain[0];
	e->chain[1] = chain[1];
	e->chain_code[0] = chain_code[0];
	e->chain_code[1] = chain_code[1];
	e->back = back;
	e->flags = flags;
	e->pad = 0;
	bpf_ringbuf_submit(e, wakeup_flags());
	return 0;
unread:
	shadow_push(sh, 0, 0, 0, chain, chain_code, 0);
	return 0;
}

static __noinline int eval_return(bool uret)
{
	struct ev_return *e;
	struct shadow *sh;
	__u32 tid = current_tid(), *depth;

	if (!tid)
		return 0;
	if (uret) {
		depth = bpf_task_storage_get(&uret_depth, bpf_get_current_task_btf(), 0, 0);
		if (depth && *depth)
			(*depth)--;
	}
	sh = get_shadow();
	if (sh && sh->depth) /* 0: an activation entered before recording */
		sh->depth--;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&stats.lost_returns, 1);
		return 0;
	}
	e->type = EV_RETURN;
	e->tid = tid;
	e->ts_ns = event_ts(bpf_ktime_get_ns());
	bpf_ringbuf_submit(e, wakeup_flags());
	return 0;
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
 * The interpreter of the thread's current thread state, from its innermost activation, or 0
 * (not known: user space then acts on every interpreter, with the whole process stopped).
 */
static __always_inline __u64 current_interp(void)
{
	struct shadow *sh = use_shadow ? bpf_task_storage_get(&shadows, bpf_get_current_task_btf(),
							      0, 0) : NULL;
	struct shadow_frame *top = shadow_top(sh);
	__u64 interp = 0;

	if (top && top->tstate)
		read_user(&interp, sizeof(interp), top->tstate + off.PyThreadState_interp);
	return interp;
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

/*
 * _PyType_NewManagedObject(type), called (3.13.0) only by the specialised class call
 * CALL_ALLOC_AND_ENTER_INIT, which then runs type.__init__ inline whatever eval_frame says:
 * a call no entry probe sees. Report it with its code object; its frame is not made yet.
 */
static __noinline int inline_init(struct pt_regs *ctx)
{
	__u64 cw[CODE_WINDOW / 8], type = PT_REGS_PARM1(ctx), init, code, now;
	struct ev_call *e;
	__u32 tid = current_tid();

	if (!tid || read_user(&init, sizeof(init), type + spec_cache_init_off) ||
	    read_user(&code, sizeof(code), init + func_code_off) ||
	    read_user(cw, sizeof(cw), code))
		return 0;
	now = bpf_ktime_get_ns();
	note_code(code, cw, tid, now, get_cache());
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&stats.lost_calls, 1);
		return 0;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->type = EV_INLINE_CALL;
	e->tid = tid;
	e->ts_ns = event_ts(now);
	e->code = code;
	/* 3.13.0's eval loop keeps the running frame in rbp (callee-saved, so still there):
	 * the caller. User space uses it only if it is a frame on that thread's stack. */
	e->chain[0] = PT_REGS_FP(ctx);
	bpf_ringbuf_submit(e, wakeup_flags());
	return 0;
}

/*
 * CPython 3.11's USDT probe python:function__return (Debian's build), used instead of the ret
 * sites where it exists: it fires at every frame exit, also of frames run inline (a hole of the
 * eval_frame switch), and sits on a nop, which the kernel emulates rather than single-steps.
 * Its arguments are the UTF-8 filename and name (rbp, r12); the exiting frame itself is in rbx
 * in that build, which the arguments confirm. Unconfirmed, the exit counts as a plain return.
 */
static __noinline int frame_exit(struct pt_regs *ctx)
{
	__u64 fw[FRAME_WINDOW / 8], cw[CODE_WINDOW / 8], frame = ctx->bx, code = 0, now;
	__u32 tid = current_tid();
	struct ev_call *e;
	bool sure;

	if (!tid)
		return 0;
	now = bpf_ktime_get_ns();
	sure = !bpf_probe_read_user(fw, sizeof(fw), (void *)frame) &&
	       (code = FIELD(fw, off.frame_code, __u64)) &&
	       !bpf_probe_read_user(cw, sizeof(cw), (void *)code) &&
	       (ctx->bp == FIELD(cw, off.PyCodeObject_co_filename, __u64) + off.PyASCIIObject_size ||
		ctx->r12 == FIELD(cw, off.PyCodeObject_co_name, __u64) + off.PyASCIIObject_size);
	if (sure)
		note_code(code, cw, tid, now, get_cache());
	else
		__sync_fetch_and_add(&stats.exit_unverified, 1);
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&stats.lost_returns, 1);
		return 0;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->type = EV_EXIT;
	e->tid = tid;
	e->ts_ns = event_ts(now);
	if (sure) {
		e->frame = frame;
		e->code = code;
		e->chain[0] = FIELD(fw, off.frame_back, __u64);
	}
	bpf_ringbuf_submit(e, wakeup_flags());
	return 0;
}

/*
 * The one program behind every probe; the attach cookie says which probe fired. One program
 * lets all probes share one uprobe_multi link, whose removal waits for one RCU grace period
 * instead of one per probe (about 0.1-0.25 s each).
 */
SEC("uprobe")
int on_probe(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);

	/* (<= 3.10: the calls that ask for the trampoline hook still do) */
	if (count_only && !(tramp_watch && cookie == PROBE_EVAL_DIRECT)) {
		__sync_fetch_and_add(&count_only_hits, 1);
		return 0;
	}
	switch (cookie) {
	case PROBE_EVAL_ENTRY:
		return eval_entry(ctx, false);
	case PROBE_EVAL_DIRECT:
		return eval_entry(ctx, true);
	case PROBE_EVAL_RETURN:
		return eval_return(false);
	case PROBE_EVAL_URETURN:
		return eval_return(true);
	case PROBE_FRAME_EXIT:
		return frame_exit(ctx);
	case PROBE_SETTER:
		return set_eval_frame(ctx);
	case PROBE_SETTER_RET:
		return set_eval_frame_ret();
	case PROBE_PERF_INIT:
		return perf_trampoline_init(ctx);
	case PROBE_PERF_INIT_RET:
		return perf_trampoline_init_ret();
	case PROBE_INLINE_INIT:
		return inline_init(ctx);
	}
	return 0;
}
