// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Kernel side of pyuprof: probes on CPython's activations of _PyEval_EvalFrameDefault in one
 * target process. Where the probe trampoline is placed (user/inject/tramp.c), entries and returns come
 * from its two 5-byte nops, which the kernel turns into calls without a trap; calls that bypass
 * it come from the function's own entry and a uretprobe. Otherwise from the entry and every ret
 * instruction (single-stepped: ~10 us a hit), or Debian's USDT frame exits. Entries carry the
 * code object and the caller's frame; returns carry only a timestamp (user space matches them
 * with a shadow stack). Each code object's identity (filename, name, first line) crosses the
 * ring buffer once. On 3.11+ the programs also watch the interpreter's eval_frame hook, which
 * user space keeps switched to the default evaluator so that CPython does not run
 * Python-to-Python calls inline, unseen.
 *
 * This file holds the programs, one per kind of probe behind on_probe; the parts they use are
 * the *.bpf.h beside it, each included once, here, in the order they build on each other.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "pyuprof.h"
#include "py_offsets.h"
#include "stage.h"
#include "target.bpf.h"	    /* settings, counters, the ring buffer, reading the target */
#include "strings.bpf.h"    /* copying str objects */
#include "frames.bpf.h"	    /* frames and code objects; each code's identity sent once */
#include "shadow.bpf.h"	    /* each thread's stack of activations */
#include "hook_watch.bpf.h" /* requests to user space: the eval_frame hook */
#include "cfuncs.bpf.h"	    /* C functions: each one's identity */
#include "stage.bpf.h"	    /* the batch mode: records staged in the target */
#include "thread_births.bpf.h" /* the batch mode: new threads seized as they are made */
#include "ring_warm.bpf.h"  /* the ring's pages written before the recording */

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* 3.13: PyHeapTypeObject._spec_cache.init and PyFunctionObject.func_code */
const volatile __u32 spec_cache_init_off = 0, func_code_off = 0;
/* 3.11: where the new frame is at the inline __getitem__ probe; 3.13: where the running frame
 * is at the inline __init__ probe (enum frame_reg) */
const volatile __u32 getitem_frame_reg = 0, init_frame_reg = 0;
/* 3.12+: each activation of the eval function links its frame to a C-stack entry frame */
const volatile __u32 entry_shim = 0;
/* the return probe is the trampoline head's: the frame that returns is at the stack pointer */
const volatile __u32 return_frame_at_sp = 0;
/* glibc's stackblock in the thread block (the stack guard's count: the thread's stack size);
 * set after the load, with the process (probes__aim) */
__u32 stack_blk_off = 0;
/* bench only (PYUPROF_BENCH_COUNT_ONLY): every probe only counts, the floor of its placement */
const volatile __u32 count_only = 0;
__u64 count_only_hits = 0;

/* Each thread's pending uretprobes of ours: the kernel drops those past URETPROBE_DEPTH_MAX */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u32);
} uret_depth SEC(".maps");

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

/*
 * The flags a call's record starts with (direct: it bypassed the trampoline). A global
 * function, whose result the verifier takes for any number: eval_entry's paths are then gone
 * through once for every start, where a known 0 (an entry) and a known few (a direct call)
 * each took them all again, the constants they or in on the way told apart (on_probe's
 * verification: 52,000 instructions on 3.11, 74,000 on 3.12, down to ~20,000).
 */
__noinline int entry_flags(__u64 tstate, __u32 tid, __u64 now, int direct)
{
	return direct ? note_direct(tstate, tid, now) : 0;
}

/* A global function too: gone through once for its two probes. */
__noinline int eval_entry(struct pt_regs *ctx, int direct)
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
	__u32 tid, flags;
	bool chain_ok = true, adjacent, cframe_known, check_hook;

	tid = current_tid();
	if (!tid)
		return 0;
	stage_drain(tid, true);
	cc = get_cache();
	sh = get_shadow();
	now = bpf_ktime_get_ns();
	/* both loads unconditionally: the verifier refuses a ctx pointer with a variable offset */
	arg0 = PT_REGS_PARM1(ctx);
	arg1 = PT_REGS_PARM2(ctx);
	barrier_var(arg1);
	frame = off.eval_frame_arg ? arg1 : arg0;
	tstate = off.has_tstate_arg ? arg0 : 0;
	note_tstate(tstate);
	/* the slot this activation is pushed into (shadow_push, whatever path leads there) */
	if (sh)
		sh->f[sh->depth & (SHADOW_CAP - 1)].tstate = tstate;
	flags = entry_flags(tstate, tid, now, direct);
	/* an activation not read is still pushed (its return pops it), but for one whose return
	 * will not be seen */
	if (flags & CALL_NO_RETURN)
		sh = NULL;
	if (read_user(fw, sizeof(fw), frame))
		goto unread;
	code = frame_code(fw);
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
	/* 3.11+: calling a generator function runs a frame that only builds the generator */
	if (off.interp_frame && FIELD(fw, off.frame_owner, __u8) == 0 &&
	    (FIELD(cw, off.PyCodeObject_co_flags, __u32) & CO_GENERATOR_KINDS))
		flags |= CALL_GEN_CREATE;

	note_code(code, cw, tid, now, cc);
	if (code == bootstrap_codes[0] || code == bootstrap_codes[1]) {
		/* (a wake-up alone is not enough: on a busy machine the consumer ran only after
		 * a short thread, or the whole program, had ended; named here, it need not wait) */
		if (!send_thread(frame, code, tid, now) && code == bootstrap_codes[0])
			request(0, REQ_THREAD_NAME, tid, now);
	}

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
		chain_code[i] = frame_code(fw);
		/* a generator's frame (3.11+: its owner; before: its code's flags) */
		if (off.interp_frame ? FIELD(fw, off.frame_owner, __u8) == 1 :
				       is_gen_code(chain_code[i]))
			flags |= CALL_CHAIN_GEN(i);
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
	if (sh)
		sh->top = frame;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		if (!(flags & CALL_GEN_CREATE)) /* (not a call: cProfile counts none) */
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
	bpf_ringbuf_submit(e, wakeup_flags(RB_BYTES(sizeof(*e))));
	return 0;
