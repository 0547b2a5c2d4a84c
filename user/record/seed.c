// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The attach-time frame walk. Everything is read from the stopped target through the same
 * layout table as the BPF side uses, and turned into the same records (code identities as
 * struct ev_code, frames as struct raw_seed), so that a raw recording replays them as well.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "base/hashmap.h"
#include "base/proc.h"
#include "profile/raw.h"
#include "record/seed.h"

#define SEED_MAX_THREADS 4096
#define SEED_MAX_INTERPS 64

/* Fills e with code's identity; returns 0, or -EINVAL if it is not a readable code object. */
static int read_code(const struct py_target *t, uint64_t code, uint32_t tid, uint64_t ts,
		     struct ev_code *e)
{
	const struct py_offsets *o = &t->offsets->bpf;
	uint64_t type, name, filename, fname, qualname = 0;

	memset(e, 0, sizeof(*e));
	if (proc__read(t->pid, code + t->offsets->PyObject_ob_type, &type, sizeof(type)) ||
	    proc__read(t->pid, type + t->offsets->PyTypeObject_tp_name, &name, sizeof(name)) ||
	    proc__read(t->pid, name, e->type_name, 5) || strcmp(e->type_name, "code") ||
	    proc__read(t->pid, code + o->PyCodeObject_co_firstlineno, &e->firstlineno, 4) ||
	    proc__read(t->pid, code + o->PyCodeObject_co_flags, &e->co_flags, 4) ||
	    proc__read(t->pid, code + o->PyCodeObject_co_filename, &filename, 8) ||
	    proc__read(t->pid, code + o->PyCodeObject_co_name, &fname, 8))
		return -EINVAL;
	e->type = EV_CODE;
	e->tid = tid;
	e->ts_ns = ts;
	e->code = code;
	e->filename_kind = py_target__read_str(t, filename, e->filename, sizeof(e->filename),
				    &e->filename_len);
	e->name_kind = py_target__read_str(t, fname, e->name, sizeof(e->name), &e->name_len);
	e->qualname_kind = STR_UNREADABLE;
	if (t->offsets->PyCodeObject_co_qualname &&
	    !proc__read(t->pid, code + t->offsets->PyCodeObject_co_qualname, &qualname, 8))
		e->qualname_kind = py_target__read_str(t, qualname, e->qualname,
						       sizeof(e->qualname), &e->qualname_len);
	return 0;
}

/* One thread: its frames innermost first into the seeds, outermost first. */
static int walk_thread(struct seeds *s, const struct py_target *t, uint64_t tstate, uint32_t tid,
		       uint64_t ts, struct u64_map *known, uint32_t *codes_cap,
		       uint32_t *frames_cap)
{
	const struct py_offsets *o = &t->offsets->bpf;
	uint64_t frames[SEED_MAX_FRAMES], codes[SEED_MAX_FRAMES], frame, code;
	unsigned char owner;
	int n = 0, i, err;

	frame = py_target__current_frame(t, tstate);
	while (frame && n < SEED_MAX_FRAMES) {
		owner = 0;
		if (o->frame_owner)
			proc__read(t->pid, frame + o->frame_owner, &owner, 1);
		/* owner >= 3: a C-stack shim frame (3.12+), no call */
		if (owner < 3 && (code = py_target__frame_code(t, frame))) {
			frames[n] = frame;
			codes[n++] = code;
		}
		if (proc__read(t->pid, frame + o->frame_back, &frame, sizeof(frame)))
			break;
	}
	for (i = n - 1; i >= 0; i--) {
		uint64_t *seen = u64_map__upsert(known, codes[i]);

		if (!seen)
			return -ENOMEM;
		if (!*seen) {
			err = array_grow((void **)&s->codes, codes_cap, sizeof(*s->codes),
					 s->ncodes + 1);
			if (err)
				return err;
			if (read_code(t, codes[i], tid, ts, &s->codes[s->ncodes]))
				return 0; /* the chain is not readable from here on: stop */
			s->ncodes++;
			*seen = 1;
		}
		err = array_grow((void **)&s->frames, frames_cap, sizeof(*s->frames),
				 s->nframes + 1);
		if (err)
			return err;
		s->frames[s->nframes++] = (struct raw_seed){
			.type = RAW_SEED, .tid = tid, .ts_ns = ts, .frame = frames[i],
			.code = codes[i],
		};
	}
	return 0;
}

int seeds__walk(struct seeds *s, const struct py_target *t, struct ptrace_hold *held, uint64_t ts)
{
	static pid_t tids[SEED_MAX_THREADS];
	static uint64_t bases[SEED_MAX_THREADS];
	const struct py_offsets_entry *o = t->offsets;
	uint64_t interp = 0, tstate, pthread;
	uint32_t codes_cap = 0, frames_cap = 0;
	struct u64_map known;
	int nt, i, j, k, err = 0;

	memset(s, 0, sizeof(*s));
	u64_map__init(&known);
	nt = ptrace_hold__fs_bases(held, t->pid, tids, bases, SEED_MAX_THREADS);
	if (t->runtime_addr)
		proc__read(t->pid, t->runtime_addr + o->PyRuntime_interpreters_head, &interp,
			  sizeof(interp));
	for (i = 0; interp && i < SEED_MAX_INTERPS && !err; i++) {
		tstate = 0;
		proc__read(t->pid, interp + o->PyInterpreterState_threads_head, &tstate,
			  sizeof(tstate));
		for (j = 0; tstate && j < SEED_MAX_THREADS && !err; j++) {
			if (!proc__read(t->pid, tstate + o->PyThreadState_thread_id, &pthread,
				       sizeof(pthread)))
				for (k = 0; k < nt; k++)
					if (bases[k] == pthread)
						err = walk_thread(s, t, tstate, (uint32_t)tids[k], ts,
								  &known, &codes_cap, &frames_cap);
			if (proc__read(t->pid, tstate + o->PyThreadState_next, &tstate,
				      sizeof(tstate)))
				break;
		}
		if (proc__read(t->pid, interp + o->PyInterpreterState_next, &interp, sizeof(interp)))
			break;
	}
	u64_map__free(&known);
	return err;
}

int seeds__apply(const struct seeds *s, struct recorder *r)
{
	uint32_t i;
	int err = 0;

	for (i = 0; i < s->ncodes && !err; i++)
		err = recorder__handle(r, &s->codes[i], sizeof(s->codes[i]));
	for (i = 0; i < s->nframes && !err; i++)
		err = recorder__handle(r, &s->frames[i], sizeof(s->frames[i]));
	return err;
}

void seeds__free(struct seeds *s)
{
	free(s->codes);
	free(s->frames);
	memset(s, 0, sizeof(*s));
}
