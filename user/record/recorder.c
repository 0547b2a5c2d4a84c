// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * One switch over the record types. Code identities are converted to UTF-8 here, once per code
 * object; calls and returns go straight to the profile builder. The first code objects are also
 * checked in the live process, so a layout table that does not fit stops the recording rather
 * than producing a wrong profile.
 */
#include <errno.h>
#include <linux/types.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/clock.h"
#include "base/log.h"
#include "base/proc.h"
#include "inject/tsc.h"
#include "profile/raw.h"
#include "pyuprof.h"
#include "record/cfunc_name.h"
#include "record/recorder.h"
#include "stage.h"
#include "target/pystr.h"
#include "target/thread_name.h"

/* Once per code object: remembers threading's bootstrap code, forgets a reused address. */
static void note_bootstrap(struct recorder *r, uint64_t code, bool bootstrap)
{
	int i;

	for (i = 0; i < r->nbootstrap; i++)
		if (r->bootstrap[i] == code)
			break;
	if (i < r->nbootstrap && !bootstrap)
		r->bootstrap[i] = r->bootstrap[--r->nbootstrap];
	else if (i == r->nbootstrap && bootstrap && r->nbootstrap < BOOTSTRAP_CODES)
		r->bootstrap[r->nbootstrap++] = code;
}

static bool is_bootstrap(const struct recorder *r, uint64_t code)
{
	int i;

	for (i = 0; code && i < r->nbootstrap; i++)
		if (r->bootstrap[i] == code)
			return true;
	return false;
}

/*
 * The threading name of a new thread from its first record. A thread started by threading
 * enters _bootstrap first, where the BPF side sends its self (the Thread) at once, ahead of
 * the call; failing that, the bootstrap frame of a call's chain or (at attach) of the
 * thread's outermost seed is read now. A Thread already gone leaves the kernel's name.
 */
static int python_name(const struct recorder *r, const void *data, char *out, size_t len)
{
	const struct ev_call *c = data;
	const struct raw_seed *sd = data;
	const struct ev_thread *th = data;
	uint64_t frames[1 + CHAIN_LEN], codes[1 + CHAIN_LEN];
	int i, n = 0, err;

	if (c->type == EV_THREAD && is_bootstrap(r, th->code)) {
		struct thread_name_path path;
		uint64_t type = 0;

		/* read by the BPF side as the thread entered, by a path given below */
		if (th->name_kind != STR_UNREADABLE) {
			pystr__to_utf8(th->name, sizeof(th->name), th->name_len, th->name_kind, out,
				       len);
			dlog("thread %u: named by the BPF side as it started", th->tid);
			return 0;
		}
		err = thread_name__of_object_path(r->target, th->self, th->tid, out, len, &path,
						  &type);
		if (!err) {
			if (path.how && r->name_path)
				r->name_path(r->name_path_ctx, type, &path);
			dlog("thread %u: named from its Thread (how %u for its class %#llx)", th->tid,
			     path.how, (unsigned long long)type);
			return 0;
		}
		vlog("thread %u: no threading name from its Thread at %#llx (%s)", th->tid,
		     (unsigned long long)th->self, strerror(-err));
	} else if (c->type == EV_CALL) {
		frames[n] = c->frame;
		codes[n++] = c->code;
		for (i = 0; i < CHAIN_LEN; i++) {
			frames[n] = c->chain[i];
			codes[n++] = c->chain_code[i];
		}
	} else if (c->type == RAW_SEED) {
		frames[n] = sd->frame;
		codes[n++] = sd->code;
	}
	for (i = 0; i < n; i++) {
		if (!is_bootstrap(r, codes[i]))
			continue;
		err = thread_name__read(r->target, frames[i], codes[i], c->tid, out, len);
		if (!err)
			return 0;
		vlog("thread %u: no threading name from its frame at %#llx (%s)", c->tid,
		     (unsigned long long)frames[i], strerror(-err));
	}
	/* the thread that imported threading, by CPython's own name for it */
	if (c->tid == (__u32)r->live_pid) {
		snprintf(out, len, "%s", MAIN_THREAD_NAME);
		return 0;
	}
	return -ENOENT;
}

