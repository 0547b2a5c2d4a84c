// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The guard of a hold: loading bpf/hold_guard.bpf.c, arming threads, taking its stops. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "base/bpf_serial.h"
#include "base/quiet_thread.h"
#include "inject/hold_guard.h"
#include "hold_guard.skel.h"

struct hold_guard {
	struct hold_guard_bpf *skel;
	struct bpf_link *link; /* raw_tp/sys_exit while a thread may be armed */
};

/* The BPF side sees tids in the initial PID namespace: pyuprof must be there to arm one. */
static bool in_initial_pidns(void)
{
	struct stat st;

	return !stat("/proc/self/ns/pid", &st) && st.st_ino == 0xEFFFFFFCUL /* PROC_PID_INIT_INO */;
}

static int open_now(struct hold_guard **out)
{
	struct hold_guard *g;
	int err;

	if (!in_initial_pidns())
		return -EOPNOTSUPP;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	bpf_serial__lock();
	g->skel = hold_guard_bpf__open_and_load();
	bpf_serial__unlock();
	if (!g->skel) {
		err = -errno ? -errno : -EOPNOTSUPP;
		free(g);
		return err;
	}
	*out = g;
	return 0;
}

/* The guard loaded ahead (hold_guard__preload), while the thread that loads it runs or until a
 * hold takes it. */
static struct {
	pthread_t thread;
	bool started;
	struct hold_guard *g;
	int err;
} ahead;

static void *load_ahead(void *arg)
{
	(void)arg;
	ahead.err = open_now(&ahead.g);
	return NULL;
}

void hold_guard__preload(void)
{
	if (ahead.started || ahead.g)
		return;
	ahead.started = !quiet_thread__start(&ahead.thread, load_ahead, NULL);
}

/* The guard loaded ahead, once its thread is done: 0 and *out, -errno, or -ENOENT (none). */
static int take_ahead(struct hold_guard **out)
{
	int err;

	if (!ahead.started)
		return -ENOENT;
	pthread_join(ahead.thread, NULL);
	ahead.started = false;
	err = ahead.err;
	*out = ahead.g;
	ahead.g = NULL;
	return err;
}

int hold_guard__open(struct hold_guard **out)
{
	int err = take_ahead(out);

	return err == -ENOENT ? open_now(out) : err;
}

void hold_guard__drop_preloaded(void)
{
	struct hold_guard *g = NULL;

	if (!take_ahead(&g))
		hold_guard__free(g);
}

int hold_guard__arm(struct hold_guard *g, pid_t pid, pid_t tid)
{
	__u32 key = (__u32)tid, tgid = (__u32)pid;

	if (!g->link) {
		/* attached only while a hold may have threads armed: a raw_tp on sys_exit puts
		 * every system call of the machine on its slow path */
		bpf_serial__lock();
		g->link = bpf_program__attach(g->skel->progs.guard_exit);
		bpf_serial__unlock();
		if (!g->link)
			return -errno;
	}
	if (bpf_map__update_elem(g->skel->maps.armed, &key, sizeof(key), &tgid, sizeof(tgid),
				 BPF_ANY))
		return -errno;
	return 0;
}

static bool has(struct bpf_map *map, pid_t tid)
{
	__u32 key = (__u32)tid, v;

	return !bpf_map__lookup_elem(map, &key, sizeof(key), &v, sizeof(v), 0);
}

static bool take(struct bpf_map *map, pid_t tid)
{
	__u32 key = (__u32)tid;

	return !bpf_map__delete_elem(map, &key, sizeof(key), 0);
}

bool hold_guard__armed(struct hold_guard *g, pid_t tid)
{
	return has(g->skel->maps.armed, tid) || has(g->skel->maps.sent, tid);
}

void hold_guard__disarm(struct hold_guard *g, pid_t tid)
{
	take(g->skel->maps.armed, tid);
}

bool hold_guard__take(struct hold_guard *g, pid_t tid)
{
	return take(g->skel->maps.sent, tid);
}

bool hold_guard__pending(struct hold_guard *g, pid_t tid)
{
	return has(g->skel->maps.sent, tid);
}

bool hold_guard__missed(struct hold_guard *g, pid_t tid)
{
	return take(g->skel->maps.missed, tid);
}

int hold_guard__query(struct hold_guard *g, pid_t tid, uint64_t *fs_base, uint64_t *masks)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);

	g->skel->bss->query_tid = (__u32)tid;
	if (bpf_prog_test_run_opts(bpf_program__fd(g->skel->progs.thread_query), &opts))
		return -errno;
	if (opts.retval)
		return -ESRCH;
	*fs_base = g->skel->bss->query_fs_base;
	*masks = g->skel->bss->query_masks;
	return 0;
}

void hold_guard__detach(struct hold_guard *g)
{
	if (!g || !g->link)
		return;
	bpf_link__destroy(g->link);
	g->link = NULL;
}

void hold_guard__free(struct hold_guard *g)
{
	if (!g)
		return;
	hold_guard__detach(g);
	hold_guard_bpf__destroy(g->skel);
	free(g);
}
