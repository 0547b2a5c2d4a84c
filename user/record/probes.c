// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Owns the BPF skeleton. Probes are attached by file offset and for the target pid only, as
 * enum exits says: the trampoline's two nops (tramp.h) plus _PyEval_EvalFrameDefault's entry
 * and a uretprobe for calls that bypass it; or the entry and a uretprobe alone; or the entry
 * and each of its ret instructions; or the entry and Debian's USDT frame exit. On 3.11+ also
 * the entry and ret instructions of the eval_frame setter. One program serves them all, told
 * apart by the attach cookie (enum probe_role).
 *
 * The probes of one file and kind go into one uprobe_multi link where the kernel has it
 * (6.6+): removing a uprobe waits for an RCU grace period, 0.1-0.25 s, and a link waits once
 * for all its probes, where one perf-event link per probe waits once each (about a second for
 * 7 probes). Elsewhere, or with PYUPROF_NO_UPROBE_MULTI set in the environment (to test that
 * path), one link per probe.
 *
 * The target does not run while the probes are attached (attach mode stops it; a launched
 * program has not started), so the attach order does not matter. At detach the entry probe
 * goes first, so that every call seen also has its return: in the multi link it comes first
 * in the array, which is the order the kernel unregisters in.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/bpf_serial.h"
#include "base/close_behind.h"
#include "base/log.h"
#include "base/quiet_thread.h"
#include "inject/tramp.h"
#include "record/probes.h"
#include "record/uprobe_multi.h"
#include "target/thread_block.h"
#include "pyuprof.skel.h" /* after the shared headers it refers to */

/*
 * Records handled per probes__consume at most: a target whose threads produce records as fast
 * as they are handled (a loaded machine) would otherwise keep one consume call going for ever,
 * and the caller would never see its signal, deadline or stop again.
 */

struct probes {
	struct pyuprof_bpf *skel;
	struct ring_buffer *rb;
	ring_buffer_sample_fn handler;
	void *handler_ctx;
	uint32_t handled; /* in this consume call */
	uint64_t bytes, max_bytes; /* the same, in bytes, and how many it may take */
	int multi_fd[NSETS]; /* a uprobe_multi link per probe set, or -1 */
	bool multi;	     /* loaded for uprobe_multi links */
	/* what it was loaded for (probes__attach may have to load it again) */
	enum exits exits;
	uint64_t stage, hook_value; /* and what it was aimed at (probes__aim) */
	uint32_t stack_blk_off;
	pid_t pid;
	unsigned ringbuf_mb;
	bool warm_ring;
	struct bpf_link **links; /* otherwise one per probe, in attach order */
	int nlinks;
	struct ring_buffer *births; /* probes__births */
	births_fn on_birth;
	void *birth_ctx;
};

/* The probes of one link: one file, entries or uretprobes; entries first. */
struct link_probes {
	const char *path;
	bool ret;
	uint64_t *offsets, *ref_ctrs, *cookies;
	uint32_t n;
};

static void add(struct link_probes *p, uint64_t offset, uint64_t ref_ctr, enum probe_role role)
{
	p->offsets[p->n] = offset;
	p->ref_ctrs[p->n] = ref_ctr;
	p->cookies[p->n++] = role;
}

static bool tracer_cpu_clock;

bool probes__cpu_clock(void)
{
	return tracer_cpu_clock;
}

void probes__set_cpu_clock(bool on)
{
	tracer_cpu_clock = on;
}

static int alloc_set(struct link_probes *p, const char *path, bool ret, size_t cap)
{
	p->path = path;
	p->ret = ret;
	p->n = 0;
	p->offsets = calloc(cap, sizeof(uint64_t));
	p->ref_ctrs = calloc(cap, sizeof(uint64_t));
	p->cookies = calloc(cap, sizeof(uint64_t));
	return p->offsets && p->ref_ctrs && p->cookies ? 0 : -ENOMEM;
}

/*
 * Every probe for t, in detach order: the trampoline's (the batch's flush, entry, return), the
 * interpreter object's (the entry first), then the uretprobe. Sets with no probe have n 0.
 */
