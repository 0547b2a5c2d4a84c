/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The batch mode's BPF side (include/stage.h): the records the trampoline stages in the
 * target cross into the ring buffer as they are, in chunks, at its flush nop; and before any
 * other record of the thread that owns them, so that a thread's records keep their order.
 * User space turns them into calls and returns (user/record/recorder.c).
 */
#ifndef __PYUPROF_STAGE_BPF_H
#define __PYUPROF_STAGE_BPF_H

/* the batch mode (its parts left out of the verification otherwise), and the staging area in
 * the target (set with targ_tgid; 0 until then) */
const volatile __u32 batch_mode = 0;
__u64 stage_addr = 0;

/*
 * Where the records not yet copied start (the trampoline's count, STAGE_W, is theirs: it only
 * grows until a flush, after which both start over), the batch they are of (STAGE_GEN's value
 * while the trampoline fills it: one more once its flush copied it, until the trampoline
 * starts the next) and the thread that made them. Only that thread's programs touch them, or
 * the flush, which the GIL orders with them.
 */
__u64 stage_r = 0;
__u64 stage_g = 0;
__u32 stage_owner = 0;
/* Set by user space once it has switched staging off and read the rest itself (the target
 * held): a record a thread was writing as it was stopped is not copied after that rest. */
__u32 stage_closed = 0;

/*
 * The chunk records, by size: a flush of a full staging area crosses as one record (a chunk
 * costs ~230 ns besides its bytes: on the 2-vCPU VM a flush of 64 KiB took 9.8 µs in 4 KiB
 * chunks, 6.3 µs in one), a small one in a small record (ring space is taken by the record).
 */
#define STAGE_C1 512
#define STAGE_C2 4096
#define STAGE_C3 16384
#define STAGE_C4 (STAGE_BUF_BYTES + 32)
#define STAGE_BATCH_REC(name, size)                                                             \
	struct name {                                                                            \
		struct ev_batch h;                                                               \
		__u8 data[(size) - sizeof(struct ev_batch)];                                      \
	}
STAGE_BATCH_REC(ev_batch_c1, STAGE_C1);
STAGE_BATCH_REC(ev_batch_c2, STAGE_C2);
STAGE_BATCH_REC(ev_batch_c3, STAGE_C3);
STAGE_BATCH_REC(ev_batch_c4, STAGE_C4);
#define STAGE_DATA(c) ((c) - sizeof(struct ev_batch))

/*
 * One chunk of [from, from + n) into the ring buffer, as thread tid's; n bytes, at most its
 * record's room. ring: the copy's bytes in the ring with this record. how: STAGE_CHUNK_LAST
 * (the consumer is woken, if the copy took the ring past a quarter: wakeup_flags; at the last
 * chunk only: a wake-up costs this thread more than a chunk, and once woken it reads all there
 * is) and STAGE_CHUNK_FIRST (the copy's first: ev_batch.first). Returns 0, or -1 if the ring
 * had no room. A global function for each record size: the verifier goes through each once,
 * not at every turn of the copy's loop (on_probe: ~14,000 instructions, ~20 ms of every batch
 * load).
 */
#define STAGE_CHUNK_LAST 1
#define STAGE_CHUNK_FIRST 2
#define STAGE_CHUNK_FN(name, rec_t, room_)                                                      \
	__noinline int name(__u64 from, __u64 n, __u32 tid, int how, __u64 ring)                 \
	{                                                                                        \
		rec_t *e = bpf_ringbuf_reserve(&events, sizeof(rec_t), 0);                        \
                                                                                                 \
		if (!e)                                                                          \
			return -1;                                                               \
		if (n > (room_))                                                                 \
			n = (room_);                                                             \
		e->h.type = EV_BATCH;                                                            \
		e->h.tid = tid;                                                                  \
		e->h.bytes = n;                                                                  \
		e->h.from = from;                                                                \
		e->h.first = !!(how & STAGE_CHUNK_FIRST);                                        \
		e->h.pad = 0;                                                                    \
		e->h.pad2 = 0;                                                                   \
		if (bpf_probe_read_user(e->data, n, (void *)(stage_addr + STAGE_BUF + from))) {   \
			e->h.bytes = 0;                                                          \
			__sync_fetch_and_add(&stats.read_fail, 1);                               \
		}                                                                                \
		bpf_ringbuf_submit(e, (how & STAGE_CHUNK_LAST) ? wakeup_flags(ring)               \
								: BPF_RB_NO_WAKEUP);              \
		return 0;                                                                        \
	}