static int on_code(struct recorder *r, const struct ev_code *e)
{
	char filename[FILENAME_BYTES * 4 + 8], name[FUNCNAME_BYTES * 4 + 8];
	char qualname[FUNCNAME_BYTES * 4 + 8] = "";
	int err;

	pystr__to_utf8(e->filename, sizeof(e->filename), e->filename_len, e->filename_kind,
		      filename, sizeof(filename));
	pystr__to_utf8(e->name, sizeof(e->name), e->name_len, e->name_kind, name, sizeof(name));
	if (r->checks_ok + r->checks_bad < CODE_CHECKS) {
		if (strncmp(e->type_name, "code", sizeof(e->type_name)))
			r->checks_bad++;
		else
			r->checks_ok++;
		if (r->checks_bad) {
			elog("the object entered at %#llx is not a code object (its type is '%.8s'): "
			     "pyuprof's layout for Python %s does not fit this process",
			     (unsigned long long)e->code, e->type_name, r->target_version);
			return r->err = -EINVAL;
		}
	}
	if (r->target)
		note_bootstrap(r, e->code, thread_name__is_bootstrap(filename, name));
	err = profile__code(r->prof, e->code, filename, name, e->firstlineno);
	if (!err)
		err = profile__code_flags(r->prof, e->code, e->co_flags);
	if (err || e->qualname_kind == STR_UNREADABLE)
		return err;
	pystr__to_utf8(e->qualname, sizeof(e->qualname), e->qualname_len, e->qualname_kind,
		      qualname, sizeof(qualname));
	return profile__qualname(r->prof, e->code, qualname);
}

static int on_cfunc(struct recorder *r, const struct ev_cfunc *e)
{
	char name[CFUNC_NAME_BYTES * 6 + 64];

	cfunc_name__format(e, name, sizeof(name));
	return profile__cfunc(r->prof, e->key, name);
}

/* A thread's name, as it starts or is first seen; a start on the tid of a thread that ended
 * (the kernel gives tids again) is a thread of its own. */
static int on_thread(struct recorder *r, const struct raw_thread *t)
{
	struct thread *th = profile__thread(r->prof, t->tid);

	if (th && thread__lived(th))
		th = profile__thread_new(r->prof, t->tid);

	if (!th)
		return -ENOMEM;
	_Static_assert(sizeof(th->name) == sizeof(t->name), "thread name lengths");
	memcpy(th->name, t->name, sizeof(th->name));
	th->name[sizeof(th->name) - 1] = 0;
	return 0;
}

/*
 * Live: a thread seen for the first time is named, by threading if it can be read, else by the
 * kernel (comm); the raw recording keeps the name.
 */
static int note_thread(struct recorder *r, const void *data)
{
	__u32 tid = ((const struct ev_call *)data)->tid;
	struct raw_thread t = { .type = RAW_THREAD, .tid = tid };
	char path[64];
	FILE *f;
	int err;

	if (!r->live_pid)
		return 0;
	/* (a thread that starts through threading where one ended is named again) */
	if (profile__has_thread(r->prof, tid) &&
	    (((const struct ev_call *)data)->type != EV_THREAD ||
	     !thread__lived(profile__thread(r->prof, tid))))
		return 0;
	if (!r->target || python_name(r, data, t.name, sizeof(t.name))) {
		snprintf(path, sizeof(path), "/proc/%d/task/%u/comm", r->live_pid, tid);
		f = fopen(path, "re");
		if (f) {
			if (!fgets(t.name, sizeof(t.name), f))
				t.name[0] = 0;
			t.name[strcspn(t.name, "\n")] = 0;
			fclose(f);
		}
	}
	if (r->raw) {
		err = raw__record(r->raw, &t, sizeof(t));
		if (err)
			return err;
	}
	return on_thread(r, &t);
}

/* The staged entry, with whatever of its chain came. */
static int staged_entry_out(struct recorder *r)
{
	if (!r->has_staged_entry)
		return 0;
	r->has_staged_entry = false;
	return recorder__handle(r, &r->staged_entry, sizeof(r->staged_entry));
}

/* A staged time (the TSC below a record's tag) in CLOCK_MONOTONIC. */
static uint64_t staged_ns(uint64_t w0)
{
	return tsc__to_ns(STAGE_TSC(w0));
}