static int probes_of(struct link_probes set[NSETS], const struct py_target *t, enum exits exits,
		     const char *tramp_path)
{
	bool hook = t->offsets->bpf.PyInterpreterState_eval_frame != 0;
	size_t cap = (size_t)t->nret + t->nsetter_ret + t->nperf_ret + t->nperf_check + 4;
	struct link_probes *lib = &set[1];
	int i, err;

	err = alloc_set(&set[0], tramp_path, false, 4);
	if (!err)
		err = alloc_set(lib, t->path, false, cap);
	if (!err)
		err = alloc_set(&set[2], t->path, true, 1);
	if (err)
		return err;
	switch (exits) {
	case EXITS_BATCH:
		add(&set[0], tramp__flush_offset(), 0, PROBE_STAGE_FLUSH);
		/* calls the batch path does not stage: */
		/* fall through */
	case EXITS_TRAMPOLINE:
		add(&set[0], TRAMP_ENTRY_OFFSET, 0, PROBE_EVAL_ENTRY);
		add(&set[0], TRAMP_RETURN_OFFSET, 0, PROBE_EVAL_RETURN);
		/* calls that bypass it: */
		/* fall through */
	case EXITS_URETPROBE:
		add(lib, t->eval_offset, 0, PROBE_EVAL_DIRECT);
		add(&set[2], t->eval_offset, 0, PROBE_EVAL_URETURN);
		break;
	case EXITS_USDT:
		/* every exit from USDT: entries through the trampoline need no return probe */
		if (tramp_path[0])
			add(&set[0], TRAMP_ENTRY_OFFSET, 0, PROBE_EVAL_ENTRY);
		add(lib, t->eval_offset, 0, PROBE_EVAL_ENTRY);
		/* the kernel raises the probe's semaphore, and lowers it however we end */
		add(lib, t->exit_probe.offset, t->exit_probe.semaphore_offset, PROBE_FRAME_EXIT);
		break;
	default:
		add(lib, t->eval_offset, 0, PROBE_EVAL_ENTRY);
		for (i = 0; i < t->nret; i++)
			add(lib, t->ret_offsets[i], 0, PROBE_EVAL_RETURN);
		break;
	}
	if (hook && t->setter_offset) {
		add(lib, t->setter_offset, 0, PROBE_SETTER);
		for (i = 0; i < t->nsetter_ret; i++)
			add(lib, t->setter_ret_offsets[i], 0, PROBE_SETTER_RET);
		if (t->perf_init_offset)
			add(lib, t->perf_init_offset, 0, PROBE_PERF_INIT);
		for (i = 0; i < t->nperf_ret; i++)
			add(lib, t->perf_ret_offsets[i], 0, PROBE_PERF_INIT_RET);
		for (i = 0; i < t->nperf_check; i++)
			add(lib, t->perf_check_offsets[i], 0, PROBE_PERF_CHECK);
	}
	/* the page's guard of the C stack's end, whatever the exits (a pass-through's too) */
	if (tramp_path[0])
		add(&set[0], tramp__stack_offset(), 0, PROBE_STACK_LOW);
	if (t->inline_init_offset)
		add(lib, t->inline_init_offset, 0, PROBE_INLINE_INIT);
	/* (USDT exits see these calls at their exits already) */
	if (t->inline_getitem_offset && exits != EXITS_USDT)
		add(lib, t->inline_getitem_offset, 0, PROBE_INLINE_GETITEM);
	return 0;
}

static void link_probes_free(struct link_probes set[NSETS])
{
	for (int i = 0; i < NSETS; i++) {
		free(set[i].offsets);
		free(set[i].ref_ctrs);
		free(set[i].cookies);
	}
}

/* The roles of the probes attached for t and exits (1 << enum probe_role each), or all; those
 * of a page's too, whether or not one will be placed (the stack guard's: any exits). */
static __u64 roles_of(const struct py_target *t, enum exits exits)
{
	struct link_probes set[NSETS] = { 0 };
	__u64 roles = 0;

	if (probes_of(set, t, exits, "(a page)"))
		roles = ~0ull;
	for (int s = 0; s < NSETS && roles != ~0ull; s++)
		for (uint32_t i = 0; i < set[s].n; i++)
			roles |= 1ull << set[s].cookies[i];
	link_probes_free(set);
	return roles;
}

/* One perf-event link per probe, in reverse detach order (links go last first). */
static int attach_each(struct probes *tr, pid_t pid, const struct link_probes set[NSETS])
{
	uint32_t total = 0, i;
	int s;

	for (s = 0; s < NSETS; s++)
		total += set[s].n;
	tr->links = calloc(total, sizeof(*tr->links));
	if (!tr->links)
		return -ENOMEM;
	for (s = NSETS - 1; s >= 0; s--) {
		for (i = set[s].n; i-- > 0;) {
			LIBBPF_OPTS(bpf_uprobe_opts, uo, .ref_ctr_offset = set[s].ref_ctrs[i],
				    .bpf_cookie = set[s].cookies[i], .retprobe = set[s].ret);
			struct bpf_link *link;

			link = bpf_program__attach_uprobe_opts(tr->skel->progs.on_probe, pid,
							       set[s].path, set[s].offsets[i], &uo);
			if (!link)
				return -errno;
			tr->links[tr->nlinks++] = link;
		}
	}
	dlog("%u probes in pid %d, one link each", total, pid);
	return 0;
}

