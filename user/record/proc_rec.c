// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Starting and ending the recording of one process. The process is stopped while its probes
 * are attached and its hook written (launch: before its interpreter runs; attach: in the
 * middle of its work, in the second of two stops, the BPF side loaded in between; fork: at
 * its birth), so the first call after it resumes is already seen, with inlining already off
 * (3.11+).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "base/log.h"
#include "base/quiet_thread.h"
#include "inject/inject.h"
#include "inject/tsc.h"
#include "record/proc_rec.h"
#include "target/thread_block.h"
#include "target/thread_name.h"

/* recorder.name_path: the handler runs inside probes__consume of the process's probes */
static void name_path(void *ctx, uint64_t type, const struct thread_name_path *path)
{
	struct proc_rec *pr = ctx;
	int err;

	if (!pr->tr)
		return;
	err = probes__thread_name_path(pr->tr, type, path);
	if (err)
		vlog("the names of the Thread class at %#llx: not read by the BPF side (%s)",
		     (unsigned long long)type, strerror(-err));
}

void proc_rec__learn_thread_class(struct proc_rec *pr, uint64_t self)
{
	struct thread_name_path path = { 0 };
	uint64_t type = 0;
	char name[256];

	/* (its _native_id is not set yet: tid 0) */
	if (pr->has_target && !thread_name__of_object_path(&pr->target, self, 0, name,
							    sizeof(name), &path, &type) &&
	    path.how) {
		dlog("pid %d: the Thread class at %#llx: its names read by the BPF side from now on",
		     pr->pid, (unsigned long long)type);
		name_path(pr, type, &path);
	}
}

struct proc_rec *proc_rec__new(pid_t pid, pid_t parent, struct ptrace_hold *held)
{
	struct proc_rec *pr = calloc(1, sizeof(*pr));

	if (!pr)
		return NULL;
	pr->rec.prof = profile__new();
	if (!pr->rec.prof) {
		free(pr);
		return NULL;
	}
	pr->pid = pid;
	pr->parent = parent;
	pr->rec.hooks = &pr->hooks;
	pr->rec.live_pid = pid;
	pr->rec.held = held;
	pr->rec.target_version = pr->version;
	pr->rec.target = &pr->target;
	pr->rec.name_path = name_path;
	pr->rec.name_path_ctx = pr;
	return pr;
}

/* How the trampoline's system calls are run: through the hold, or (launch, before the hold
 * exists) in the one thread launch keeps stopped. */
struct runner {
	pid_t pid;
	struct ptrace_hold *held;
	uint64_t insn;
};

static int run_syscall(void *ctx, struct inject_call *call)
{
	struct runner *r = ctx;

	if (r->held)
		return ptrace_hold__inject(r->held, r->pid, r->insn, call);
	return inject__syscalls(r->pid, r->insn, call, 1);
}

int proc_rec__exits_possible(const struct proc_rec *pr, char *why, size_t why_len)
{
	const struct py_target *t = &pr->target;

	if (pr->want_exits == EXITS_USDT && !t->exit_probe.offset) {
		snprintf(why, why_len, "Python %s has no USDT python:function__return probe "
				       "(--exits usdt is for builds that have one, like Debian's 3.11)",
			 t->version);
		return -EINVAL;
	}
	if (pr->want_exits == EXITS_RET && !t->nret) {
		snprintf(why, why_len, "cannot find the ret instructions of _PyEval_EvalFrameDefault "
				       "in %s (its code does not disassemble whole): --exits ret is not "
				       "possible", t->shown);
		return -ENOEXEC;
	}
	return 0;
}