STAGE_CHUNK_FN(stage_chunk_c1, struct ev_batch_c1, STAGE_DATA(STAGE_C1))
STAGE_CHUNK_FN(stage_chunk_c2, struct ev_batch_c2, STAGE_DATA(STAGE_C2))
STAGE_CHUNK_FN(stage_chunk_c3, struct ev_batch_c3, STAGE_DATA(STAGE_C3))
STAGE_CHUNK_FN(stage_chunk_c4, struct ev_batch_c4, STAGE_DATA(STAGE_C4))
#undef STAGE_CHUNK_FN

/*
 * A copy's cursor: where it began, where it is, where it ends, the bytes its chunks took in the
 * ring so far and whose records they are; for stage_lost_step's scan where it stopped, the next
 * word, the end. Each thread's own (two threads of the target copying at once, such as an exec
 * or the process's end beside a flush, keep apart), in memory the verifier does not follow: in a
 * bpf_loop context on the stack every value is tracked, and a flag there for "stopped" doubled
 * the states of each program that copies (its load took 0.4 s longer), a walk by records of three
 * lengths never settled into states it could prune, and the copy's range there had its loop gone
 * through ~55 times (~6,000 instructions a program). The loops' contexts hold only a pointer to
 * it.
 */
struct stage_cursor {
	__u64 start, from, to, ring;
	__u64 lost_at, lost_from, lost_to;
	__u32 tid, pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct stage_cursor);
} stage_cursors SEC(".maps");

/* The cursor of a copy whose thread's own cannot be had: the kernel refuses a task storage call
 * nested in another on the same CPU (a program preempted in one); this CPU's, then. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stage_cursor);
} stage_cursor_cpu SEC(".maps");

struct stage_loop_ctx {
	struct stage_cursor *c;
};

/* bpf_loop's step over the words of the records that had no room in the ring (from where the
 * copy stopped, and the three words before: an entry a chunk cut there is lost too): each
 * entry a lost call (but a generator's creation, 3.11+: no call, as cProfile counts), each
 * exit a lost return, as with the per-call records. A record's head is the one word with a
 * tag in its top bits (include/stage.h). */
static long stage_lost_step(__u32 i, void *data)
{
	struct stage_cursor *c = ((struct stage_loop_ctx *)data)->c;
	__u64 w = 0, at = c->lost_at, tag;

	if (at >= c->lost_to ||
	    bpf_probe_read_user(&w, sizeof(w), (void *)(stage_addr + STAGE_BUF + at)))
		return 1;
	c->lost_at = at + 8;
	tag = STAGE_TAG(w);
	if (tag == STAGE_TAG_ENTRY && at + STAGE_ENTRY_BYTES > c->lost_from) {
		/* its frame word: the creation's flag (unread: counted) */
		if (bpf_probe_read_user(&w, sizeof(w), (void *)(stage_addr + STAGE_BUF + at + 8)) ||
		    !(w & STAGE_GEN_CREATE))
			__sync_fetch_and_add(&stats.lost_calls, 1);
	} else if (tag >= STAGE_TAG_EXIT && tag <= STAGE_TAG_EXIT_NONE && at >= c->lost_from) {
		__sync_fetch_and_add(&stats.lost_returns, 1);
	} else if (tag == STAGE_TAG_CCALL && at + STAGE_CCALL_BYTES > c->lost_from) {
		__sync_fetch_and_add(&stats.lost_ccalls, 1);
	} else if (tag == STAGE_TAG_CRET && at + STAGE_CRET_BYTES > c->lost_from) {
		__sync_fetch_and_add(&stats.lost_creturns, 1);
	}
	return 0;
}

/*
 * bpf_loop's step: the next chunk of the copy's range, or the end. The chunk's record: the
 * smallest that holds the rest, if the rest fills at least half of it; else the next smaller,
 * filled. So a chunk wastes at most half its record (stage_room counts on it). What finds no
 * room is counted lost.
 */