static int attach_multi(struct probes *tr, pid_t pid, const struct link_probes set[NSETS])
{
	int s, fd;

	for (s = 0; s < NSETS; s++) {
		if (!set[s].n)
			continue;
		fd = uprobe_multi__attach(bpf_program__fd(tr->skel->progs.on_probe), pid,
					 set[s].path, set[s].offsets, set[s].ref_ctrs,
					 set[s].cookies, set[s].n, set[s].ret);
		if (fd < 0)
			return fd;
		tr->multi_fd[s] = fd;
	}
	return 0;
}

static void close_multi(struct probes *tr)
{
	for (int s = 0; s < NSETS; s++) {
		if (tr->multi_fd[s] >= 0)
			close(tr->multi_fd[s]);
		tr->multi_fd[s] = -1;
	}
}

/*
 * pyuprof's own PID namespace, if it is not the initial one: pids given to pyuprof (and seen
 * in its /proc) are that namespace's, while the BPF helper that most programs use gives the
 * initial namespace's.
 */
static void pidns_of_self(__u64 *dev, __u64 *ino)
{
	const unsigned long init_ino = 0xEFFFFFFCUL; /* PROC_PID_INIT_INO */
	struct stat st;

	*dev = *ino = 0;
	if (stat("/proc/self/ns/pid", &st) || st.st_ino == init_ino)
		return;
	*dev = st.st_dev;
	*ino = st.st_ino;
}

/* One program attached as its section says, a link after the others (detached first). */
static int attach_prog(struct probes *tr, struct bpf_program *prog)
{
	struct bpf_link **links = realloc(tr->links, (tr->nlinks + 1) * sizeof(*links));
	struct bpf_link *link;

	if (!links)
		return -ENOMEM;
	tr->links = links;
	link = bpf_program__attach(prog);
	if (!link)
		return -errno;
	tr->links[tr->nlinks++] = link;
	return 0;
}

/* The batch mode's programs at a process's end and exec. */
static int attach_stage_ends(struct probes *tr)
{
	int err = attach_prog(tr, tr->skel->progs.stage_at_exit);

	return err ? err : attach_prog(tr, tr->skel->progs.stage_at_exec);
}

/* --debug: what the verifier went through for each program (its share of a recording's start) */
static void say_verified(struct bpf_object *obj)
{
	struct bpf_program *prog;
	char line[256];
	int n = 0;

	if (log_level < LOG_DEBUG)
		return;
	line[0] = 0;
	bpf_object__for_each_program(prog, obj) {
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);

		if (bpf_program__fd(prog) < 0 ||
		    bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
			continue;
		n += snprintf(line + n, n < (int)sizeof(line) ? sizeof(line) - n : 0, "%s%s %u",
			      n ? ", " : "", bpf_program__name(prog), info.verified_insns);
	}
	dlog_step("BPF object loaded; instructions the verifier went through: %s", line);
}

/* The batch mode's copy at a process's end or exec, which its two programs tail-call */
static int stage_out_set(struct pyuprof_bpf *skel)
{
	int fd = bpf_program__fd(skel->progs.stage_out);
	__u32 key = 0;

	if (!bpf_program__autoload(skel->progs.stage_out))
		return 0;
	return bpf_map_update_elem(bpf_map__fd(skel->maps.stage_out_prog), &key, &fd, BPF_ANY)
		       ? -errno
		       : 0;
}

/*
 * make bench (PYUPROF_BENCH_VERIFIER_STATS=1): each program's verification, time and states,
 * as the kernel counts them (before: asks for them; after: says them). A log buffer of the
 * caller's replaces libbpf's log of a failed load, hence only there.
 */
#define VSTATS_PROGS 8
static char vstats_log[VSTATS_PROGS][1024];