/* Whether the batch mode can record t; why not, if not. */
static bool batch_possible(const struct py_target *t, char *why, size_t why_len)
{
	int err;

	if (probes__cpu_clock()) {
		snprintf(why, why_len, "--clock cpu reads each thread's CPU time in the kernel");
		return false;
	}
	if (t->exit_probe.offset && !t->inline_getitem_offset) {
		snprintf(why, why_len, "Python %s runs calls inline that only its USDT exit sees",
			 t->version);
		return false;
	}
	if (!tsc__usable(why, why_len))
		return false;
	if (!thread_block__own()->tid_off) {
		snprintf(why, why_len, "no thread key (pyuprof's glibc keeps no tid in its thread "
				       "block where it looks)");
		return false;
	}
	if (t->libc == LIBC_OTHER) {
		char libc[160];

		thread_block__libc(t->pid, libc, sizeof(libc));
		snprintf(why, why_len, "its C library is not glibc (%.120s): no thread key", libc);
		return false;
	}
	if (tsc__calibrate()) {
		snprintf(why, why_len, "the time stamp counter does not advance");
		return false;
	}
	dlog_step("TSC rate measured");
	err = tsc__cpus_agree(why, why_len);
	dlog_step("TSC checked on every CPU");
	return err == 0;
}

/* Says why pr records per call instead: a warning if the batch was asked for. */
static void no_batch(const struct proc_rec *pr, bool asked, const char *why)
{
	log__msg(asked || pr->cfuncs ? LOG_WARN : LOG_VERBOSE,
		 "pid %d: no batch mode (%s): every call enters the kernel%s", pr->pid, why,
		 pr->cfuncs ? ", and C functions are not recorded (as with --no-builtins)" : "");
}

/* Chooses the exits for the image pr runs (target found) and the trampoline they take, if any
 * (pr->kind). Returns 0, or -errno with why set for a choice that cannot be. */
static int choose_exits(struct proc_rec *pr, char *why, size_t why_len)
{
	const struct py_target *t = &pr->target;
	char fail[192] = "";
	bool unseen;
	int err;

	memset(&pr->tramp, 0, sizeof(pr->tramp));
	pr->exits = pr->want_exits;
	err = proc_rec__exits_possible(pr, why, why_len);
	if (err)
		return err;
	/*
	 * The default: the batch mode wherever it works. A 3.11 build that runs __getitem__ inline
	 * (Debian's) needs a probe on that path (inline_subscr.h), or else its USDT exit, which
	 * sees every frame's end.
	 */
	unseen = t->exit_probe.offset && !t->inline_getitem_offset;
	pr->batch_asked = pr->exits == EXITS_BATCH;
	if (pr->exits == EXITS_AUTO && !unseen)
		pr->exits = EXITS_BATCH;
	if (pr->exits == EXITS_BATCH && !batch_possible(t, fail, sizeof(fail))) {
		no_batch(pr, pr->batch_asked, fail);
		pr->exits = EXITS_AUTO;
	}
	if (pr->exits == EXITS_AUTO)
		pr->exits = unseen ? EXITS_USDT : EXITS_TRAMPOLINE;
	if (t->inline_getitem_offset && pr->exits != EXITS_USDT)
		vlog("pid %d: Python %s runs __getitem__ inline: a probe on that path sees those "
		     "calls", pr->pid, t->version);
	if (unseen && pr->exits != EXITS_USDT)
		wlog("Python %s still runs some calls inline (a Python __getitem__ reached by "
		     "obj[i]); only its USDT exit sees those that call no other function, and with "
		     "--exits %s they are missing", t->version, exits__name(pr->exits));
	/* USDT exits take their entries from the trampoline too, where it can be placed; other
	 * exits on 3.12+ take a pass-through page that hands the C recursion budget back */
	pr->kind = pr->exits == EXITS_TRAMPOLINE || pr->exits == EXITS_USDT ? TRAMP_PROBED
									   : TRAMP_PASS;
	pr->kind = pr->exits == EXITS_BATCH ? TRAMP_BATCH : pr->kind;
	return 0;
}

/*
 * Whether glibc's thread blocks may be read in pr (stopped): the page's thread key (the batch
 * mode) and its guard of other threads' stacks read them. Launched, its threads have no
 * thread pointer yet: a glibc by its ELF interpreter is trusted (the BPF side checks each
 * thread's key as it stages: stage.bpf.h). Otherwise every thread's block is checked now;
 * one that does not check out (a C library other than glibc, or a glibc that lays its block
 * out otherwise) leaves the batch mode for the per-call probes. Returns false where the batch
 * mode cannot be, with why set.
 */