/* One whole record of thread tid, w[0] telling its kind. */
static int staged_record(struct recorder *r, uint32_t tid, const uint64_t *w)
{
	struct ev_call *e = &r->staged_entry;
	uint64_t tag = STAGE_TAG(w[0]);
	int err;

	if (tag == STAGE_TAG_ENTRY) {
		err = staged_entry_out(r);
		memset(e, 0, sizeof(*e));
		e->type = EV_CALL;
		e->tid = tid;
		e->ts_ns = staged_ns(w[0]);
		e->frame = w[1] & ~(uint64_t)STAGE_FRAME_FLAGS;
		e->flags = w[1] & STAGE_GEN_CREATE ? CALL_GEN_CREATE : 0;
		e->code = w[2];
		e->chain[0] = w[3];
		r->has_staged_entry = true;
		return err;
	}
	if (tag == STAGE_TAG_EXIT || tag == STAGE_TAG_EXIT_DONE || tag == STAGE_TAG_EXIT_NONE) {
		/* a struct ev_return, in storage any record fits */
		struct ev_call ret = { .type = tag == STAGE_TAG_EXIT_NONE ? EV_RETURN_DONE_NONE :
					       tag == STAGE_TAG_EXIT_DONE ? EV_RETURN_DONE :
									   EV_RETURN,
				       .tid = tid, .ts_ns = staged_ns(w[0]) };

		err = staged_entry_out(r);
		return err ? err : recorder__handle(r, &ret, sizeof(struct ev_return));
	}
	if (tag == STAGE_TAG_RESUME) {
		struct ev_resume res = { .type = EV_RESUME, .tid = tid, .frame = w[1] };

		err = staged_entry_out(r);
		return err ? err : recorder__handle(r, &res, sizeof(res));
	}
	if (tag == STAGE_TAG_CCALL) {
		struct ev_ccall c = { .type = EV_CCALL, .tid = tid, .ts_ns = staged_ns(w[0]),
				      .key = w[1], .frame = w[2] };

		err = staged_entry_out(r);
		return err ? err : recorder__handle(r, &c, sizeof(c));
	}
	if (tag == STAGE_TAG_CRET) {
		struct ev_ccall c = { .type = EV_CRETURN, .tid = tid, .ts_ns = staged_ns(w[0]),
				      .frame = w[1] };

		err = staged_entry_out(r);
		return err ? err : recorder__handle(r, &c, sizeof(c));
	}
	if (tag == STAGE_TAG_CSYNC) {
		struct ev_return ret = { .type = EV_CSYNC, .tid = tid, .ts_ns = staged_ns(w[0]) };

		err = staged_entry_out(r);
		return err ? err : recorder__handle(r, &ret, sizeof(ret));
	}
	if (tag == STAGE_TAG_GAUGE) {
		struct raw_gauge g = { .type = RAW_GAUGE, .tid = tid, .ts_ns = staged_ns(w[0]),
				       .ps = tsc__ps(w[1]) };

		err = staged_entry_out(r);
		return err ? err : recorder__handle(r, &g, sizeof(g));
	}
	if (tag == STAGE_TAG_PAUSE) {
		struct raw_pause pause = { .type = RAW_FLUSH, .tid = tid };
		uint64_t t0 = staged_ns(w[0]), t1 = tsc__to_ns(w[1]);

		pause.ns = t1 > t0 ? t1 - t0 : 0;
		err = staged_entry_out(r);
		return err ? err : recorder__handle(r, &pause, sizeof(pause));
	}
	/* a chain: its entry came right before */
	if (r->has_staged_entry && e->tid == tid) {
		e->chain_code[0] = w[0] & ~(uint64_t)STAGE_CHAIN_FLAGS;
		e->flags |= (w[0] & STAGE_CHAIN_GEN0 ? CALL_CHAIN_GEN(0) : 0) |
			    (w[0] & STAGE_CHAIN_GEN1 ? CALL_CHAIN_GEN(1) : 0);
		e->chain[1] = w[1];
		e->chain_code[1] = w[2];
		e->back = w[3];
		return staged_entry_out(r);
	}
	r->staged_bad++;
	return 0;
}

/*
 * Records the trampoline staged (include/stage.h), thread tid's, become the calls and returns
 * the per-call probes would have sent, so that everything after (the raw recording too) is as
 * it is without the batch. Their TSC stamps become CLOCK_MONOTONIC. A record a chunk ended
 * inside waits for the next chunk of that copy (the same thread's, from where it ended, not
 * a copy's first); anything else in between means the rest was lost (the ring had no room),
 * and so is it.
 */