static void verifier_stats(struct bpf_object *obj, bool before)
{
	struct bpf_program *prog;
	char *p;
	int i = 0;

	if (!getenv("PYUPROF_BENCH_VERIFIER_STATS"))
		return;
	bpf_object__for_each_program(prog, obj) {
		if (i >= VSTATS_PROGS)
			break;
		if (before) {
			vstats_log[i][0] = 0;
			bpf_program__set_log_buf(prog, vstats_log[i], sizeof(vstats_log[i]));
			bpf_program__set_log_level(prog, 4 /* BPF_LOG_STATS */);
		} else if (bpf_program__autoload(prog)) {
			for (p = vstats_log[i]; (p = strchr(p, '\n'));)
				*p = ' ';
			ilog("verifier: %s: %s", bpf_program__name(prog), vstats_log[i]);
		}
		i++;
	}
}

/* The process the loaded object records, and its addresses (bss: set after the load). */
static void aim(struct probes *tr)
{
	tr->skel->bss->targ_tgid = (__u32)tr->pid;
	tr->skel->bss->stage_addr = tr->exits == EXITS_BATCH ? tr->stage : 0;
	tr->skel->bss->hook_value = tr->hook_value;
	tr->skel->bss->stack_blk_off = tr->stack_blk_off;
}

bool probes__fits(const struct py_target *a, enum exits ea, const struct py_target *b,
		  enum exits eb)
{
	/* what load() builds into the object: the layout, the build's sites and version */
	return ea == eb && a->offsets == b->offsets && a->major == b->major &&
	       a->minor == b->minor && a->inline_getitem_reg == b->inline_getitem_reg &&
	       a->inline_init_reg == b->inline_init_reg && roles_of(a, ea) == roles_of(b, eb) &&
	       /* (the C function types at run time: a process of its own has its own) */
	       a->cfunction_type == b->cfunction_type && a->cmethod_type == b->cmethod_type &&
	       a->methoddescr_type == b->methoddescr_type && a->unicode_type == b->unicode_type &&
	       a->type_type == b->type_type;
}

void probes__handle_with(struct probes *tr, ring_buffer_sample_fn handler, void *ctx)
{
	tr->handler = handler;
	tr->handler_ctx = ctx;
}

void probes__aim(struct probes *tr, pid_t pid, uint64_t stage, uint64_t hook_value,
		 bool thread_blocks)
{
	tr->pid = pid;
	tr->stack_blk_off = thread_blocks ? thread_block__own()->stack_off : 0;
	tr->stage = stage;
	tr->hook_value = hook_value;
	aim(tr);
}

