/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The staging area of the batch mode (the default): one anonymous mapping in the target,
 * private and wiped at fork (MADV_WIPEONFORK: a child starts with staging off), written by the
 * trampoline page's batch path (user/inject/tramp_code.S), read by the BPF side at each flush
 * (bpf/stage.bpf.h) and by pyuprof when it stops (user/inject/staging.c). Defines (and one function
 * the assembler does not see), so that the assembler, the BPF compiler and user space include
 * the one declaration.
 *
 * The trampoline appends records for the thread that owns the buffer (STAGE_OWNER) and
 * calls its flush nop, where the BPF program sits, when the buffer is nearly full, when a batch
 * grows older than a time bound, when another thread starts writing (its records must be
 * attributed to the thread that made them), or when a code object is not in its table (its
 * identity is read while it is alive, before any record names it).
 *
 * Records are 8-byte words, as many as their kind takes. A record that holds a time starts
 * with it, the TSC with its kind in the top 4 bits (no TSC reaches them: pyuprof stages only
 * below 2^59, 6 years of ticks at 3 GHz from there: tsc__usable); a chain starts with a code
 * object's address, whose top bits no user address has. So the first word tells a record's
 * length (stage_rec_bytes), and the heads of records can be found among any words (a lost
 * range is counted so: bpf/stage.bpf.h). A call without a chain takes 40 bytes (64 in records
 * of 32 each: bench/RESULTS.md, History, 2026-11-27T03:10Z, ca7be10):
 *   entry (32): tsc | STAGE_TAG_ENTRY, frame [| STAGE_GEN_CREATE], code, chain[0]
 *   chain (32): chain_code[0] | STAGE_CHAIN [| STAGE_CHAIN_GEN0 | STAGE_CHAIN_GEN1], chain[1],
 *               chain_code[1], back      (right after its entry; none when chain[0] is
 *                                         STAGE_TOP: the reader has that frame on top)
 *   exit (8):   tsc | STAGE_TAG_EXIT, or STAGE_TAG_EXIT_DONE, STAGE_TAG_EXIT_NONE
 *   pause (16): tsc | STAGE_TAG_PAUSE, tsc at its end (a batch's first record: the code flush
 *               before it, from tsc to its end, is the probes' and no call's)
 *   resume (16): STAGE_TAG_RESUME, frame (right before an exit: the frame that returns is not
 *               the one the reader has on top; its thread switched stacks since, as greenlet
 *               does, or another thread staged meanwhile)
 *   ccall (24): tsc | STAGE_TAG_CCALL, the C function's PyMethodDef, the calling frame or 0
 *   cret (16):  tsc | STAGE_TAG_CRET, the calling frame or 0 (include/cfuncs.h)
 *   csync (8):  tsc | STAGE_TAG_CSYNC
 *   gauge (16): tsc | STAGE_TAG_GAUGE, TSC ticks of the gauge (a batch's first record, after
 *               its pause record if any: the gauge runs as the batch starts)
 * chain and flags mean what they mean in struct ev_call (include/pyuprof.h).
 */
#ifndef __PYUPROF_STAGE_H
#define __PYUPROF_STAGE_H

/* the control block, at the mapping's start */
#define STAGE_ON 0	/* u32: STAGE_ON_STAGING while pyuprof consumes; STAGE_ON_PASS: the page
			 * only passes calls through; STAGE_ON_PERCALL: the head's probes see each
			 * call (a thread key that did not check out: bpf/stage.bpf.h) */
#define STAGE_ON_PASS 0
#define STAGE_ON_STAGING 1
#define STAGE_ON_PERCALL 2
#define STAGE_OWNER 8	/* u32: the thread whose records are staged (glibc's tid) */
#define STAGE_W 16	/* u64: bytes staged */
#define STAGE_FIRST 24	/* u64: TSC of the batch's start */
#define STAGE_BOUND 32	/* u64: TSC ticks a batch may age before it is flushed (set by pyuprof:
			 * its rate is measured, and the page's bytes stay the same) */
#define STAGE_GEN 40	/* u64: batches flushed. After its flush nop the trampoline sets STAGE_W
			 * to 0, then counts the batch here: a thread that ends or is held between
			 * the nop and these stores (a signal taken on the way back from the probe)
			 * still shows the batch the BPF side copied, and its generation tells so */
#define STAGE_TOP 48	/* u64: the frame the owner entered last through the batch path and runs
			 * now (each call puts back the one it found), 0 when not known (set so at
			 * a flush where another thread takes the batch over) */
#define STAGE_CFUNCS 56	/* u32: 1 while pyuprof records C functions (include/cfuncs.h says
			 * how the page learns of them); 0: the page gives back what it took */
#define STAGE_CF_TOOL 60 /* u32, 3.12+: the page's sys.monitoring tool (7), its id + 1; 0 none
			  * yet (taken at the next staged call), STAGE_CF_NO_TOOL none to be had */
