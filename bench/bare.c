// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bench/bare MODE -- COMMAND...: runs COMMAND (a Python program) with counting-only probes at
 * pyuprof's probe points, then prints the counts. MODE is one of
 *   none     no probe (the launch path alone)
 *   entry    uprobe at _PyEval_EvalFrameDefault's entry
 *   ret      uprobe at each of its ret instructions
 *   both     entry + ret sites: what pyuprof traps on
 *   uretprobe  entry uprobe + uretprobe, the classic pair (drops returns past 64 nested calls)
 * The eval_frame switch is applied as pyuprof does (3.11+), so call counts are comparable.
 */
#include <bpf/libbpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "bare.skel.h"
#include "hook.h"
#include "launch.h"
#include "log.h"

static struct bpf_link *attach(struct bpf_program *prog, bool ret, struct py_target *t,
			       uint64_t off)
{
	struct bpf_link *l = bpf_program__attach_uprobe(prog, ret, t->pid, t->path, off);

	if (!l) {
		fprintf(stderr, "bare: attach failed\n");
		exit(1);
	}
	return l;
}

int main(int argc, char **argv)
{
	struct hook_state hooks = { 0 };
	struct py_target t;
	struct bare_bpf *skel;
	char why[512];
	int st, i, err;
	pid_t pid;
	const char *mode;

	if (argc < 4 || strcmp(argv[2], "--")) {
		fprintf(stderr, "usage: bare none|entry|ret|both|uretprobe -- COMMAND...\n");
		return 64;
	}
	mode = argv[1];
	err = launch_start(argv + 3, &pid, &t, &st, why, sizeof(why));
	if (err) {
		fprintf(stderr, "bare: %s\n", why);
		return 1;
	}
	skel = bare_bpf__open();
	skel->rodata->targ_tgid = pid;
	if (bare_bpf__load(skel)) {
		fprintf(stderr, "bare: load failed\n");
		launch_abort(pid);
		return 1;
	}
	if (!strcmp(mode, "entry") || !strcmp(mode, "both") || !strcmp(mode, "uretprobe"))
		attach(skel->progs.count_entry, false, &t, t.eval_offset);
	if (!strcmp(mode, "ret") || !strcmp(mode, "both"))
		for (i = 0; i < t.nret; i++)
			attach(skel->progs.count_return, false, &t, t.ret_offsets[i]);
	if (!strcmp(mode, "uretprobe"))
		attach(skel->progs.count_return, true, &t, t.eval_offset);
	hook_preinit(&t, &hooks);
	launch_release(pid);
	waitpid(pid, &st, 0);
	printf("bare %s: %llu entries, %llu returns\n", mode, (unsigned long long)skel->bss->entries,
	       (unsigned long long)skel->bss->returns);
	bare_bpf__destroy(skel);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