/* Opens, configures and loads the skeleton; multi: for uprobe_multi links. */
static int load_now(struct probes *tr, const struct py_target *t, enum exits exits,
		unsigned ringbuf_mb, bool multi)
{
	struct pyuprof_bpf *skel = tr->skel = pyuprof_bpf__open();
	int err;

	if (!skel)
		return -errno ? -errno : -ENOMEM;
	skel->rodata->off = t->offsets->bpf;
	pidns_of_self(&skel->rodata->pidns_dev, &skel->rodata->pidns_ino);
	skel->rodata->ob_type_off = t->offsets->PyObject_ob_type;
	skel->rodata->tp_name_off = t->offsets->PyTypeObject_tp_name;
	skel->rodata->spec_cache_init_off = t->offsets->PyHeapTypeObject_spec_cache_init;
	skel->rodata->func_code_off = t->offsets->PyFunctionObject_func_code;
	skel->rodata->getitem_frame_reg = t->inline_getitem_reg;
	skel->rodata->init_frame_reg = t->inline_init_reg;
	skel->rodata->localsplus_off = t->offsets->PyFrame_localsplus;
	skel->rodata->qualname_off = t->offsets->PyCodeObject_co_qualname;
	skel->rodata->cfunction_type = t->cfunction_type;
	skel->rodata->cmethod_type = t->cmethod_type;
	skel->rodata->methoddescr_type = t->methoddescr_type;
	skel->rodata->unicode_type = t->unicode_type;
	skel->rodata->type_type = t->type_type;
	skel->rodata->entry_shim = t->major == 3 && t->minor >= 12;
	/* the shadow of activations is popped at their returns, which USDT does not give */
	skel->rodata->use_shadow = exits != EXITS_USDT && exits != EXITS_BATCH;
	/* batch: (its calls are not in the shadow: it would be stale for the others) */
	skel->rodata->batch_mode = exits == EXITS_BATCH;
	skel->rodata->key_off = exits == EXITS_BATCH ? thread_block__own()->tid_off : 0;
	skel->rodata->sigmask_off = exits == EXITS_BATCH ? thread_block__own()->sigmask_off : 0;
	/* the head keeps the frame that returns where its return probe reads it */
	skel->rodata->return_frame_at_sp = exits == EXITS_BATCH || exits == EXITS_TRAMPOLINE;
	bpf_program__set_autoload(skel->progs.cpu_switch_in, tracer_cpu_clock);
	bpf_program__set_autoload(skel->progs.stage_at_exit, exits == EXITS_BATCH);
	bpf_program__set_autoload(skel->progs.stage_at_exec, exits == EXITS_BATCH);
	bpf_program__set_autoload(skel->progs.stage_out, exits == EXITS_BATCH);
	/* (ids of another namespace than the kernel's: every new thread is held at its clone) */
	bpf_program__set_autoload(skel->progs.thread_born,
				  exits == EXITS_BATCH && !skel->rodata->pidns_ino);
	/* a kernel without SYSCALL programs (before 5.14) records with its ring unwarmed; make
	 * bench: PYUPROF_BENCH_NO_RING_WARM=1 shows what the warming saves */
	bpf_program__set_autoload(skel->progs.ring_warm,
				  tr->warm_ring &&
					  libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_SYSCALL, NULL) == 1 &&
					  !getenv("PYUPROF_BENCH_NO_RING_WARM"));
	/* make bench: the same probes, counting only (the floor of their placement) */
	skel->rodata->count_only = getenv("PYUPROF_BENCH_COUNT_ONLY") != NULL;
	/* tests/batch.bats: a full ring loses staged records rather than wait */
	skel->rodata->test_no_wait = getenv("PYUPROF_TEST_NO_WAIT") != NULL;
	skel->rodata->test_miss_switch_in = getenv("PYUPROF_TEST_MISS_SWITCH_IN") != NULL;
	skel->rodata->cpu_clock = tracer_cpu_clock;
	skel->rodata->roles = roles_of(t, exits);
	if (t->offsets->PyInterpreterFrame_size) /* FRAME_SPECIALS_SIZE */
		skel->rodata->frame_specials = (t->offsets->PyInterpreterFrame_size - 1) / 8;
	err = bpf_map__set_max_entries(skel->maps.events, ringbuf_mb << 20);
	if (!err && multi)
		err = bpf_program__set_expected_attach_type(skel->progs.on_probe,
							    UPROBE_MULTI_ATTACH_TYPE);
	if (!err)
		verifier_stats(skel->obj, true);
	if (!err)
		err = pyuprof_bpf__load(skel);
	if (!err)
		err = stage_out_set(skel);
	if (!err) {
		say_verified(skel->obj);
		verifier_stats(skel->obj, false);
	}
	if (!err) /* (a load again: what it was aimed at) */
		aim(tr);
	if (err) {
		pyuprof_bpf__destroy(skel);
		tr->skel = NULL;
	}
	return err;
}

/* load_now, one object at a time in the process (base/bpf_serial.h) */
static int load(struct probes *tr, const struct py_target *t, enum exits exits,
		unsigned ringbuf_mb, bool multi)
{
	int err;

	bpf_serial__lock();
	err = load_now(tr, t, exits, ringbuf_mb, multi);
	bpf_serial__unlock();
	return err;
}

/* libbpf stops a consume call at a callback's error, the record just handled consumed */
static int on_sample(void *ctx, void *data, size_t size)
{
	struct probes *tr = ctx;
	int err = tr->handler(tr->handler_ctx, data, size);

	if (err)
		return err;
	tr->bytes += size;
	return ++tr->handled >= CONSUME_BUDGET || tr->bytes >= tr->max_bytes ? -EAGAIN : 0;
}

/* The ring buffer on tr's events map: made again with the skeleton. Nothing is attached yet:
 * its pages are written once (bpf/ring_warm.bpf.h), and the records that did so, all
 * discarded, consumed (none reaches the handler). A warming that fails costs only time. */
static int open_ring(struct probes *tr)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);

	ring_buffer__free(tr->rb);
	tr->rb = ring_buffer__new(bpf_map__fd(tr->skel->maps.events), on_sample, tr, NULL);
	if (!tr->rb)
		return -errno;
	if (!bpf_program__autoload(tr->skel->progs.ring_warm))
		dlog("ring buffer: not written before the recording%s",
		     tr->warm_ring ? "" : " (a process stopped or born meanwhile would wait for it)");
	else if (bpf_prog_test_run_opts(bpf_program__fd(tr->skel->progs.ring_warm), &opts))
		dlog("ring buffer: cannot write it before the recording (%s)", log__errstr(-errno));
	else {
		ring_buffer__consume(tr->rb);
		dlog("ring buffer: %u KiB of %u MiB written before the recording",
		     opts.retval * (RING_WARM_REC >> 10), tr->ringbuf_mb);
	}
	return 0;
}