static bool check_thread_blocks(struct proc_rec *pr, enum rec_start how, char *why,
				size_t why_len)
{
	enum { MAX_THREADS = 4096 };
	static pid_t tids[MAX_THREADS];
	static uint64_t bases[MAX_THREADS];
	struct py_target *t = &pr->target;
	char libc[300];
	int n = 0;

	if (how != REC_LAUNCHED && pr->rec.held)
		n = ptrace_hold__fs_bases(pr->rec.held, pr->pid, tids, bases, MAX_THREADS);
	if (n > 0) {
		t->thread_blocks = !thread_block__check(pr->pid, tids, bases, n, why, why_len);
		if (!t->thread_blocks) {
			thread_block__libc(pr->pid, libc, sizeof(libc));
			snprintf(why + strlen(why), why_len - strlen(why), "; %s", libc);
		}
		return t->thread_blocks;
	}
	t->thread_blocks = t->libc == LIBC_GLIBC;
	if (!t->thread_blocks) {
		thread_block__libc(pr->pid, libc, sizeof(libc));
		snprintf(why, why_len, "its C library is not known to be glibc (%s): no thread key",
			 libc);
	}
	return t->thread_blocks;
}

/* Places the trampoline choose_exits chose (process stopped), or falls back to exits that
 * need none, saying so. */
static void place_tramp(struct proc_rec *pr)
{
	struct runner r = { .pid = pr->pid, .held = pr->rec.held };
	const struct py_target *t = &pr->target;
	enum tramp_kind kind = pr->kind;
	char fail[192] = "";
	int err;

	err = inject__find_syscall(pr->pid, &r.insn);
	if (err)
		snprintf(fail, sizeof(fail), "no syscall instruction found in its vDSO (%s)",
			 strerror(-err));
	else
		err = tramp__get(pr->pid, t, kind, run_syscall, &r, &pr->tramp, fail, sizeof(fail));
	if (err && kind == TRAMP_BATCH) {
		no_batch(pr, pr->batch_asked, fail);
		pr->exits = EXITS_TRAMPOLINE;
		pr->kind = kind = TRAMP_PROBED;
		err = tramp__get(pr->pid, t, kind, run_syscall, &r, &pr->tramp, fail, sizeof(fail));
	}
	if (!err) {
		vlog("%s trampoline at 0x%llx in pid %d%s", kind == TRAMP_PASS ? "pass-through" : "probe",
		     (unsigned long long)pr->tramp.addr, pr->pid,
		     pr->tramp.reused ? " (in place from an earlier recording)" : "");
		if (kind == TRAMP_BATCH)
			vlog("pid %d: batch mode: calls and returns staged at 0x%llx, copied out "
			     "once per batch", pr->pid, (unsigned long long)pr->tramp.stage);
		return;
	}
	memset(&pr->tramp, 0, sizeof(pr->tramp));
	if (pr->exits == EXITS_USDT) { /* its entries from the function itself, as ever */
		vlog("no probe trampoline in pid %d (%s): entries from _PyEval_EvalFrameDefault",
		     pr->pid, fail);
		return;
	}
	/* never a wrong profile: the uretprobe pair is exact, only dearer */
	if (pr->exits == EXITS_TRAMPOLINE)
		wlog("no probe trampoline in pid %d (%s): returns from uretprobes instead", pr->pid,
		     fail);
	else
		wlog("no pass-through trampoline in pid %d (%s)", pr->pid, fail);
	pr->exits = pr->exits == EXITS_TRAMPOLINE ? EXITS_URETPROBE : pr->exits;
	if (tramp__wanted(t, TRAMP_PASS))
		wlog("pid %d: without a trampoline every Python call takes CPython %s's C recursion "
		     "budget while recorded: a deep recursion may raise RecursionError where it "
		     "would not natively", pr->pid, t->version);
}

