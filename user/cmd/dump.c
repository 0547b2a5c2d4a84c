// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The stacks are read with every thread of the target in a ptrace stop (seized, so the target
 * sees no signal), the same stop as record takes to read the frames running at attach: a
 * stopped thread cannot change a frame under the walk, so what is printed is one consistent
 * moment. Each thread's state (running or not) is read from /proc before the stop; the GIL's
 * holder from the interpreter (py_lines.h). Everything is copied out, the target let go, and
 * only then printed, so a slow terminal does not keep it stopped.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "base/clock.h"
#include "base/hashmap.h"
#include "base/log.h"
#include "base/proc.h"
#include "cmd/dump.h"
#include "inject/ptrace_hold.h"
#include "output/json_writer.h"
#include "pyuprof.h"
#include "target/py_lines.h"
#include "target/py_target.h"
#include "target/pystr.h"
#include "target/thread_name.h"

#define DUMP_MAX_THREADS 4096
#define DUMP_MAX_FRAMES 1024 /* per thread, from the innermost */
#define DUMP_MAX_INTERPS 64
#define STR_RAW 1024	     /* bytes of a name or file name copied */

struct dump_frame {
	char *name, *filename;
	int line; /* -1: none */
};

struct dump_thread {
	uint32_t tid; /* 0: not matched to a kernel thread */
	uint64_t tstate, pthread;
	char name[64];
	bool active, gil;
	struct dump_frame *frames; /* innermost first */
	uint32_t nframes, cap;
};

struct dump {
	const struct py_target *t;
	const struct py_line_layout *lay;
	struct dump_thread *th;
	uint32_t n, cap;
	uint8_t *table; /* scratch for line tables */
};

/* A str of the target as UTF-8 (malloc'd), "???" if unreadable. */
static char *read_utf8(const struct py_target *t, uint64_t str)
{
	char raw[STR_RAW], out[STR_RAW * 2];
	uint32_t len;
	uint8_t kind = py_target__read_str(t, str, raw, sizeof(raw), &len);

	if (kind == STR_UNREADABLE)
		return strdup("???");
	pystr__to_utf8(raw, sizeof(raw), len, kind, out, sizeof(out));
	return strdup(out);
}

/* The line frame (running code) is at, or -1. */
static int frame_line(struct dump *d, uint64_t frame, uint64_t code, int first)
{
	const struct py_target *t = d->t;
	uint64_t table, instr;
	int64_t size;
	int32_t lasti;
	int addr;

	if (proc__read(t->pid, code + d->lay->code_table, &table, sizeof(table)) ||
	    proc__read(t->pid, table + BYTES_SIZE, &size, sizeof(size)) || size < 0 ||
	    size > LINE_TABLE_MAX ||
	    (size && proc__read(t->pid, table + BYTES_DATA, d->table, (size_t)size)))
		return -1;
	if (t->minor <= 10) {
		if (proc__read(t->pid, frame + d->lay->frame_instr, &lasti, sizeof(lasti)))
			return -1;
		/* f_lasti counts bytes up to 3.9, code units in 3.10 */
		addr = t->minor == 10 && lasti >= 0 ? lasti * 2 : lasti;
	} else {
		if (proc__read(t->pid, frame + d->lay->frame_instr, &instr, sizeof(instr)))
			return -1;
		/* 3.11, 3.12: the last instruction run (first - 1 before the first); 3.13: the one
		 * running or about to (_PyInterpreterFrame_LASTI) */
		addr = (int)((int64_t)(instr - (code + d->lay->code_adaptive)));
	}
	return py_lines__line(t->minor, d->table, (size_t)size, first, addr);
}

/* 1 if code is a code object, 0 if not, -1 if unreadable. */
static int is_code(const struct py_target *t, uint64_t code)
{
	uint64_t type, name;
	char buf[5];

	if (proc__read(t->pid, code + t->offsets->PyObject_ob_type, &type, sizeof(type)) ||
	    proc__read(t->pid, type + t->offsets->PyTypeObject_tp_name, &name, sizeof(name)) ||
	    proc__read(t->pid, name, buf, sizeof(buf)))
		return -1;
	return !memcmp(buf, "code", 5);
}