unread:
	shadow_push(sh, 0, 0, 0, chain, chain_code, 0);
	return 0;
}

/*
 * The frame returning at the head's return nop (its slot, at the stack pointer), named in an
 * EV_RESUME where it is not the one the reader has on top: the thread's stack switched since
 * its last event (greenlet), or the frame was entered before recording. Then the shadow's top
 * is its caller, as the reader's will be.
 */
static __always_inline void note_return_frame(struct pt_regs *ctx, struct shadow *sh, __u32 tid)
{
	struct shadow_frame *f = shadow_top(sh);
	struct ev_resume *e;
	__u64 frame = 0;

	if (bpf_probe_read_user(&frame, sizeof(frame), (void *)PT_REGS_SP(ctx)) || !frame)
		return;
	if (!sh || sh->top != frame) {
		e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
		if (e) {
			e->type = EV_RESUME;
			e->tid = tid;
			e->frame = frame;
			bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
		}
	}
	if (sh)
		sh->top = f && f->frame == frame ? f->caller : 0;
}

static __noinline int eval_return(struct pt_regs *ctx, bool uret)
{
	struct ev_return *e;
	struct shadow *sh;
	__u32 tid = current_tid(), *depth;

	if (!tid)
		return 0;
	stage_drain(tid, true);
	if (uret) {
		depth = bpf_task_storage_get(&uret_depth, bpf_get_current_task_btf(), 0, 0);
		if (depth && *depth)
			(*depth)--;
	}
	sh = get_shadow();
	if (return_frame_at_sp && !uret)
		note_return_frame(ctx, sh, tid);
	else if (sh)
		sh->top = 0;
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
	bpf_ringbuf_submit(e, wakeup_flags(RB_BYTES(sizeof(*e))));
	return 0;
}


/* An inline call (EV_INLINE_CALL) of code, with its frame if made yet (else 0) and the frame
 * that called it; the code's identity goes first. */
static __noinline void send_inline_call(__u64 code, const void *cw, __u64 frame, __u64 caller,
					__u32 tid)
{
	__u64 now = bpf_ktime_get_ns();
	struct ev_call *e;

	note_code(code, cw, tid, now, get_cache());
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&stats.lost_calls, 1);
		return;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->type = EV_INLINE_CALL;
	e->tid = tid;
	e->ts_ns = event_ts(now);
	e->code = code;
	e->frame = frame;
	e->chain[0] = caller;
	bpf_ringbuf_submit(e, wakeup_flags(RB_BYTES(sizeof(*e))));
}

/* The frame register reg (enum frame_reg) at an inline call's probe (user/target/inline_subscr.c,
 * inline_init.c found which). Each read at a fixed offset: the verifier refuses a context
 * pointer moved by a variable. */
static __always_inline __u64 frame_in(const struct pt_regs *ctx, __u32 reg)
{
	__u64 bx = ctx->bx, bp = ctx->bp, r12 = ctx->r12, r13 = ctx->r13, r14 = ctx->r14,
	      r15 = ctx->r15;

	barrier_var(bx);
	barrier_var(bp);
	barrier_var(r12);
	barrier_var(r13);
	barrier_var(r14);
	barrier_var(r15);
	switch (reg) {
	case FRAME_REG_BX:
		return bx;
	case FRAME_REG_BP:
		return bp;
	case FRAME_REG_R12:
		return r12;
	case FRAME_REG_R13:
		return r13;
	case FRAME_REG_R14:
		return r14;
	case FRAME_REG_R15:
		return r15;
	}
	return 0;
}

/*
 * The call that makes the object in the specialised class call CALL_ALLOC_AND_ENTER_INIT
 * (3.13; user/target/inline_init.c), which then runs type.__init__ inline whatever eval_frame
 * says: a call no entry probe sees. Report it with its code object; its frame is not made
 * yet. The type is the call's first argument; the caller, the running frame, in the eval
 * loop's register for it (user space uses it only if it is a frame on that thread's stack).
 */