int proc_rec__choose(struct proc_rec *pr, char *why, size_t why_len)
{
	int err;

	if (!pr->has_target) {
		err = py_target__find(pr->pid, &pr->target, why, why_len);
		if (err)
			return err;
		pr->has_target = true;
	}
	snprintf(pr->version, sizeof(pr->version), "%s", pr->target.version);
	vlog("Python %s in %s (pid %d), %d return sites", pr->target.version, pr->target.shown,
	     pr->pid, pr->target.nret);
	pr->live_checked = false;
	return choose_exits(pr, why, why_len);
}

bool proc_rec__places_page(const struct proc_rec *pr)
{
	return tramp__wanted(&pr->target, pr->kind);
}

/* Attached: the layout checked on its live frames (stopped), once per image. */
static int check_live(struct proc_rec *pr, enum rec_start how, char *why, size_t why_len)
{
	int err;

	if (how != REC_ATTACHED || pr->live_checked)
		return 0;
	err = py_target__check_live(&pr->target, why, why_len);
	pr->live_checked = !err;
	return err;
}

int proc_rec__place(struct proc_rec *pr, enum rec_start how, char *why, size_t why_len)
{
	char fail[400] = "";
	int err;

	if (proc_rec__places_page(pr)) {
		/* before anything is written into it: a layout that does not fit leaves no page */
		err = check_live(pr, how, why, why_len);
		if (err)
			return err;
		if (!check_thread_blocks(pr, how, fail, sizeof(fail)) && pr->kind == TRAMP_BATCH) {
			no_batch(pr, pr->batch_asked, fail);
			pr->exits = EXITS_TRAMPOLINE;
			pr->kind = TRAMP_PROBED;
		}
		place_tramp(pr);
	}
	hook__setup(&pr->hooks, &pr->target, pr->tramp.hook);
	dlog_step("pid %d: trampoline page placed", pr->pid);
	return 0;
}

/* A load, in the calling thread or one of its own (proc_rec__load_ahead). It reads only its
 * copy of the target (the holding thread may go on with pr meanwhile). */
struct load_job {
	struct py_target target; /* a copy of what the load reads (load_job_new) */
	enum exits exits;
	pid_t pid;
	bool warm_ring;
	ring_buffer_sample_fn handler;
	struct recorder *rec;
	unsigned ringbuf_mb;
	struct probes *tr;
	char why[256];
	const char *until; /* tests: PYUPROF_TEST_LOAD_UNTIL, and whether it was there already */
	bool before;
	pthread_t thread; /* a load ahead's, until it is joined */
	int err;
};

static int load_job_run(void *p)
{
	struct load_job *job = p;
	const char *until = job->until;
	int err;

	/* a followed child waits at its birth for its load: not for the warming too */
	err = probes__load(&job->tr, &job->target, job->exits, job->ringbuf_mb, job->warm_ring,
			   job->handler, job->rec);
	if (err)
		snprintf(job->why, sizeof(job->why), "cannot load its probes: %s",
			 log__errstr(err));
	/* tests: a held process's load lasts until a file that something running makes is there */
	if (until) {
		for (int i = 0; i < 2000 && access(until, F_OK); i++)
			usleep(10000);
		dlog("pid %d: test: %s %s", job->pid, until,
		     job->before ? "was there before the load"
			    : access(until, F_OK) ? "did not appear during the load"
						  : "appeared during the load");
	}
	return job->err = err;
}

static void *load_job_thread(void *p)
{
	load_job_run(p);
	return NULL;
}

/* held: the process is held while it loads (a load ahead: it will be, as an attach's) */
static uint64_t *dup_offsets(const uint64_t *v, int n, bool *failed)
{
	uint64_t *d;

	if (n <= 0 || !v)
		return NULL;
	d = malloc((size_t)n * sizeof(*d));
	if (!d) {
		*failed = true;
		return NULL;
	}
	return memcpy(d, v, (size_t)n * sizeof(*d));
}