/* One thread's frames, innermost first; its threading name from its bootstrap frame. */
static int walk_thread(struct dump *d, struct dump_thread *th)
{
	const struct py_target *t = d->t;
	const struct py_offsets *o = &t->offsets->bpf;
	uint64_t frame = py_target__current_frame(t, th->tstate), code, s;
	unsigned char owner;
	int first, n;

	for (n = 0; frame && n < DUMP_MAX_FRAMES; n++) {
		struct dump_frame *f;

		owner = 0;
		if (o->frame_owner)
			proc__read(t->pid, frame + o->frame_owner, &owner, 1);
		/* owner 3 (3.12+): a C-stack shim frame, not Python code */
		if (owner < 3 && (code = py_target__frame_code(t, frame)) &&
		    is_code(t, code) == 1) {
			if (array_grow((void **)&th->frames, &th->cap, sizeof(*th->frames),
				       th->nframes + 1))
				return -ENOMEM;
			f = &th->frames[th->nframes++];
			first = 0;
			proc__read(t->pid, code + o->PyCodeObject_co_firstlineno, &first, 4);
			f->name = proc__read(t->pid, code + o->PyCodeObject_co_name, &s, 8)
					  ? strdup("???") : read_utf8(t, s);
			f->filename = proc__read(t->pid, code + o->PyCodeObject_co_filename, &s, 8)
					      ? strdup("???") : read_utf8(t, s);
			if (!f->name || !f->filename)
				return -ENOMEM;
			f->line = frame_line(d, frame, code, first);
			if (!th->name[0] && th->tid &&
			    thread_name__is_bootstrap(f->filename, f->name) &&
			    thread_name__read(t, frame, code, th->tid, th->name, sizeof(th->name)))
				th->name[0] = 0;
		}
		if (proc__read(t->pid, frame + o->frame_back, &frame, sizeof(frame)))
			break;
	}
	if (!th->name[0] && th->tid == (uint32_t)t->pid)
		snprintf(th->name, sizeof(th->name), "%s", MAIN_THREAD_NAME);
	return 0;
}

/* The thread state holding interp's GIL now, or 0. */
static uint64_t gil_holder(const struct dump *d, uint64_t interp)
{
	const struct py_target *t = d->t;
	uint64_t gil = 0, holder = 0;
	int32_t locked = 0;

	if (d->lay->interp_gil)
		proc__read(t->pid, interp + d->lay->interp_gil, &gil, sizeof(gil));
	else if (t->runtime_addr)
		gil = t->runtime_addr + d->lay->runtime_gil;
	if (!gil || proc__read(t->pid, gil + GIL_LOCKED, &locked, sizeof(locked)) || !locked ||
	    proc__read(t->pid, gil + GIL_LAST_HOLDER, &holder, sizeof(holder)))
		return 0;
	return holder;
}

/* The threads of pid the kernel says are running (state R in /proc/PID/task/TID/stat), at
 * most max. Returns how many. */
static int running_threads(pid_t pid, pid_t *tids, int max)
{
	char path[300], buf[512], *p;
	struct dirent *e;
	DIR *dir;
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	while (dir && n < max && (e = readdir(dir))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", pid, e->d_name);
		f = fopen(path, "re");
		if (f && fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) && p[1] == ' ' &&
		    p[2] == 'R')
			tids[n++] = atoi(e->d_name);
		if (f)
			fclose(f);
	}
	if (dir)
		closedir(dir);
	return n;
}

/* With the target stopped: every thread state of every interpreter, and its frames. */
static int walk(struct dump *d, struct ptrace_hold *held, const pid_t *run_tids, int nrun)
{
	static pid_t tids[DUMP_MAX_THREADS];
	static uint64_t bases[DUMP_MAX_THREADS];
	const struct py_target *t = d->t;
	const struct py_offsets_entry *o = t->offsets;
	uint64_t interp = 0, tstate, holder;
	int nt, i, j, k, err;

	nt = ptrace_hold__fs_bases(held, t->pid, tids, bases, DUMP_MAX_THREADS);
	if (t->runtime_addr)
		proc__read(t->pid, t->runtime_addr + o->PyRuntime_interpreters_head, &interp,
			  sizeof(interp));
	for (i = 0; interp && i < DUMP_MAX_INTERPS; i++) {
		holder = gil_holder(d, interp);
		tstate = 0;
		proc__read(t->pid, interp + o->PyInterpreterState_threads_head, &tstate,
			  sizeof(tstate));
		for (j = 0; tstate && j < DUMP_MAX_THREADS; j++) {
			struct dump_thread *th;

			if (array_grow((void **)&d->th, &d->cap, sizeof(*d->th), d->n + 1))
				return -ENOMEM;
			th = &d->th[d->n++];
			memset(th, 0, sizeof(*th));
			th->tstate = tstate;
			th->gil = holder && holder == tstate;
			proc__read(t->pid, tstate + o->PyThreadState_thread_id, &th->pthread,
				  sizeof(th->pthread));
			for (k = 0; k < nt; k++)
				if (bases[k] == th->pthread)
					th->tid = (uint32_t)tids[k];
			for (k = 0; th->tid && k < nrun; k++)
				if (run_tids[k] == (pid_t)th->tid)
					th->active = true;
			err = walk_thread(d, th);
			if (err)
				return err;
			if (proc__read(t->pid, tstate + o->PyThreadState_next, &tstate,
				      sizeof(tstate)))
				break;
		}
		if (proc__read(t->pid, interp + o->PyInterpreterState_next, &interp, sizeof(interp)))
			break;
	}
	return 0;
}

