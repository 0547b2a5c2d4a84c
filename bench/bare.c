// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bench/bare MODE -- COMMAND...: runs COMMAND (a Python program) with counting-only probes at
 * pyuprof's probe points, then prints the counts. MODE is one of
 *   none     no probe (the launch path alone)
 *   entry    uprobe at _PyEval_EvalFrameDefault's entry
 *   ret      uprobe at each of its ret instructions
 *   both     entry + ret sites: what pyuprof traps on
 *   uretprobe  entry uprobe + uretprobe, the classic pair (drops returns past 64 nested calls)
 *   preret   entry + the instruction just before each ret (pop %r15 in every build here)
 *   exit     entry + pyuprof's exit points: the USDT function__return where pyuprof uses it
 *            (Debian's 3.11), else the ret sites (the same as both)
 *   stage    a counting probe on the staging anchor's flush (BARE_STAGE=PATH:OFFSET of
 *            tramp_flush in the anchor's .so, which bench/with_stage.py sets as the hook)
 * The eval_frame switch is applied as pyuprof does (3.11+), so call counts are comparable.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bare.skel.h"
#include "base/log.h"
#include "inject/hook.h"
#include "inject/launch.h"

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

/* The offset of the instruction before the ret at off: pop %r15 (41 5f) in the builds here. */
static uint64_t before_ret(const struct py_target *t, uint64_t off)
{
	unsigned char b[2] = { 0 };
	int fd = open(t->path, O_RDONLY);

	if (fd < 0 || pread(fd, b, 2, (off_t)off - 2) != 2 || b[0] != 0x41 || b[1] != 0x5f) {
		fprintf(stderr, "bare: no pop %%r15 before the ret at %#llx\n",
			(unsigned long long)off);
		exit(1);
	}
	close(fd);
	return off - 2;
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
		fprintf(stderr, "usage: bare none|entry|ret|both|exit|preret|uretprobe|stage -- "
				"COMMAND...\n");
		return 64;
	}
	mode = argv[1];
	err = launch__start(argv + 3, NULL, &pid, &t, &st, why, sizeof(why));
	if (err) {
		fprintf(stderr, "bare: %s\n", why);
		return 1;
	}
	skel = bare_bpf__open();
	skel->rodata->targ_tgid = pid;
	if (bare_bpf__load(skel)) {
		fprintf(stderr, "bare: load failed\n");
		launch__abort(pid);
		return 1;
	}
	if (!strcmp(mode, "entry") || !strcmp(mode, "both") || !strcmp(mode, "uretprobe") ||
	    !strcmp(mode, "preret") || !strcmp(mode, "exit"))
		attach(skel->progs.count_entry, false, &t, t.eval_offset);
	if (!strcmp(mode, "exit") && t.exit_probe.offset) {
		LIBBPF_OPTS(bpf_uprobe_opts, uo, .ref_ctr_offset = t.exit_probe.semaphore_offset);

		if (!bpf_program__attach_uprobe_opts(skel->progs.count_return, t.pid, t.path,
						     t.exit_probe.offset, &uo)) {
			fprintf(stderr, "bare: attach failed\n");
			return 1;
		}
	} else if (!strcmp(mode, "ret") || !strcmp(mode, "both") || !strcmp(mode, "exit")) {
		for (i = 0; i < t.nret; i++)
			attach(skel->progs.count_return, false, &t, t.ret_offsets[i]);
	}
	if (!strcmp(mode, "preret"))
		for (i = 0; i < t.nret; i++)
			attach(skel->progs.count_return, false, &t, before_ret(&t, t.ret_offsets[i]));
	if (!strcmp(mode, "uretprobe"))
		attach(skel->progs.count_return, true, &t, t.eval_offset);
	/* the staging anchor's flush (bench/with_stage.py loads it): BARE_STAGE=PATH:OFFSET */
	if (!strcmp(mode, "stage")) {
		const char *spec = getenv("BARE_STAGE");
		const char *colon = spec ? strrchr(spec, ':') : NULL;
		char path[4096];

		if (!colon || (size_t)(colon - spec) >= sizeof(path)) {
			fprintf(stderr, "bare: stage wants BARE_STAGE=PATH:OFFSET\n");
			launch__abort(pid);
			return 1;
		}
		snprintf(path, sizeof(path), "%.*s", (int)(colon - spec), spec);
		if (!bpf_program__attach_uprobe(skel->progs.count_return, false, pid, path,
						strtoull(colon + 1, NULL, 0))) {
			fprintf(stderr, "bare: attach failed\n");
			launch__abort(pid);
			return 1;
		}
	}
	hook__setup(&hooks, &t, 0);
	hook__preinit(&t, &hooks);
	launch__release(pid);
	waitpid(pid, &st, 0);
	printf("bare %s: %llu entries, %llu returns\n", mode, (unsigned long long)skel->bss->entries,
	       (unsigned long long)skel->bss->returns);
	/* the programs' own time, while kernel.bpf_stats_enabled is 1 */
	{
		struct bpf_program *progs[] = { skel->progs.count_entry, skel->progs.count_return };
		unsigned long long ns = 0, n = 0;

		for (i = 0; i < 2; i++) {
			struct bpf_prog_info info;
			__u32 len = sizeof(info);

			memset(&info, 0, sizeof(info));
			if (!bpf_obj_get_info_by_fd(bpf_program__fd(progs[i]), &info, &len)) {
				ns += info.run_time_ns;
				n += info.run_cnt;
			}
		}
		if (n)
			printf("bpf_runs %llu bpf_ns_each %.0f\n", n, (double)ns / (double)n);
	}
	bare_bpf__destroy(skel);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