static void load_job_free(struct load_job *job)
{
	if (!job)
		return;
	free(job->target.ret_offsets);
	free(job->target.setter_ret_offsets);
	free(job->target.perf_ret_offsets);
	free(job);
}

static struct load_job *load_job_new(struct proc_rec *pr, unsigned ringbuf_mb, bool held)
{
	struct load_job *job = calloc(1, sizeof(*job));
	struct py_target *t;
	bool failed = false;

	if (!job)
		return NULL;
	/* its own copy of what the load reads of the target (a spare outlives its model's) */
	t = &job->target;
	*t = pr->target;
	memset(&t->paths, 0, sizeof(t->paths));
	t->ret_offsets = dup_offsets(pr->target.ret_offsets, t->nret, &failed);
	t->setter_ret_offsets = dup_offsets(pr->target.setter_ret_offsets, t->nsetter_ret, &failed);
	t->perf_ret_offsets = dup_offsets(pr->target.perf_ret_offsets, t->nperf_ret, &failed);
	if (failed) {
		load_job_free(job);
		return NULL;
	}
	job->exits = pr->exits;
	job->pid = pr->pid;
	job->warm_ring = !pr->parent;
	job->handler = recorder__handle;
	job->rec = &pr->rec;
	job->ringbuf_mb = ringbuf_mb;
	if (held) {
		job->until = getenv("PYUPROF_TEST_LOAD_UNTIL");
		/* (before the line tests wait for) */
		job->before = job->until && !access(job->until, F_OK);
	}
	return job;
}

void proc_rec__load_ahead(struct proc_rec *pr, unsigned ringbuf_mb)
{
	struct load_job *job;

	if (pr->ahead || pr->tr || !(job = load_job_new(pr, ringbuf_mb, true)))
		return;
	if (quiet_thread__start(&job->thread, load_job_thread, job)) {
		load_job_free(job);
		return;
	}
	dlog("pid %d: loading the BPF side ahead, for %s exits", pr->pid, exits__name(pr->exits));
	pr->ahead = job;
}

/* Waits for a load ahead to be done (ptrace_hold__serve_during's job: the hold is served). */
static int join_ahead(void *p)
{
	struct load_job *job = p;

	pthread_join(job->thread, NULL);
	return job->err;
}

struct load_job *proc_rec__spare(struct proc_rec *model, unsigned ringbuf_mb)
{
	struct load_job *job;

	/* tests that make a child's own load last (PYUPROF_TEST_LOAD_UNTIL) want that load */
	if (getenv("PYUPROF_TEST_LOAD_UNTIL") || !(job = load_job_new(model, ringbuf_mb, false)))
		return NULL;
	job->rec = NULL; /* (whose, once taken) */
	job->warm_ring = true; /* (nobody waits for it) */
	job->pid = 0;
	if (quiet_thread__start(&job->thread, load_job_thread, job)) {
		load_job_free(job);
		return NULL;
	}
	dlog("loading a spare BPF side for the next process of Python %s", model->target.version);
	return job;
}

void proc_rec__spare_free(struct load_job *spare)
{
	if (!spare)
		return;
	join_ahead(spare);
	probes__free(spare->tr);
	load_job_free(spare);
}

/* pr takes the spare if it was loaded for its interpreter and exits (then *spare is NULL). */
static void take_spare(struct proc_rec *pr, struct load_job **spare)
{
	if (!spare || !*spare || pr->ahead || pr->tr ||
	    !probes__fits(&(*spare)->target, (*spare)->exits, &pr->target, pr->exits))
		return;
	pr->ahead = *spare;
	*spare = NULL;
	dlog("pid %d: the spare BPF side loaded for its interpreter taken", pr->pid);
}

void proc_rec__drop_ahead(struct proc_rec *pr)
{
	if (!pr->ahead)
		return;
	join_ahead(pr->ahead);
	probes__free(pr->ahead->tr);
	load_job_free(pr->ahead);
	pr->ahead = NULL;
}