static long stage_copy_step(__u32 i, void *data)
{
	struct stage_loop_ctx *ctx = data;
	struct stage_cursor *c = ctx->c;
	__u64 from = c->from, to = c->to, n = to - from;
	int err, how;

	if (from >= to)
		return 1;
	how = (from == c->start ? STAGE_CHUNK_FIRST : 0);
#define STAGE_STEP(rec_t, size, fn)                                                             \
	({                                                                                       \
		int _err;                                                                        \
		if (n > STAGE_DATA(size))                                                        \
			n = STAGE_DATA(size);                                                    \
		_err = fn(from, n, c->tid, how | (from + n >= to ? STAGE_CHUNK_LAST : 0),          \
			  c->ring + RB_BYTES(sizeof(struct rec_t)));                             \
		if (!_err)                                                                       \
			c->ring += RB_BYTES(sizeof(struct rec_t));                                \
		_err;                                                                            \
	})
	if (n <= STAGE_DATA(STAGE_C1) || (n <= STAGE_DATA(STAGE_C2) && 2 * n < STAGE_DATA(STAGE_C2)))
		err = STAGE_STEP(ev_batch_c1, STAGE_C1, stage_chunk_c1);
	else if (n <= STAGE_DATA(STAGE_C2) ||
		 (n <= STAGE_DATA(STAGE_C3) && 2 * n < STAGE_DATA(STAGE_C3)))
		err = STAGE_STEP(ev_batch_c2, STAGE_C2, stage_chunk_c2);
	else if (n <= STAGE_DATA(STAGE_C3) || 2 * n < STAGE_DATA(STAGE_C4))
		err = STAGE_STEP(ev_batch_c3, STAGE_C3, stage_chunk_c3);
	else
		err = STAGE_STEP(ev_batch_c4, STAGE_C4, stage_chunk_c4);
#undef STAGE_STEP
	if (err) {
		c->lost_from = from;
		c->lost_at = from >= c->start + STAGE_ENTRY_BYTES - 8 ?
				     from - (STAGE_ENTRY_BYTES - 8) : c->start;
		c->lost_to = to;
		bpf_loop(STAGE_BUF_BYTES / 8 + 4, stage_lost_step, ctx, 0);
		return 1;
	}
	c->from = from + n;
	return 0;
}

/* Copies the staged bytes [from, to) out, as thread tid's; what does not fit is counted lost.
 * A global function: its loop is gone through once for a program, not at each of its two
 * callers (the flush and stage_drain). */
__noinline int stage_copy(__u64 from, __u64 to, __u32 tid)
{
	struct stage_loop_ctx ctx;
	__u32 zero = 0;

	ctx.c = bpf_task_storage_get(&stage_cursors, bpf_get_current_task_btf(), 0,
				     BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!ctx.c)
		ctx.c = bpf_map_lookup_elem(&stage_cursor_cpu, &zero);
	if (!ctx.c)
		return 0;
	ctx.c->start = from;
	ctx.c->from = from;
	ctx.c->to = to < STAGE_BUF_BYTES ? to : STAGE_BUF_BYTES;
	ctx.c->ring = 0;
	ctx.c->tid = tid;
	bpf_loop(STAGE_BUF_BYTES / STAGE_DATA(STAGE_C1) + 2, stage_copy_step, &ctx, 0);
	return 0;
}

/*
 * Room in the ring for n staged bytes as chunks (each record at most twice its bytes, and its
 * header and the ring's own 8 bytes), and STAGE_HEADROOM beside: the request that stops the
 * thread instead, and the code identity a flush may send after.
 */
#define STAGE_HEADROOM (64 << 10)

static __always_inline bool stage_room(__u64 n)
{
	__u64 size = bpf_ringbuf_query(&events, BPF_RB_RING_SIZE);
	__u64 used = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);

	n = 2 * n + (n / STAGE_DATA(STAGE_C1) + 1) * (sizeof(struct ev_batch) + 8) + STAGE_HEADROOM;
	return used + n <= size;
}

/* tests only (PYUPROF_TEST_NO_WAIT): a full ring loses the records, as where no thread can
 * wait (a process's end), so that the lost count can be checked against the calls made */
const volatile __u32 test_no_wait = 0;