int probes__load(struct probes **out, const struct py_target *t, enum exits exits,
		 unsigned ringbuf_mb, bool warm_ring, ring_buffer_sample_fn handler, void *ctx)
{
	struct probes *tr = calloc(1, sizeof(*tr));
	int err;

	if (!tr)
		return -ENOMEM;
	for (int s = 0; s < NSETS; s++)
		tr->multi_fd[s] = -1;
	tr->exits = exits;
	tr->ringbuf_mb = ringbuf_mb;
	tr->warm_ring = warm_ring;
	tr->handler = handler;
	tr->handler_ctx = ctx;
	tr->multi = !getenv("PYUPROF_NO_UPROBE_MULTI");
	err = load(tr, t, exits, ringbuf_mb, tr->multi);
	if (!err && tr->multi && !uprobe_multi__supported(bpf_program__fd(tr->skel->progs.on_probe))) {
		dlog("this kernel makes no uprobe_multi link: one link per probe");
		pyuprof_bpf__destroy(tr->skel);
		tr->skel = NULL;
		err = -EOPNOTSUPP;
	}
	if (err && tr->multi) {
		if (err != -EOPNOTSUPP)
			dlog("cannot load for uprobe_multi links (%s): one link per probe",
			     log__errstr(err));
		tr->multi = false;
		err = load(tr, t, exits, ringbuf_mb, false);
	}
	if (!err)
		err = open_ring(tr);
	if (err) {
		probes__free(tr);
		return err;
	}
	*out = tr;
	return 0;
}

static int attach_now(struct probes *tr, const struct py_target *t, const char *tramp_path)
{
	struct link_probes set[NSETS] = { 0 };
	int err;

	err = probes_of(set, t, tr->exits, tramp_path);
	if (err)
		goto out;
	if (tr->multi) {
		err = attach_multi(tr, t->pid, set);
		if (!err)
			goto attached;
		/* loaded for uprobe_multi links, which the kernel makes (probes__load asked) but
		 * not these: loaded again, with the process stopped if it is */
		dlog("no uprobe_multi link (%s): one link per probe", log__errstr(err));
		close_multi(tr);
		ring_buffer__free(tr->rb);
		tr->rb = NULL;
		pyuprof_bpf__destroy(tr->skel);
		tr->skel = NULL;
		tr->multi = false;
		tr->warm_ring = false; /* (the stop would wait for it) */
		err = load(tr, t, tr->exits, tr->ringbuf_mb, false);
		if (!err)
			err = open_ring(tr);
		if (err)
			goto out;
	}
	err = attach_each(tr, t->pid, set);
	if (err)
		goto out;
attached:
	/* batch: a process that ends or execs has its staged records copied out first */
	if (tr->exits == EXITS_BATCH) {
		err = attach_stage_ends(tr);
		if (err)
			goto out;
	}
	/* the target's new threads told as they are made (probes__births) */
	if (bpf_program__autoload(tr->skel->progs.thread_born)) {
		err = attach_prog(tr, tr->skel->progs.thread_born);
		if (err)
			goto out;
	}
	/* --clock cpu: each run slice of the target's threads timed from its start */
	if (tracer_cpu_clock) {
		err = attach_prog(tr, tr->skel->progs.cpu_switch_in);
		if (err)
			goto out;
	}
	tr->skel->bss->hook_enabled = t->offsets->bpf.PyInterpreterState_eval_frame != 0;
	/* <= 3.10 with the trampoline: a call that bypasses it asks for the hook */
	tr->skel->bss->tramp_watch = (tr->exits == EXITS_TRAMPOLINE || tr->exits == EXITS_BATCH) &&
				   !tr->skel->bss->hook_enabled;
out:
	link_probes_free(set);
	return err;
}

/* attach_now, libbpf's looks at the kernel (perf links) made by one thread at a time */
int probes__attach(struct probes *tr, const struct py_target *t, const char *tramp_path)
{
	int err;

	bpf_serial__lock();
	err = attach_now(tr, t, tramp_path);
	bpf_serial__unlock();
	return err;
}

static const char *const exit_names[] = {
	[EXITS_AUTO] = "auto",	     [EXITS_TRAMPOLINE] = "trampoline",
	[EXITS_URETPROBE] = "uretprobe", [EXITS_RET] = "ret",
	[EXITS_USDT] = "usdt",	     [EXITS_BATCH] = "batch",
};

const char *exits__name(enum exits e)
{
	return (unsigned)e < sizeof(exit_names) / sizeof(*exit_names) ? exit_names[e] : "?";
}