static __noinline int inline_init(struct pt_regs *ctx)
{
	__u64 cw[CODE_WINDOW / 8], type = PT_REGS_PARM1(ctx), init, code;
	__u32 tid = current_tid();

	if (tid)
		stage_drain(tid, true);
	if (!tid || read_user(&init, sizeof(init), type + spec_cache_init_off) ||
	    read_user(&code, sizeof(code), init + func_code_off) ||
	    read_user(cw, sizeof(cw), code))
		return 0;
	send_inline_call(code, cw, 0, frame_in(ctx, init_frame_reg), tid);
	return 0;
}

/*
 * CPython 3.11's BINARY_SUBSCR_GETITEM (early 3.11 releases: Debian's 3.11.2, not pyenv's
 * 3.11.7) runs a Python
 * __getitem__ inline whatever eval_frame says, on a path of its own in the eval loop. The
 * probe sits just after the new frame became the running one: report it, its code and its
 * caller (the frame it links to). Its end is not seen; user space ends it at the thread's next
 * event, as it does every frame run inline.
 */
static __noinline int inline_getitem(struct pt_regs *ctx)
{
	__u64 fw[FRAME_WINDOW / 8], cw[CODE_WINDOW / 8], code;
	__u64 frame = frame_in(ctx, getitem_frame_reg);
	__u32 tid = current_tid();

	if (tid)
		stage_drain(tid, true);
	if (!tid || read_user(fw, sizeof(fw), frame) ||
	    !(code = frame_code(fw)) || read_user(cw, sizeof(cw), code))
		return 0;
	send_inline_call(code, cw, frame, FIELD(fw, off.frame_back, __u64), tid);
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
	       (code = frame_code(fw)) &&
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
	bpf_ringbuf_submit(e, wakeup_flags(RB_BYTES(sizeof(*e))));
	return 0;
}

/* The probes this object is attached as (1 << enum probe_role): the programs of the others are
 * never gone through by the verifier. */
const volatile __u64 roles = ~0ull;
#define ROLE(r) (roles & (1ull << (r)))

/*
 * The trampoline's stack guard: a call with too little of its thread's C stack left raises
 * RecursionError instead of running (user/inject/tramp.h). Counted, with the smallest stack
 * of a thread it happened in (glibc's stack block; the main thread's is user space's to say).
 */
static __noinline int stack_low(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 fs = BPF_CORE_READ(task, thread.fsbase), blk[3] = {}, size;

	if (!current_tid())
		return 0;
	__sync_fetch_and_add(&exit_stats.stack_low, 1);
	if (!stack_blk_off || !fs ||
	    bpf_probe_read_user(blk, sizeof(blk), (void *)(fs + stack_blk_off)) || !blk[0] ||
	    blk[1] <= blk[2])
		return 0;
	size = blk[1] - blk[2];
	if (!exit_stats.stack_low_size || size < exit_stats.stack_low_size)
		exit_stats.stack_low_size = size;
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
		return ROLE(PROBE_EVAL_ENTRY) ? eval_entry(ctx, false) : 0;
	case PROBE_EVAL_DIRECT:
		return ROLE(PROBE_EVAL_DIRECT) ? eval_entry(ctx, true) : 0;
	case PROBE_EVAL_RETURN:
		return ROLE(PROBE_EVAL_RETURN) ? eval_return(ctx, false) : 0;
	case PROBE_EVAL_URETURN:
		return ROLE(PROBE_EVAL_URETURN) ? eval_return(ctx, true) : 0;
	case PROBE_STACK_LOW:
		return ROLE(PROBE_STACK_LOW) ? stack_low() : 0;
	case PROBE_FRAME_EXIT:
		return ROLE(PROBE_FRAME_EXIT) ? frame_exit(ctx) : 0;
	case PROBE_SETTER:
		return ROLE(PROBE_SETTER) ? set_eval_frame(ctx) : 0;
	case PROBE_SETTER_RET:
		return ROLE(PROBE_SETTER_RET) ? set_eval_frame_ret() : 0;
	case PROBE_PERF_INIT:
		return ROLE(PROBE_PERF_INIT) ? perf_trampoline_init(ctx) : 0;
	case PROBE_PERF_INIT_RET:
		return ROLE(PROBE_PERF_INIT_RET) ? perf_trampoline_init_ret() : 0;
	case PROBE_PERF_CHECK:
		return ROLE(PROBE_PERF_CHECK) ? perf_trampoline_check() : 0;
	case PROBE_INLINE_INIT:
		return ROLE(PROBE_INLINE_INIT) ? inline_init(ctx) : 0;
	case PROBE_INLINE_GETITEM:
		return ROLE(PROBE_INLINE_GETITEM) ? inline_getitem(ctx) : 0;
	case PROBE_STAGE_FLUSH:
		return ROLE(PROBE_STAGE_FLUSH) ? stage_flush(ctx) : 0;
	}
	return 0;
}