/*
 * The ring has no room (pyuprof is behind): rather than lose the records, this thread stops
 * on its way back to user mode (REQUEST_SIGNAL, as for any request) and user space, once it
 * has read everything before, reads the records [from, W) from the target itself
 * (user/record/recorder.c, REQ_STAGE_REST). Only while user space holds the target (it resumes the
 * thread). Returns whether the thread was stopped so.
 */
static __always_inline bool stage_wait(__u64 from, __u32 owner, __u32 tid)
{
	if (test_no_wait)
		return false;
	return send_request((__u64)owner << 32 | from, REQ_STAGE_REST, tid, bpf_ktime_get_ns(),
			    true);
}

/*
 * Whether the owner's batch holds records not copied yet, [stage_r, *w). Read for the owner
 * itself (in a probe of its own, or ending), whose count stands still meanwhile. A batch whose
 * flush copied it is not read again, though the owner may not have reset its count yet: it
 * took a signal on the way back from the flush nop, and ends or stops there.
 */
static __always_inline bool stage_unsent(__u64 *w)
{
	__u64 cw[(STAGE_GEN - STAGE_W) / 8 + 1];

	if (bpf_probe_read_user(cw, sizeof(cw), (void *)(stage_addr + STAGE_W)) ||
	    cw[(STAGE_GEN - STAGE_W) / 8] != stage_g)
		return false;
	*w = cw[0] < STAGE_BUF_BYTES ? cw[0] : STAGE_BUF_BYTES;
	return *w > stage_r;
}

/*
 * Before any other record of thread tid: what it has staged goes first. From a probe of the
 * thread's own (can_wait), it waits for room rather than lose them, or the record its probe
 * is about to send (any thread: with nothing of its own to read, owner 0).
 * A global function, which the verifier goes through once, whatever calls it: inlined, its
 * copy loop was gone through again at each of the eight probes that drain (half of the 100,000
 * instructions of on_probe's verification, ~80 ms of every load).
 */
__noinline int stage_drain(__u32 tid, int can_wait)
{
	bool mine;
	__u64 w = 0;

	if (!batch_mode || !stage_addr || stage_closed)
		return 0;
	mine = tid == stage_owner && stage_unsent(&w);
	if (can_wait && !stage_room(mine ? w - stage_r : 0) &&
	    stage_wait(stage_r, mine ? tid : 0, tid)) {
		if (mine)
			stage_r = w;
		return 0;
	}
	if (mine) {
		stage_copy(stage_r, w, tid);
		stage_r = w;
	}
	return 0;
}

/* The thread key's offset in glibc's thread block (at the thread's FS base): where the page
 * reads each thread's tid (user/target/thread_block.h) */
const volatile __u32 key_off = 0;

/* The calling thread's id in its own PID namespace, the one glibc keeps in its thread block
 * (current_tid's may be another namespace's: a target in a container) */
static __always_inline __u32 own_ns_tid(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pid *pid = BPF_CORE_READ(task, thread_pid);
	unsigned int level = BPF_CORE_READ(pid, level);
	struct upid up = {};

	if (bpf_probe_read_kernel(&up, sizeof(up),
				  (void *)pid + bpf_core_field_offset(struct pid, numbers) +
					  (level & 31) * bpf_core_type_size(struct upid)))
		return 0;
	return (__u32)up.nr;
}

/*
 * At each flush: the flushing thread's key must be its id, or the page cannot tell its records
 * from another thread's (its C library is not glibc, or a glibc that keeps the id elsewhere:
 * the check at the start could not read a thread that did not exist yet). Such a thread asks
 * user space to send every call to the per-call probes (STAGE_ON_PERCALL), and stands at the
 * flush until it has; its records so far are its own (copied as the caller's, by its id).
 */
static __always_inline void stage_check_key(__u32 tid, __u64 now)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 fs = BPF_CORE_READ(task, thread.fsbase);
	__u32 key = 0, want;

	if (!key_off)
		return;
	want = own_ns_tid();
	if (!want || (fs && !bpf_probe_read_user(&key, sizeof(key), (void *)(fs + key_off)) &&
		      key == want))
		return;
	if (!__sync_fetch_and_add(&exit_stats.key_bad, 1)) {
		exit_stats.key_bad_tid = tid;
		exit_stats.key_bad_key = key;
	}
	request(0, REQ_STAGE_KEY, tid, now);
}