int exits__parse(const char *s)
{
	for (unsigned i = 0; i < sizeof(exit_names) / sizeof(*exit_names); i++)
		if (!strcmp(s, exit_names[i]))
			return (int)i;
	return -1;
}

int probes__epoll_fd(struct probes *tr)
{
	return ring_buffer__epoll_fd(tr->rb);
}

int probes__consume_upto(struct probes *tr, uint64_t max_bytes, bool *more)
{
	int n;

	tr->handled = 0;
	tr->bytes = 0;
	tr->max_bytes = max_bytes;
	n = ring_buffer__consume(tr->rb);
	/* a budget spent: the records handled are consumed, the rest wait for the next call */
	*more = n == -EAGAIN && (tr->handled >= CONSUME_BUDGET || tr->bytes >= max_bytes);
	return *more ? (int)tr->handled : n;
}

int probes__consume(struct probes *tr)
{
	bool more;
	int n = probes__consume_upto(tr, UINT64_MAX, &more);

	return more ? CONSUME_BUDGET : n;
}

bool probes__births_possible(enum exits exits)
{
	__u64 dev, ino;

	pidns_of_self(&dev, &ino);
	return exits == EXITS_BATCH && !ino;
}

static int on_birth_sample(void *ctx, void *data, size_t size)
{
	struct probes *tr = ctx;
	const struct thread_birth *b = data;

	if (size >= sizeof(*b))
		tr->on_birth(tr->birth_ctx, b);
	return 0;
}

int probes__births(struct probes *tr, births_fn fn, void *ctx)
{
	if (!tr->skel)
		return -EINVAL;
	/* before the first thread runs unseized: a thread not traced is signalled by nothing */
	tr->skel->bss->tracer_tgid = (__u32)getpid();
	tr->skel->bss->births_on = 1;
	if (!bpf_program__autoload(tr->skel->progs.thread_born))
		return -EOPNOTSUPP;
	if (!tr->births) {
		tr->births = ring_buffer__new(bpf_map__fd(tr->skel->maps.births), on_birth_sample,
					      tr, NULL);
		if (!tr->births)
			return -errno;
	}
	tr->on_birth = fn;
	tr->birth_ctx = ctx;
	tr->skel->bss->births_read = 1;
	return ring_buffer__epoll_fd(tr->births);
}

int probes__births_consume(struct probes *tr)
{
	return tr && tr->births ? ring_buffer__consume(tr->births) : 0;
}

void probes__signal_requests(struct probes *tr, bool on)
{
	tr->skel->bss->signal_requests = on;
}

void probes__stop_hook(struct probes *tr)
{
	tr->skel->bss->hook_enabled = 0;
	tr->skel->bss->tramp_watch = 0;
	tr->skel->bss->signal_requests = 0;
}

void probes__stop_tramp_watch(struct probes *tr)
{
	tr->skel->bss->tramp_watch = 0;
}

/* A link to remove: a uprobe_multi link's descriptor, or a libbpf link. */
struct closing {
	int fd;
	struct bpf_link *link;
};

static void *close_one(void *arg)
{
	struct closing *c = arg;

	if (c->link)
		bpf_link__destroy(c->link);
	else if (c->fd >= 0)
		close(c->fd);
	return NULL;
}

/*
 * Removes n links, each in a thread of its own, all at once: the removal of a link takes its
 * probes out at once and then waits for a grace period of the kernel's (20-60 ms each on the
 * test VM), and removals that wait together wait for about one.
 */
#define CLOSE_AT_ONCE 32
static void close_together(struct closing *c, int n)
{
	pthread_t th[CLOSE_AT_ONCE];
	bool made[CLOSE_AT_ONCE];

	for (int at = 0; at < n; at += CLOSE_AT_ONCE) {
		int k = n - at < CLOSE_AT_ONCE ? n - at : CLOSE_AT_ONCE;

		for (int i = 1; i < k; i++)
			made[i] = !quiet_thread__start(&th[i], close_one, &c[at + i]);
		close_one(&c[at]);
		for (int i = 1; i < k; i++) {
			if (made[i])
				pthread_join(th[i], NULL);
			else
				close_one(&c[at + i]); /* (no thread: here, in turn) */
		}
	}
}

/* Removals under way in threads of their own (probes__detach of a process that ended), until
 * probes__wait_detached joins them. */
#define BEHIND_MAX 64
static struct {
	pthread_t thread[BEHIND_MAX];
	int n;
} behind;

struct behind_job {
	struct closing *c;
	int n;
};

static void *close_behind(void *arg)
{
	struct behind_job *job = arg;

	close_together(job->c, job->n);
	free(job->c);
	free(job);
	return NULL;
}