#define STAGE_CF_NO_TOOL 255
/*
 * A profiler the program starts inside a C call the page records (sys.setprofile,
 * sys.monitoring.set_events) natively gets no event of that call: none was set as it began. The
 * page wraps such a call (its callable's vectorcall, for that call alone: STAGE_CF_SWAPS, a
 * ring of {callable, its own vectorcall}) and, as it returns, keeps its return event from the
 * new profiler: <= 3.11 by holding the profile slot until the event (STAGE_CF_PEND_*: what the
 * call put in the slot, given back at the event), 3.12+ by taking the C_RETURN and C_RAISE
 * callbacks of every other tool out until the page's event after that return's (CPython calls
 * the tools' callbacks from tool 7 down: the page's comes first; STAGE_CF_MUTED: the tools,
 * and STAGE_CF_MUTED_FRESH until that return's event came; STAGE_CF_MUTE: their callbacks) if
 * no tool but the page's saw the call (STAGE_CF_OTHERS).
 */
#define STAGE_CF_SWAP 64	/* u32: the ring's next entry */
#define STAGE_CF_OTHERS 68	/* u32, 3.12+: tools other than the page's that saw the call */
#define STAGE_CF_MUTED 72	/* u32, 3.12+: tools whose C_RETURN, C_RAISE callbacks are out */
#define STAGE_CF_MUTED_FRESH 31 /* (its bit: the wrapped call's return event is still to come) */
#define STAGE_CF_PEND_TSTATE 80 /* u64, <= 3.11: the thread whose slot is held, else 0 */
#define STAGE_CF_PEND_FUNC 88	/* u64, <= 3.11: what the call put in its slot, */
#define STAGE_CF_PEND_OBJ 96	/* and its object */
#define STAGE_CF_INIT_NAME 104	/* u64, 3.13: the str "__init__" (.Lcf_init), once made */
#define STAGE_CF_SWAPS 128	/* {callable, vectorcall} x STAGE_CF_NSWAPS */
#define STAGE_CF_NSWAPS 8
#define STAGE_CF_MUTE 256	/* u64 [8 tools][2]: their C_RETURN and C_RAISE callbacks */

#define STAGE_BUF 4096		    /* the records */
#define STAGE_BUF_BYTES (64 << 10)
#define STAGE_ENTRY_BYTES 32	/* an entry's record, and its chain's */
#define STAGE_EXIT_BYTES 8
#define STAGE_PAUSE_BYTES 16
#define STAGE_RESUME_BYTES 16
#define STAGE_CCALL_BYTES 24
#define STAGE_CRET_BYTES 16
#define STAGE_CSYNC_BYTES 8
#define STAGE_GAUGE_BYTES 16
/*
 * The speed gauge: STAGE_GAUGE_ITERS turns of a loop of two instructions (dec, a taken jnz),
 * timed by the TSC at each batch's start, on the thread and CPU the batch's calls run on and at
 * their moment (the test VM's two vCPUs run 1.5-2x apart, which one is slow changing every few
 * seconds: a speed measured elsewhere or earlier says little). The probes' cost a call,
 * calibrated at one gauge reading, is scaled by the readings beside the calls
 * (profile__gauge). A loop of taken branches slows as the interpreter does when the host's
 * other hyperthread is busy (1.7x against sum(range(n))'s 1.8x and fib's 1.5x, 2026-11-28),
 * where a chain of dependent arithmetic does not slow at all. ~0.3-0.6 µs a batch of up to
 * ~680 calls.
 */
#define STAGE_GAUGE_ITERS 1024
/* flushed once more than this is staged: an entry, its chain and a C-call sync always fit */
#define STAGE_LIMIT (STAGE_BUF_BYTES - 2 * STAGE_ENTRY_BYTES - STAGE_CSYNC_BYTES)
/* the code objects whose identity was sent: sets of STAGE_WAYS adjacent 64-byte slots, each
 * {code, co_name, its hash, co_filename, its last 8 bytes, co_firstlineno (u32), its length
 * (u32), its first 8 bytes, its hash}, or {code, its co_version and co_firstlineno} for a
 * 3.12+ code object whose version is past the version map (tramp_code.S's .Lslot). A code
 * object not found is a flush, a kernel entry: a program whose loop calls more code objects
 * than a set holds would pay one on every call, and with one slot a set (before) 4,000
 * functions called in turn cost 200-270 ns a call on 3.12. */
#define STAGE_TABLE (STAGE_BUF + STAGE_BUF_BYTES)
#define STAGE_SLOTS 65536
#define STAGE_WAYS 4
#define STAGE_WAYS_LOG2 2
#define STAGE_SLOT 64
/* 3.12+: a bit for each co_version below STAGE_VERSIONS whose code object's identity was sent.
 * Versions come from a counter, so the code objects a program runs have versions close
 * together, and their bits share a few cache lines where their table slots would be spread
 * over the whole table; an object with a version past them (or 0) takes the table. */