int recorder__staged(struct recorder *r, uint32_t tid, uint32_t from, bool first,
		     const void *bytes, uint32_t size)
{
	const uint8_t *p = bytes;
	uint32_t at = 0, n, take;
	int err = 0;

	/* (a copy that begins where the cut ended is another batch's, after the rest was lost) */
	if (r->cut_bytes && (first || tid != r->cut_tid || from != r->cut_end)) {
		r->staged_bad++;
		r->cut_bytes = 0;
	}
	if (r->cut_bytes) {
		n = stage_rec_bytes(r->cut[0]);
		take = n - r->cut_bytes < size ? n - r->cut_bytes : size;
		memcpy((uint8_t *)r->cut + r->cut_bytes, p, take);
		r->cut_bytes += take;
		at = take;
		r->cut_end += take;
		if (r->cut_bytes < n)
			return 0;
		r->cut_bytes = 0;
		err = staged_record(r, tid, r->cut);
	}
	while (!err && size - at >= 8) {
		uint64_t w[STAGE_ENTRY_BYTES / 8];

		memcpy(w, p + at, 8);
		n = stage_rec_bytes(w[0]);
		if (!n) { /* (nothing after it can be told apart) */
			r->staged_bad++;
			break;
		}
		if (n > size - at) {
			memcpy(r->cut, p + at, size - at);
			r->cut_bytes = size - at;
			r->cut_tid = tid;
			r->cut_end = from + size;
			break;
		}
		memcpy(w, p + at, n);
		err = staged_record(r, tid, w);
		at += n;
	}
	if (!err && size - at && size - at < 8 && !r->cut_bytes)
		r->staged_bad++; /* (records are whole words: never) */
	return err;
}

int recorder__staged_end(struct recorder *r)
{
	int err = staged_entry_out(r);

	if (err && !r->err)
		r->err = err;
	return err;
}

/* A chunk the BPF side copied out: its records, after the header. */
static int on_batch(struct recorder *r, const struct ev_batch *b, size_t size)
{
	if (sizeof(*b) + (size_t)b->bytes > size)
		return r->err = -EINVAL;
	return recorder__staged(r, b->tid, b->from, b->first, b + 1, b->bytes);
}

/*
 * A thread stopped at a flush or drain because the ring had no room (include/stage.h,
 * REQ_STAGE_REST): everything before it has been read by now, so its records are read from the
 * target and go next, as the BPF side would have sent them (the thread, stopped, has not
 * touched the area since: at a flush it starts the next batch as it goes on). The time it waits
 * is taken out of its profile (RAW_PAUSE: a report of the raw recording does the same).
 */
static int stage_rest(struct recorder *r, const struct ev_request *q)
{
	uint32_t from = STAGE_REST_FROM(q->addr), owner = STAGE_REST_OWNER(q->addr);
	struct raw_pause pause = { .type = RAW_PAUSE, .tid = q->tid };
	uint64_t w = 0, now = clock__mono_ns();
	uint8_t *data = NULL;
	bool unread = false;
	int err = 0;

	if (!r->live_pid || !r->stage)
		return 0;
	/* (owner 0: the thread only waited, with nothing staged of its own) */
	if (owner)
		unread = proc__read(r->live_pid, r->stage + STAGE_W, &w, sizeof(w)) != 0;
	if (w > STAGE_BUF_BYTES)
		w = STAGE_BUF_BYTES;
	if (!unread && from < w) {
		data = malloc(w - from);
		if (!data)
			return -ENOMEM;
		unread = proc__read(r->live_pid, r->stage + STAGE_BUF + from, data, w - from) != 0;
		if (!unread)
			err = recorder__staged(r, owner, from, true, data, (uint32_t)(w - from));
		free(data);
	}
	if (unread) /* the process ended while its thread waited */
		wlog("pid %d: the calls thread %u staged while it waited for pyuprof could not be "
		     "read (it has ended): they are not recorded", r->live_pid, q->tid);
	pause.ns = now > q->ts_ns ? now - q->ts_ns : 0;
	if (!err && r->raw)
		err = raw__record(r->raw, &pause, sizeof(pause));
	if (!err)
		err = profile__pause(r->prof, q->tid, pause.ns);
	return err;
}

static int on_stage_rest(struct recorder *r, const struct ev_request *q)
{
	int err = stage_rest(r, q);

	if (q->signalled && r->held)
		ptrace_hold__expect_signal(r->held, (pid_t)q->tid);
	return err ? (r->err = err) : 0;
}

