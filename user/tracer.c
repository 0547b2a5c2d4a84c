// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Owns the BPF skeleton. Probes are attached to the interpreter object by file offset and for
 * the target pid only: the entry of _PyEval_EvalFrameDefault, each of its ret instructions (a
 * uretprobe would be dropped past 64 nested calls), and on 3.11+ the entry and ret
 * instructions of the eval_frame setter. One program serves them all, told apart by the attach
 * cookie (enum probe_role).
 *
 * All probes go into one uprobe_multi link where the kernel has it (6.6+): removing a uprobe
 * waits for an RCU grace period, 0.1-0.25 s, and a link waits once for all its probes, where
 * one perf-event link per probe waits once each (about a second for 7 probes). Elsewhere, or
 * with PYUPROF_NO_UPROBE_MULTI set in the environment (to test that path), one link per probe.
 *
 * The target does not run while the probes are attached (attach mode stops it; a launched
 * program has not started), so the attach order does not matter. At detach the entry probe
 * goes first, so that every call seen also has its return: in the multi link it comes first
 * in the array, which is the order the kernel unregisters in.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "log.h"
#include "tracer.h"
#include "uprobe_multi.h"
#include "pyuprof.skel.h" /* after the shared headers it refers to */

struct tracer {
	struct pyuprof_bpf *skel;
	struct ring_buffer *rb;
	int multi_fd; /* the uprobe_multi link, or -1 */
	struct bpf_link **links; /* otherwise one per probe, in attach order */
	int nlinks;
};

/* Every probe for t, entry first: offset, USDT semaphore (0: none), role. */
struct probes {
	uint64_t *offsets, *ref_ctrs, *cookies;
	uint32_t n;
};

static void add(struct probes *p, uint64_t offset, uint64_t ref_ctr, enum probe_role role)
{
	p->offsets[p->n] = offset;
	p->ref_ctrs[p->n] = ref_ctr;
	p->cookies[p->n++] = role;
}

static bool tracer_cpu_clock;

void tracer__set_cpu_clock(bool on)
{
	tracer_cpu_clock = on;
}

static int probes_of(struct probes *p, const struct py_target *t)
{
	bool hook = t->offsets->bpf.PyInterpreterState_eval_frame != 0;
	size_t cap = (size_t)t->nret + t->nsetter_ret + t->nperf_ret + 4;
	int i;

	p->n = 0;
	p->offsets = calloc(cap, sizeof(uint64_t));
	p->ref_ctrs = calloc(cap, sizeof(uint64_t));
	p->cookies = calloc(cap, sizeof(uint64_t));
	if (!p->offsets || !p->ref_ctrs || !p->cookies)
		return -ENOMEM;
	add(p, t->eval_offset, 0, PROBE_EVAL_ENTRY);
	if (t->exit_probe.offset)
		/* the kernel raises the probe's semaphore, and lowers it however we end */
		add(p, t->exit_probe.offset, t->exit_probe.semaphore_offset, PROBE_FRAME_EXIT);
	for (i = 0; !t->exit_probe.offset && i < t->nret; i++)
		add(p, t->ret_offsets[i], 0, PROBE_EVAL_RETURN);
	if (hook && t->setter_offset) {
		add(p, t->setter_offset, 0, PROBE_SETTER);
		for (i = 0; i < t->nsetter_ret; i++)
			add(p, t->setter_ret_offsets[i], 0, PROBE_SETTER_RET);
		if (t->perf_init_offset)
			add(p, t->perf_init_offset, 0, PROBE_PERF_INIT);
		for (i = 0; i < t->nperf_ret; i++)
			add(p, t->perf_ret_offsets[i], 0, PROBE_PERF_INIT_RET);
	}
	if (t->inline_init_offset)
		add(p, t->inline_init_offset, 0, PROBE_INLINE_INIT);
	return 0;
}

static void probes_free(struct probes *p)
{
	free(p->offsets);
	free(p->ref_ctrs);
	free(p->cookies);
}

/* One perf-event link per probe; the entry last, so it is the first one detached. */
static int attach_each(struct tracer *tr, const struct py_target *t, const struct probes *p)
{
	uint32_t i;

	tr->links = calloc(p->n, sizeof(*tr->links));
	if (!tr->links)
		return -ENOMEM;
	for (i = 0; i < p->n; i++) {
		uint32_t k = (i + 1) % p->n; /* 1, 2, ..., n-1, then 0: the entry */
		LIBBPF_OPTS(bpf_uprobe_opts, uo, .ref_ctr_offset = p->ref_ctrs[k],
			    .bpf_cookie = p->cookies[k]);
		struct bpf_link *link;

		link = bpf_program__attach_uprobe_opts(tr->skel->progs.on_probe, t->pid, t->path,
						       p->offsets[k], &uo);
		if (!link)
			return -errno;
		tr->links[tr->nlinks++] = link;
	}
	return 0;
}