static const char *status_of(const struct dump_thread *th)
{
	if (th->active)
		return th->gil ? "active+gil" : "active";
	return th->gil ? "idle+gil" : "idle";
}

static void cmdline_of(pid_t pid, char *buf, size_t len)
{
	char path[64];
	size_t n = 0, i;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	f = fopen(path, "re");
	if (f) {
		n = fread(buf, 1, len - 1, f);
		fclose(f);
	}
	for (i = 0; i + 1 < n; i++)
		if (!buf[i])
			buf[i] = ' ';
	buf[n] = 0;
}

/* Threads in the order the interpreter made them (its list is newest first), as py-spy. */
static void print_text(const struct dump *d)
{
	char cmd[4096], exe[4096] = "", link[64];
	ssize_t n;

	cmdline_of(d->t->pid, cmd, sizeof(cmd));
	snprintf(link, sizeof(link), "/proc/%d/exe", d->t->pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	printf("Process %d: %s\nPython v%s (%s)\n", d->t->pid, cmd, d->t->version, exe);
	for (uint32_t i = d->n; i-- > 0;) {
		const struct dump_thread *th = &d->th[i];

		/* a thread state not matched to a kernel thread: its pthread id, as py-spy */
		if (th->tid)
			printf("\nThread %u (%s)", th->tid, status_of(th));
		else
			printf("\nThread %#llx (%s)", (unsigned long long)th->pthread,
			       status_of(th));
		if (th->name[0])
			printf(": \"%s\"", th->name);
		putchar('\n');
		for (uint32_t j = 0; j < th->nframes; j++) {
			const struct dump_frame *f = &th->frames[j];

			if (f->line >= 0)
				printf("    %s (%s:%d)\n", f->name, f->filename, f->line);
			else
				printf("    %s (%s)\n", f->name, f->filename);
		}
	}
	fflush(stdout);
}

static int print_json(const struct dump *d)
{
	struct outfile out = { .fd = STDOUT_FILENO };
	struct json_writer *w = json_writer__new(&out, 2);

	if (!w)
		return -errno;
	json_writer__array_begin(w);
	for (uint32_t i = d->n; i-- > 0;) {
		const struct dump_thread *th = &d->th[i];

		json_writer__object_begin(w);
		json_writer__u64_field(w, "pid", (uint64_t)d->t->pid);
		json_writer__u64_field(w, "thread_id", th->pthread);
		json_writer__u64_field(w, "os_thread_id", th->tid);
		json_writer__name(w, "thread_name");
		if (th->name[0])
			json_writer__string(w, th->name);
		else
			json_writer__null(w);
		json_writer__name(w, "active");
		json_writer__bool(w, th->active);
		json_writer__name(w, "owns_gil");
		json_writer__bool(w, th->gil);
		json_writer__name(w, "frames");
		json_writer__array_begin(w);
		for (uint32_t j = 0; j < th->nframes; j++) {
			const struct dump_frame *f = &th->frames[j];

			json_writer__object_begin(w);
			json_writer__string_field(w, "name", f->name);
			json_writer__string_field(w, "filename", f->filename);
			json_writer__name(w, "line");
			if (f->line >= 0)
				json_writer__s64(w, f->line);
			else
				json_writer__null(w);
			json_writer__object_end(w);
		}
		json_writer__array_end(w);
		json_writer__object_end(w);
	}
	json_writer__array_end(w);
	return json_writer__close(w);
}

static void dump_free(struct dump *d)
{
	for (uint32_t i = 0; i < d->n; i++) {
		for (uint32_t j = 0; j < d->th[i].nframes; j++) {
			free(d->th[i].frames[j].name);
			free(d->th[i].frames[j].filename);
		}
		free(d->th[i].frames);
	}
	free(d->th);
	free(d->table);
}

/* CAP_SYS_PTRACE: to stop the target and read its memory. Root has it. */
static bool can_trace(void)
{
	return proc__has_caps(1ull << 19);
}

/* What the thread that stops the target does, and what it gives back. */
struct stopped_read {
	struct dump *d;
	pid_t pid;
	const pid_t *running;
	int nrun;
	char *why;
	size_t why_len;
	bool stop_err; /* the target could not be stopped (said) */
	int err;
};

/*
 * Seizes the target, stops it, reads every thread's frames, lets it go. In a thread of its
 * own, which ends right after: a thread of the target left asleep in a system call by the
 * stop (ptrace_hold.h) is let go by the kernel as this thread exits.
 */
static void *read_stopped(void *arg)
{
	struct stopped_read *st = arg;
	struct ptrace_hold *held = NULL;
	uint64_t t0, t1, t2;
	pid_t pid = st->pid;
	int err;

	err = ptrace_hold__seize(&held, pid, &(struct hold_cfg){ .guard = true });
	t0 = clock__mono_ns();
	if (!err)
		err = ptrace_hold__stop(held, pid);
	if (err) {
		elog("cannot stop pid %d: %s%s", pid, strerror(-err),
		     err == -EPERM ? " (is it traced by a debugger?)" : "");
		ptrace_hold__release(held);
		st->stop_err = true;
		st->err = err;
		return NULL;
	}
	t1 = clock__mono_ns();
	err = py_target__check_live(st->d->t, st->why, st->why_len);
	if (!err)
		err = walk(st->d, held, st->running, st->nrun);
	ptrace_hold__resume(held, pid);
	t2 = clock__mono_ns();
	ptrace_hold__release(held);
	vlog("pid %d was stopped for %.3f ms: %.3f ms until every thread stood, %.3f ms of reading",
	     pid, (t2 - t0) / 1e6, (t1 - t0) / 1e6, (t2 - t1) / 1e6);
	st->err = err;
	return NULL;
}

int dump__run(pid_t pid, bool json)
{
	static pid_t running[DUMP_MAX_THREADS];
	struct py_target t;
	struct dump d = { .t = &t };
	struct stopped_read st;
	char why[512] = "";
	pthread_t th;
	int err, nrun;

	if (!can_trace()) {
		elog("needs root (or CAP_SYS_PTRACE): run it with sudo");
		return 1;
	}
	err = py_target__find(pid, &t, why, sizeof(why));
	if (err) {
		elog("cannot dump pid %d: %s", pid, why);
		return 1;
	}
	d.lay = py_lines__layout(t.minor);
	d.table = malloc(LINE_TABLE_MAX);
	if (!d.lay || !d.table) {
		elog("cannot dump pid %d: %s", pid, d.lay ? strerror(ENOMEM) : "no line layout");
		err = -ENOMEM;
		goto out;
	}
	/* whether each thread runs, as the kernel saw it just before the stop (which shows as
	 * "t"); a thread that is "R" is running Python or C code, not blocked */
	nrun = running_threads(pid, running, DUMP_MAX_THREADS);
	/* (a thread of the target left asleep by the stop is let go as that thread exits) */
	st = (struct stopped_read){ .d = &d, .pid = pid, .running = running, .nrun = nrun,
				    .why = why, .why_len = sizeof(why) };
	err = pthread_create(&th, NULL, read_stopped, &st);
	if (err) {
		elog("cannot start the thread that stops pid %d: %s", pid, strerror(err));
		err = -err;
		goto out;
	}
	pthread_join(th, NULL);
	err = st.err;
	if (st.stop_err)
		goto out;
	if (err) {
		elog("cannot dump pid %d: %s", pid, *why ? why : strerror(-err));
		goto out;
	}
	if (json)
		err = print_json(&d);
	else
		print_text(&d);
	if (err)
		elog("cannot write the stacks: %s", strerror(-err));
out:
	dump_free(&d);
	py_target__free(&t);
	return err ? 1 : 0;
}