int recorder__handle(void *ctx, void *data, size_t size)
{
	struct recorder *r = ctx;
	const struct ev_call *c = data;
	int err = 0;

	if (r->err || size < sizeof(struct ev_return))
		return r->err;
	/* a staged entry's chain comes next in its own thread's records, or not at all */
	if (c->type == EV_BATCH)
		return on_batch(r, data, size);
	/* (its records may be from before the stop, whenever it came) */
	if (c->type == EV_REQUEST && ((const struct ev_request *)data)->what == REQ_STAGE_REST)
		return on_stage_rest(r, data);
	if (r->has_staged_entry && c->tid == r->staged_entry.tid && c->type != EV_CODE &&
	    c->type != EV_CFUNC) {
		err = staged_entry_out(r);
		if (err)
			return err;
	}
	if (r->stop_ns && c->ts_ns > r->stop_ns && c->type != EV_CODE && c->type != EV_CFUNC &&
	    c->type != RAW_THREAD &&
	    c->type != EV_RESUME) /* (no time: a frame where ts_ns would be) */
		return 0; /* made while the probes were being removed; not in the raw record */
	if (c->type != EV_CODE && c->type != EV_CFUNC && c->type != EV_REQUEST &&
	    c->type != RAW_THREAD && c->type != RAW_COMMAND) {
		/* a seed's thread is named like any other (struct raw_seed starts with tid) */
		err = note_thread(r, data);
		if (err)
			return r->err = err;
	}
	/* a Thread object's address only matters live: its name is in the RAW_THREAD */
	if (r->raw && c->type != EV_THREAD) {
		err = raw__record(r->raw, data, (uint32_t)size);
		if (err)
			return r->err = err;
	}
	switch (c->type) {
	case EV_CALL:
		err = profile__call(r->prof, c->tid, c->ts_ns, c->code, c->frame, c->chain,
				    c->chain_code, c->back, c->flags);
		break;
	case EV_EXIT:
		err = profile__exit(r->prof, c->tid, c->ts_ns, c->frame, c->code, c->chain[0]);
		break;
	case EV_INLINE_CALL:
		err = profile__inline_call(r->prof, c->tid, c->ts_ns, c->code, c->frame,
					   c->chain[0]);
		break;
	case EV_RETURN:
		err = profile__return(r->prof, c->tid, c->ts_ns);
		break;
	case EV_RETURN_DONE:
	case EV_RETURN_DONE_NONE:
		err = profile__gen_return(r->prof, c->tid, c->ts_ns, c->type == EV_RETURN_DONE_NONE);
		break;
	case EV_RESUME:
		err = profile__resume(r->prof, c->tid, ((const struct ev_resume *)data)->frame);
		break;
	case EV_CODE:
		err = on_code(r, data);
		break;
	case EV_CFUNC:
		if (size >= sizeof(struct ev_cfunc))
			err = on_cfunc(r, data);
		break;
	case EV_CCALL: {
		const struct ev_ccall *cc = data;

		if (size >= sizeof(*cc))
			err = profile__ccall(r->prof, cc->tid, cc->ts_ns, cc->key, cc->frame);
		break;
	}
	case EV_CRETURN: {
		const struct ev_ccall *cr = data;

		if (size >= sizeof(*cr))
			err = profile__creturn(r->prof, cr->tid, cr->ts_ns, cr->frame);
		break;
	}
	case EV_CSYNC:
		err = profile__csync(r->prof, c->tid, c->ts_ns);
		break;
	case RAW_THREAD:
		err = on_thread(r, data);
		break;
	case RAW_COMMAND:
		if (r->run)
			snprintf(r->run->command, sizeof(r->run->command), "%.*s",
				 (int)sizeof(r->run->command) - 1,
				 ((const struct raw_command *)data)->command);
		break;
	case RAW_PAUSE: {
		const struct raw_pause *ps = data;

		err = profile__pause(r->prof, ps->tid, ps->ns);
		break;
	}
	case RAW_FLUSH: {
		const struct raw_pause *ps = data;

		err = profile__flush(r->prof, ps->tid, ps->ns);
		break;
	}
	case RAW_GAUGE: {
		const struct raw_gauge *g = data;

		if (size >= sizeof(*g))
			err = profile__gauge(r->prof, g->tid, g->ts_ns, g->ps);
		break;
	}
	case RAW_SEED: {
		const struct raw_seed *sd = data;

		err = profile__seed(r->prof, sd->tid, sd->ts_ns, sd->frame, sd->code);
		break;
	}
	case EV_REQUEST: {
		const struct ev_request *q = data;

		if (q->what == REQ_STAGE_KEY)
			r->key_bad = true;
		else
			hook__request(r->hooks, q);
		if (q->signalled && r->held)
			ptrace_hold__expect_signal(r->held, (pid_t)q->tid);
		break;
	}
	default:
		break;
	}
	if (err && !r->err)
		r->err = err;
	return r->err;
}