#define STAGE_VMAP (STAGE_TABLE + STAGE_SLOTS * STAGE_SLOT)
#define STAGE_VERSIONS (1 << 24)
/* the C functions (their PyMethodDef) whose identity was sent: one address a slot, the set
 * the address's bits pick (a miss sends it again: the first identity is the one kept) */
#define STAGE_CTABLE (STAGE_VMAP + STAGE_VERSIONS / 8)
#define STAGE_CSLOTS 8192
#define STAGE_SIZE (STAGE_CTABLE + STAGE_CSLOTS * 8)

/* record kinds: the first word's top bits (STAGE_TAG), 0 for a chain, whose first word's low
 * bits hold STAGE_CHAIN and its flags (a code object's address is 16-aligned) */
#define STAGE_TAG_SHIFT 60
#define STAGE_TAG(w) ((w) >> STAGE_TAG_SHIFT)
#define STAGE_TSC(w) ((w) & ((1ULL << STAGE_TAG_SHIFT) - 1))
#define STAGE_TSC_LIMIT (1ULL << (STAGE_TAG_SHIFT - 1)) /* staging only below it */
#define STAGE_TAG_ENTRY 8
/* exits (3.12+): the frame was a generator's or coroutine's and returned (it did not yield,
 * raise or end by an exception), and what it returned was None */
#define STAGE_TAG_EXIT 9
#define STAGE_TAG_EXIT_DONE 10
#define STAGE_TAG_EXIT_NONE 11
#define STAGE_TAG_PAUSE 12
#define STAGE_TAG_RESUME 13
/* C functions (include/cfuncs.h): a call of one (tsc, its PyMethodDef, the calling frame or
 * 0), its return (or exception), and a sync: the C calls this thread has open in the records
 * are over (their returns went to a profile function of the program's own). Tags below 8
 * (their top bit clear: a chain's first word is a code object's address, whose top bits are
 * 0, so any tag but 0 is a record) */
#define STAGE_TAG_CCALL 5
#define STAGE_TAG_CRET 6
#define STAGE_TAG_CSYNC 7
#define STAGE_TAG_GAUGE 14
#define STAGE_CHAIN 4
#define STAGE_CHAIN_GEN0 1
#define STAGE_CHAIN_GEN1 2
#define STAGE_CHAIN_FLAGS 7
/* the entry's frame word: a frame of a generator function that only makes the generator */
#define STAGE_GEN_CREATE 2
#define STAGE_FRAME_FLAGS 7

#ifndef __ASSEMBLER__
/* A record's length by its first word; 0: not a record. */
static inline unsigned int stage_rec_bytes(unsigned long long w0)
{
	switch (STAGE_TAG(w0)) {
	case STAGE_TAG_ENTRY:
		return STAGE_ENTRY_BYTES;
	case STAGE_TAG_EXIT:
	case STAGE_TAG_EXIT_DONE:
	case STAGE_TAG_EXIT_NONE:
		return STAGE_EXIT_BYTES;
	case STAGE_TAG_PAUSE:
		return STAGE_PAUSE_BYTES;
	case STAGE_TAG_RESUME:
		return STAGE_RESUME_BYTES;
	case STAGE_TAG_CCALL:
		return STAGE_CCALL_BYTES;
	case STAGE_TAG_CRET:
		return STAGE_CRET_BYTES;
	case STAGE_TAG_CSYNC:
		return STAGE_CSYNC_BYTES;
	case STAGE_TAG_GAUGE:
		return STAGE_GAUGE_BYTES;
	case 0:
		return w0 & STAGE_CHAIN ? STAGE_ENTRY_BYTES : 0;
	}
	return 0;
}
#endif

/* why the trampoline flushes (in %rdx at its flush nop) */
#define STAGE_FLUSH_FULL 1
#define STAGE_FLUSH_TIME 2
#define STAGE_FLUSH_SWITCH 4 /* another thread writes now */
#define STAGE_FLUSH_CODE 8   /* %rcx: a code object not in the table (%r8: its frame) */
#define STAGE_FLUSH_TSTATE 16 /* %r9: the thread's thread state (3.9+), at an entry */
#define STAGE_FLUSH_CFUNC 32 /* %rcx: a C function's callable not in the C table, %r8 the
			      * object it is called on, %r9 its key (include/cfuncs.h) */

/*
 * REQ_STAGE_REST's addr (include/pyuprof.h): the ring had no room for a thread's records, so
 * it stopped: user space reads them, [from, STAGE_W), from the target (the thread, stopped,
 * has not started the next batch yet). Bits 0-31: from; bits 32-63: the thread the records are
 * of, 0 for none (a thread that only waits for room for the record its probe sends next).
 */
#define STAGE_REST_FROM(a) ((__u32)(a))
#define STAGE_REST_OWNER(a) ((__u32)((a) >> 32))

#endif /* __PYUPROF_STAGE_H */