int proc_rec__load(struct proc_rec *pr, unsigned ringbuf_mb, char *why, size_t why_len)
{
	struct load_job *job = pr->ahead;
	int err;

	/* a load ahead for other exits (the page could not be placed: proc_rec__place fell back)
	 * is of no use */
	if (job && job->exits != pr->exits) {
		dlog("pid %d: the BPF side loaded ahead was for %s exits: again, for %s", pr->pid,
		     exits__name(job->exits), exits__name(pr->exits));
		proc_rec__drop_ahead(pr);
		job = NULL;
	}
	pr->ahead = NULL;
	if (!job && !(job = load_job_new(pr, ringbuf_mb, pr->rec.held)))
		return -ENOMEM;
	/* held (attached, followed): the hold is served meanwhile, so that no thread of any held
	 * process waits on it (the verifier takes ~100 ms) */
	if (pr->rec.held) {
		dlog("pid %d: %s the BPF side, the held processes served meanwhile", pr->pid,
		     job->thread ? "waiting for" : "loading");
		err = ptrace_hold__serve_during(pr->rec.held, job->thread ? join_ahead : load_job_run,
						job);
	} else {
		err = job->thread ? join_ahead(job) : load_job_run(job);
	}
	/* (a process that went meanwhile was reaped: its pid may be another's by now) */
	if (!err && pr->rec.held && !ptrace_hold__holds(pr->rec.held, pr->pid)) {
		snprintf(job->why, sizeof(job->why), "it ended as its probes loaded");
		err = -ESRCH;
	}
	if (err) {
		probes__free(job->tr);
		snprintf(why, why_len, "%s", job->why[0] ? job->why : strerror(-err));
		load_job_free(job);
		return err;
	}
	/* (here: the holding thread reads it, on_request) */
	pr->tr = job->tr;
	if (!job->rec) /* a spare's: its records are pr's */
		probes__handle_with(pr->tr, recorder__handle, &pr->rec);
	load_job_free(job);
	probes__aim(pr->tr, pr->pid, pr->tramp.stage, pr->hooks.value,
		    pr->target.thread_blocks);
	dlog_step("pid %d: BPF side loaded", pr->pid);
	return 0;
}

int proc_rec__arm(struct proc_rec *pr, enum rec_start how, uint64_t now_ns, char *why,
		  size_t why_len)
{
	bool writes = pr->hooks.slot != 0;
	int err;

	/* with the process stopped: check the layout on its live frames, take those frames as
	 * they are (a forked child runs on in its parent's frames) */
	err = check_live(pr, how, why, why_len);
	if (err)
		return err;
	if (how != REC_LAUNCHED) {
		seeds__free(&pr->seeds);
		err = seeds__walk(&pr->seeds, &pr->target, pr->rec.held, now_ns);
		if (err) {
			snprintf(why, why_len, "cannot read its running frames: %s", strerror(-err));
			return err;
		}
	}
	err = probes__attach(pr->tr, &pr->target, pr->tramp.path);
	dlog_step("pid %d: probes attached", pr->pid);
	if (err) {
		snprintf(why, why_len, "cannot attach probes: %s", log__errstr(err));
		/* (a failed reload in it leaves no skeleton to stop or count) */
		probes__free(pr->tr);
		pr->tr = NULL;
		return err;
	}
	/* its flush nop probed: the batch path may stage from now on, its stamps converted by
	 * the exact rate */
	if (pr->exits == EXITS_BATCH) {
		err = tsc__settle();
		if (!err)
			err = staging__start(pr->pid, pr->tramp.stage, pr->cfuncs);
		if (err) {
			snprintf(why, why_len, "cannot switch its staging on: %s", strerror(-err));
			return err;
		}
		pr->staging = true;
		pr->rec.stage = pr->tramp.stage;
	}
	if (!writes)
		return 0;
	if (how == REC_LAUNCHED) /* before the interpreter starts: its first call is seen */
		err = hook__preinit(&pr->target, &pr->hooks);
	else if (how == REC_ATTACHED)
		err = hook__install(&pr->target, &pr->hooks);
	else
		err = hook__inherit(&pr->target, &pr->hooks);
	if (err)
		snprintf(why, why_len, "cannot switch its call inlining off: %s", strerror(-err));
	return err;
}