void probes__wait_detached(void)
{
	for (int i = 0; i < behind.n; i++)
		pthread_join(behind.thread[i], NULL);
	behind.n = 0;
}

/*
 * The links of a process that has ended, handed to a child that keeps copies of them
 * (base/close_behind.h): their removal waits for grace periods of the kernel's, which then
 * neither pyuprof nor its exit waits for. Nothing runs there any more for them to see.
 * Returns the descriptor to close once pyuprof's own copies are closed, or -errno (nothing
 * handed over).
 */
static int hand_over(const struct closing *c, int n)
{
	int fds[CLOSE_AT_ONCE * 2], k = 0;

	for (int i = 0; i < n; i++) {
		if (k == (int)(sizeof(fds) / sizeof(*fds)))
			return -E2BIG;
		fds[k++] = c[i].link ? bpf_link__fd(c[i].link) : c[i].fd;
	}
	return close_behind__fork(fds, k);
}

void probes__detach(struct probes *tr, bool any_order)
{
	struct behind_job *job = NULL;
	struct closing *c;
	int i, n = 0, go;

	c = any_order ? calloc((size_t)tr->nlinks + NSETS, sizeof(*c)) : NULL;
	if (c) {
		/* nothing of the process runs: its last records are in the ring already, all
		 * there will be; read, the probes go while pyuprof goes on (its outputs) */
		while (tr->rb && probes__consume(tr) == CONSUME_BUDGET)
			;
		for (int s = 0; s < NSETS; s++)
			if (tr->multi_fd[s] >= 0)
				c[n++] = (struct closing){ .fd = tr->multi_fd[s] };
		for (i = 0; i < tr->nlinks; i++)
			c[n++] = (struct closing){ .fd = -1, .link = tr->links[i] };
		for (int s = 0; s < NSETS; s++)
			tr->multi_fd[s] = -1;
		tr->nlinks = 0;
		go = hand_over(c, n);
		if (go >= 0) {
			for (i = 0; i < n; i++)
				close_one(&c[i]); /* each the last no more: at once */
			close(go); /* and then the child's */
			free(c);
			return;
		}
		job = behind.n < BEHIND_MAX ? malloc(sizeof(*job)) : NULL;
		if (job) {
			*job = (struct behind_job){ .c = c, .n = n };
			if (!quiet_thread__start(&behind.thread[behind.n], close_behind, job)) {
				behind.n++;
				return;
			}
			free(job);
		}
		close_together(c, n);
		free(c);
		return;
	}
	/* entries first (detach order), so that every call seen also has its return */
	close_multi(tr);
	/* links were made last first: destroyed in reverse, the entries go first here too */
	for (i = tr->nlinks - 1; i >= 0; i--)
		bpf_link__destroy(tr->links[i]);
	tr->nlinks = 0;
	/* no program runs any more: what is in the ring buffer is all there will be */
	while (tr->rb && probes__consume(tr) == CONSUME_BUDGET)
		;
}

void probes__stage_close(struct probes *tr, struct staging_pos *pos)
{
	tr->skel->bss->stage_closed = 1;
	pos->r = tr->skel->bss->stage_r;
	pos->gen = tr->skel->bss->stage_g;
	pos->owner = tr->skel->bss->stage_owner;
}

int probes__thread_name_path(struct probes *tr, uint64_t type,
			     const struct thread_name_path *path)
{
	return bpf_map__update_elem(tr->skel->maps.thread_name_paths, &type, sizeof(type), path,
				    sizeof(*path), BPF_ANY);
}

void probes__counters(struct probes *tr, struct pyuprof_stats *out)
{
	*out = tr->skel->bss->stats;
}

void probes__exit_counters(struct probes *tr, struct pyuprof_exit_stats *out)
{
	*out = tr->skel->bss->exit_stats;
}

int probes__run_time(struct probes *tr, uint64_t *run_ns, uint64_t *runs)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	int err;

	memset(&info, 0, sizeof(info));
	err = bpf_obj_get_info_by_fd(bpf_program__fd(tr->skel->progs.on_probe), &info, &len);
	if (err)
		return err;
	*run_ns = info.run_time_ns;
	*runs = info.run_cnt;
	return 0;
}

void probes__free(struct probes *tr)
{
	if (!tr)
		return;
	probes__detach(tr, false);
	ring_buffer__free(tr->births);
	ring_buffer__free(tr->rb);
	pyuprof_bpf__destroy(tr->skel);
	free(tr->links);
	free(tr);
}