/* Opens, configures and loads the skeleton; multi: for a uprobe_multi link. */
static int load(struct tracer *tr, const struct py_target *t, unsigned ringbuf_mb, bool multi)
{
	struct pyuprof_bpf *skel = tr->skel = pyuprof_bpf__open();
	int err;

	if (!skel)
		return -errno ? -errno : -ENOMEM;
	skel->rodata->off = t->offsets->bpf;
	skel->rodata->targ_tgid = (__u32)t->pid;
	skel->rodata->hook_value = t->eval_addr;
	skel->rodata->ob_type_off = t->offsets->PyObject_ob_type;
	skel->rodata->tp_name_off = t->offsets->PyTypeObject_tp_name;
	skel->rodata->spec_cache_init_off = t->offsets->PyHeapTypeObject_spec_cache_init;
	skel->rodata->func_code_off = t->offsets->PyFunctionObject_func_code;
	skel->rodata->localsplus_off = t->offsets->PyFrame_localsplus;
	skel->rodata->want_recursion_bonus = t->offsets->c_recursion_bonus != 0;
	skel->rodata->entry_shim = t->major == 3 && t->minor >= 12;
	/* the shadow of activations is popped at their rets, which are not probed there */
	skel->rodata->use_shadow = !t->exit_probe.offset;
	skel->rodata->cpu_clock = tracer_cpu_clock;
	if (t->offsets->PyInterpreterFrame_size) /* FRAME_SPECIALS_SIZE */
		skel->rodata->frame_specials = (t->offsets->PyInterpreterFrame_size - 1) / 8;
	err = bpf_map__set_max_entries(skel->maps.events, ringbuf_mb << 20);
	if (!err && multi)
		err = bpf_program__set_expected_attach_type(skel->progs.on_probe,
							    UPROBE_MULTI_ATTACH_TYPE);
	if (!err)
		err = pyuprof_bpf__load(skel);
	if (err) {
		pyuprof_bpf__destroy(skel);
		tr->skel = NULL;
	}
	return err;
}

int tracer__start(struct tracer **out, const struct py_target *t, unsigned ringbuf_mb,
		  ring_buffer_sample_fn handler, void *ctx)
{
	struct tracer *tr = calloc(1, sizeof(*tr));
	struct probes p = { 0 };
	int err;

	if (!tr)
		return -ENOMEM;
	tr->multi_fd = -1;
	err = probes_of(&p, t);
	if (err)
		goto fail;
	if (!getenv("PYUPROF_NO_UPROBE_MULTI")) {
		err = load(tr, t, ringbuf_mb, true);
		if (!err) {
			tr->multi_fd = uprobe_multi_attach(bpf_program__fd(tr->skel->progs.on_probe),
							   t->pid, t->path, p.offsets, p.ref_ctrs,
							   p.cookies, p.n);
			err = tr->multi_fd < 0 ? tr->multi_fd : 0;
		}
		if (err) {
			dlog("no uprobe_multi link (%s): one link per probe", errstr(err));
			pyuprof_bpf__destroy(tr->skel);
			tr->skel = NULL;
			tr->multi_fd = -1;
		}
	}
	if (tr->multi_fd < 0) {
		err = load(tr, t, ringbuf_mb, false);
		if (!err)
			err = attach_each(tr, t, &p);
		if (err)
			goto fail;
	}
	tr->skel->bss->hook_enabled = t->offsets->bpf.PyInterpreterState_eval_frame != 0;
	tr->rb = ring_buffer__new(bpf_map__fd(tr->skel->maps.events), handler, ctx, NULL);
	if (!tr->rb) {
		err = -errno;
		goto fail;
	}
	probes_free(&p);
	*out = tr;
	return 0;
fail:
	probes_free(&p);
	tracer__free(tr);
	return err;
}

int tracer__epoll_fd(struct tracer *tr)
{
	return ring_buffer__epoll_fd(tr->rb);
}

int tracer__consume(struct tracer *tr)
{
	return ring_buffer__consume(tr->rb);
}

void tracer__signal_requests(struct tracer *tr, bool on)
{
	tr->skel->bss->signal_requests = on;
}

void tracer__stop_hook(struct tracer *tr)
{
	tr->skel->bss->hook_enabled = 0;
	tr->skel->bss->signal_requests = 0;
}

void tracer__detach(struct tracer *tr)
{
	int i;

	if (tr->multi_fd >= 0)
		close(tr->multi_fd);
	tr->multi_fd = -1;
	/* reverse order: the entry probe goes first, so every call seen also has its return */
	for (i = tr->nlinks - 1; i >= 0; i--)
		bpf_link__destroy(tr->links[i]);
	tr->nlinks = 0;
	/* no program runs any more: what is in the ring buffer is all there will be */
	if (tr->rb)
		ring_buffer__consume(tr->rb);
}

void tracer__counters(struct tracer *tr, struct pyuprof_stats *out)
{
	*out = tr->skel->bss->stats;
}

int tracer__run_time(struct tracer *tr, uint64_t *run_ns, uint64_t *runs)
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

void tracer__free(struct tracer *tr)
{
	if (!tr)
		return;
	tracer__detach(tr);
	ring_buffer__free(tr->rb);
	pyuprof_bpf__destroy(tr->skel);
	free(tr->links);
	free(tr);
}