int proc_rec__start(struct proc_rec *pr, enum rec_start how, unsigned ringbuf_mb,
		    struct load_job **spare, uint64_t now_ns, char *why, size_t why_len)
{
	int err = proc_rec__choose(pr, why, why_len);

	if (!err)
		take_spare(pr, spare);

	if (!err)
		err = proc_rec__place(pr, how, why, why_len);
	if (!err)
		err = proc_rec__load(pr, ringbuf_mb, why, why_len);
	if (!err)
		err = proc_rec__arm(pr, how, now_ns, why, why_len);
	return err;
}

void proc_rec__add_counters(struct pyuprof_stats *sum, const struct pyuprof_stats *s)
{
	sum->lost_calls += s->lost_calls;
	sum->lost_returns += s->lost_returns;
	sum->lost_codes += s->lost_codes;
	sum->lost_requests += s->lost_requests;
	sum->read_fail += s->read_fail;
	sum->exit_unverified += s->exit_unverified;
	sum->foreign_hook += s->foreign_hook;
	sum->lost_ccalls += s->lost_ccalls;
	sum->lost_creturns += s->lost_creturns;
}

void proc_rec__stage_per_call(struct proc_rec *pr)
{
	struct pyuprof_exit_stats xs;
	int err;

	if (!pr->rec.key_bad || !pr->staging || pr->per_call || !pr->tr || pr->gone)
		return;
	err = staging__per_call(pr->pid, pr->tramp.stage);
	if (err) {
		wlog("pid %d: a thread's key does not hold its id, and its calls cannot be sent to "
		     "the per-call probes: %s", pr->pid, strerror(-err));
		return;
	}
	pr->per_call = true;
	probes__exit_counters(pr->tr, &xs);
	log__msg(pr->batch_asked || pr->cfuncs ? LOG_WARN : LOG_VERBOSE,
		 "pid %d: no batch mode from now on (thread %u's key in its thread block holds %u, "
		 "not its id: its C library is not glibc, or keeps the id elsewhere): every call "
		 "enters the kernel%s", pr->pid, xs.key_bad_tid, xs.key_bad_key,
		 pr->cfuncs ? ", and C functions are not recorded (as with --no-builtins)" : "");
}

void proc_rec__unstage(struct proc_rec *pr)
{
	struct staging_pos pos;
	int err;

	if (!pr->staging || !pr->tr || pr->gone)
		return;
	pr->staging = false;
	probes__stage_close(pr->tr, &pos);
	free(pr->rest.data);
	err = staging__stop(pr->pid, pr->tramp.stage, &pos, &pr->rest);
	if (err)
		wlog("pid %d: cannot read the calls it staged last: %s", pr->pid, strerror(-err));
}

void proc_rec__forget_stage(struct proc_rec *pr)
{
	pr->staging = false;
	pr->rec.stage = 0; /* (an exec: not this image's any more) */
}

/* The records proc_rec__unstage kept, as the BPF side would have sent them. */
static void hand_rest(struct proc_rec *pr)
{
	if (!pr->rest.data)
		return;
	recorder__staged(&pr->rec, pr->rest.tid, pr->rest.from, true, pr->rest.data,
			 pr->rest.bytes);
	free(pr->rest.data);
	memset(&pr->rest, 0, sizeof(pr->rest));
}

