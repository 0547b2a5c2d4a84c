// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Owns the BPF skeleton. Probes are attached to the interpreter object by file offset and for
 * the target pid only: the entry of _PyEval_EvalFrameDefault, each of its ret instructions (a
 * uretprobe would be dropped past 64 nested calls), and on 3.11+ the entry and ret
 * instructions of the eval_frame setter.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "log.h"
#include "tracer.h"
#include "pyuprof.skel.h" /* after the shared headers it refers to */

struct tracer {
	struct pyuprof_bpf *skel;
	struct ring_buffer *rb;
	struct bpf_link **links;
	int nlinks;
};

static int attach(struct tracer *tr, struct bpf_program *prog, bool ret, const struct py_target *t,
		  uint64_t offset)
{
	struct bpf_link *link;

	link = bpf_program__attach_uprobe(prog, ret, t->pid, t->path, (size_t)offset);
	if (!link)
		return -errno;
	tr->links[tr->nlinks++] = link;
	return 0;
}

int tracer__start(struct tracer **out, const struct py_target *t, unsigned ringbuf_mb,
		  ring_buffer_sample_fn handler, void *ctx)
{
	struct tracer *tr = calloc(1, sizeof(*tr));
	struct pyuprof_bpf *skel;
	bool hook = t->offsets->bpf.PyInterpreterState_eval_frame != 0;
	int i, err;

	if (!tr)
		return -ENOMEM;
	/* ret sites, setter entry and rets, perf trampoline entry and rets, inline __init__,
	 * eval entry */
	tr->links = calloc(t->nret + t->nsetter_ret + t->nperf_ret + 4, sizeof(*tr->links));
	skel = tr->skel = pyuprof_bpf__open();
	if (!tr->links || !skel) {
		err = -ENOMEM;
		goto fail;
	}
	skel->rodata->off = t->offsets->bpf;
	skel->rodata->targ_tgid = (__u32)t->pid;
	skel->rodata->hook_value = t->eval_addr;
	skel->rodata->ob_type_off = t->offsets->PyObject_ob_type;
	skel->rodata->tp_name_off = t->offsets->PyTypeObject_tp_name;
	skel->rodata->spec_cache_init_off = t->offsets->PyHeapTypeObject_spec_cache_init;
	skel->rodata->func_code_off = t->offsets->PyFunctionObject_func_code;
	skel->rodata->localsplus_off = t->offsets->PyFrame_localsplus;
	skel->rodata->want_recursion_bonus = t->offsets->c_recursion_bonus != 0;
	err = bpf_map__set_max_entries(skel->maps.events, ringbuf_mb << 20);
	if (err)
		goto fail;
	err = pyuprof_bpf__load(skel);
	if (err)
		goto fail;
	skel->bss->hook_enabled = hook;

	tr->rb = ring_buffer__new(bpf_map__fd(skel->maps.events), handler, ctx, NULL);
	if (!tr->rb) {
		err = -errno;
		goto fail;
	}
	/* returns before entries: a return without its entry is ignored, an entry without its
	 * return would leave a frame open */
	if (t->exit_probe.offset) {
		LIBBPF_OPTS(bpf_uprobe_opts, uo, .ref_ctr_offset = t->exit_probe.semaphore_offset);
		struct bpf_link *link;

		/* the kernel raises the probe's semaphore, and lowers it however we end */
		link = bpf_program__attach_uprobe_opts(skel->progs.on_frame_exit, t->pid, t->path,
						       t->exit_probe.offset, &uo);
		if (!link) {
			err = -errno;
			goto fail;
		}
		tr->links[tr->nlinks++] = link;
	}
	for (i = 0; !t->exit_probe.offset && i < t->nret; i++) {
		err = attach(tr, skel->progs.on_eval_return, false, t, t->ret_offsets[i]);
		if (err)
			goto fail;
	}
	if (hook && t->setter_offset) {
		err = attach(tr, skel->progs.on_set_eval_frame, false, t, t->setter_offset);
		for (i = 0; !err && i < t->nsetter_ret; i++)
			err = attach(tr, skel->progs.on_set_eval_frame_ret, false, t,
				     t->setter_ret_offsets[i]);
		if (!err && t->perf_init_offset)
			err = attach(tr, skel->progs.on_perf_trampoline_init, false, t,
				     t->perf_init_offset);
		for (i = 0; !err && i < t->nperf_ret; i++)
			err = attach(tr, skel->progs.on_perf_trampoline_init_ret, false, t,
				     t->perf_ret_offsets[i]);
		if (err)
			goto fail;
	}
	if (t->inline_init_offset) {
		err = attach(tr, skel->progs.on_inline_init, false, t, t->inline_init_offset);
		if (err)
			goto fail;
	}
	err = attach(tr, skel->progs.on_eval_entry, false, t, t->eval_offset);
	if (err)
		goto fail;
	*out = tr;
	return 0;
fail:
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

void tracer__free(struct tracer *tr)
{
	if (!tr)
		return;
	if (tr->links)
		tracer__detach(tr);
	ring_buffer__free(tr->rb);
	pyuprof_bpf__destroy(tr->skel);
	free(tr->links);
	free(tr);
}