/*
 * The flush nop: rsi bytes staged, rax their batch's generation, rdx why (STAGE_FLUSH_*), rcx
 * a code object whose identity is sent now (STAGE_FLUSH_CODE: sent whatever codes says, since
 * the trampoline found its fields changed), r8 its frame, r9 the thread state
 * (STAGE_FLUSH_TSTATE). From here on the calling thread owns the buffer.
 */
static __noinline int stage_flush(struct pt_regs *ctx)
{
	__u64 cw[CODE_WINDOW / 8], w = ctx->si, g = ctx->ax, why = ctx->dx, code = ctx->cx;
	__u64 frame = ctx->r8, now = bpf_ktime_get_ns();
	__u32 tid = current_tid(), owner = stage_owner ? stage_owner : tid;

	if (!batch_mode || !tid || !stage_addr || stage_closed)
		return 0;
	stage_check_key(tid, now);
	if (w > STAGE_BUF_BYTES)
		w = STAGE_BUF_BYTES;
	/* (a thread stopped so is read by user space: its batch is as it was, the next one not
	 * begun, until it goes on) */
	if (g == stage_g && w > stage_r &&
	    (stage_room(w - stage_r) || !stage_wait(stage_r, owner, tid)))
		stage_copy(stage_r, w, owner);
	/* the trampoline starts the next batch at 0, after this one's generation */
	stage_r = 0;
	stage_g = g + 1;
	stage_owner = tid;
	if (why & STAGE_FLUSH_TSTATE)
		note_tstate(ctx->r9);
	if ((why & STAGE_FLUSH_CODE) && !read_user(cw, sizeof(cw), code))
		send_code(code, (const struct code_window *)cw, tid, now);
	if (why & STAGE_FLUSH_CFUNC)
		send_cfunc(ctx->r9, code, frame, tid, now);
	/* a thread's first call (a switch) or a new code object: threading's bootstrap? */
	if ((why & (STAGE_FLUSH_CODE | STAGE_FLUSH_SWITCH)) && code &&
	    (code == bootstrap_codes[0] || code == bootstrap_codes[1])) {
		/* (named here, it need not wait) */
		if (!send_thread(frame, code, tid, now) && code == bootstrap_codes[0])
			request(0, REQ_THREAD_NAME, tid, now);
	}
	return 0;
}

/*
 * The process ends, or execs: the records staged there go with its memory, so they are copied
 * out first, by the thread that owns them. A thread that ends while the process runs on
 * leaves its records where they are (the next thread to stage copies them out, as the ended
 * thread's): the others may be staging at that moment. At a group exit none returns to user
 * mode any more.
 */
#define SIGNAL_GROUP_EXIT 0x4 /* linux/sched/signal.h */

/* The copy at a process's end or exec: one program that both below tail-call, so that the
 * verifier goes through the copy once rather than in each (~15 ms of every batch load). Set
 * by user space after the load (probes.c). */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} stage_out_prog SEC(".maps");

SEC("raw_tp")
int stage_out(void *ctx)
{
	__u32 tid = current_tid();

	if (tid)
		stage_drain(tid, false);
	return 0;
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(stage_at_exit)
{
	struct task_struct *task = bpf_get_current_task_btf();

	if (current_tid() && (!BPF_CORE_READ(task, signal, live.counter) ||
			      (BPF_CORE_READ(task, signal, flags) & SIGNAL_GROUP_EXIT)))
		bpf_tail_call(ctx, &stage_out_prog, 0);
	return 0;
}

/* (sched_process_exec comes after the old memory is gone: the exec system call's entry; this
 * runs at every system call on the machine while a batch recording lasts, and leaves at the
 * first compare but for an exec) */
SEC("raw_tp/sys_enter")
int BPF_PROG(stage_at_exec, struct pt_regs *regs, long id)
{
	if (id != 59 /* execve */ && id != 322 /* execveat */)
		return 0;
	if (current_tid())
		bpf_tail_call(ctx, &stage_out_prog, 0);
	return 0;
}

#endif /* __PYUPROF_STAGE_BPF_H */