void proc_rec__end(struct proc_rec *pr, uint64_t now_ns)
{
	struct pyuprof_exit_stats xs;
	struct pyuprof_stats s;
	uint64_t run_ns = 0, runs = 0;

	if (!pr->tr)
		return;
	/* staging still on: nobody reads its last records now; the page stops staging itself at
	 * its next flush, when it finds its flush nop no longer probed */
	if (pr->staging && !pr->gone)
		wlog("pid %d: the calls it staged last are not recorded (it could not be stopped)",
		     pr->pid);
	pr->staging = false;
	probes__stop_hook(pr->tr);
	probes__detach(pr->tr, pr->gone);
	hand_rest(pr);
	/* (an entry staged last, with no chain record after it: a call the thread is in) */
	recorder__staged_end(&pr->rec);
	probes__counters(pr->tr, &s);
	proc_rec__add_counters(&pr->bstats, &s);
	probes__exit_counters(pr->tr, &xs);
	pr->direct_calls += xs.direct_calls;
	if (xs.signal_blocked)
		wlog("pid %d blocks SIGURG in a thread (the signal pyuprof stops a thread with): %llu "
		     "times one could not be stopped when pyuprof had to act (it acted later, with "
		     "the process stopped; records with no room in the ring buffer were counted as "
		     "lost instead of waited for)", pr->pid, (unsigned long long)xs.signal_blocked);
	if (xs.signal_unheld)
		wlog("pid %d: %llu times a thread asked pyuprof to act before pyuprof had seized it "
		     "(new threads are seized as they run, not held at their start): it acted later, "
		     "with the process stopped; calls the thread made meanwhile with its eval_frame "
		     "hook reset are not recorded, records with no room in the ring buffer were "
		     "counted as lost (PYUPROF_CLONE_STOP=1 holds each new thread at its start: "
		     "docs/limits.md)", pr->pid, (unsigned long long)xs.signal_unheld);
	if (xs.stack_low)
		wlog("pid %d: %llu calls raised RecursionError, their thread's C stack (%llu KiB) "
		     "down to its last %d KiB: recorded, each Python call is a C activation of its "
		     "own (natively, from 3.11, not), and a crash there is what CPython's check "
		     "would give natively on a C stack that runs out (docs/limits.md)",
		     pr->pid, (unsigned long long)xs.stack_low,
		     (unsigned long long)((xs.stack_low_size ? xs.stack_low_size
							     : pr->target.main_stack_span) >> 10),
		     TRAMP_STACK_MARGIN >> 10);
	if (!probes__run_time(pr->tr, &run_ns, &runs)) {
		pr->bpf_run_ns += run_ns;
		pr->bpf_runs += runs;
	}
	probes__free(pr->tr);
	pr->tr = NULL;
	pr->ring_watched = false;
	if (!pr->rec.stop_ns)
		pr->rec.stop_ns = now_ns;
	profile__finish(pr->rec.prof, pr->rec.stop_ns);
}

void proc_rec__restore(struct proc_rec *pr)
{
	if (pr->has_target && !pr->gone)
		hook__restore(&pr->target, &pr->hooks);
}

/* What belongs to the image the process runs: its interpreter, the writes into it, seeds. */
static void forget_image(struct proc_rec *pr)
{
	if (pr->has_target)
		py_target__free(&pr->target);
	pr->has_target = false;
	memset(&pr->hooks, 0, sizeof(pr->hooks));
	seeds__free(&pr->seeds);
}

void proc_rec__drop_image(struct proc_rec *pr)
{
	forget_image(pr);
	/* a forked child that exec'd before making a call of its own leaves nothing: the frames
	 * seeded at its birth were its parent's, still running there */
	if (pr->rec.prof->n.calls == pr->rec.prof->n.seeded) {
		struct profile *fresh = profile__new();

		if (fresh) {
			profile__free(pr->rec.prof);
			pr->rec.prof = fresh;
		}
	}
	/* the new image's calls are recorded again */
	pr->rec.stop_ns = 0;
	pr->rec.checks_ok = pr->rec.checks_bad = 0;
}

void proc_rec__free(struct proc_rec *pr)
{
	if (!pr)
		return;
	proc_rec__drop_ahead(pr);
	proc_rec__end(pr, 0);
	forget_image(pr);
	profile__free(pr->rec.prof);
	free(pr->written);
	free(pr);
}
