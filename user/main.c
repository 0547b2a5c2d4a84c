// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pyuprof record: find the target -> load and attach the probes -> (3.11+) switch inlining off
 * -> consume events until told to stop -> switch inlining back on -> write the profile.
 * Everything else lives in the modules; this file is the order of things and the exit paths.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "events.h"
#include "hook.h"
#include "launch.h"
#include "log.h"
#include "out_pstats.h"
#include "outfile.h"
#include "proc.h"
#include "profile.h"
#include "py_target.h"
#include "report.h"
#include "tracer.h"

static volatile sig_atomic_t exiting;
static volatile pid_t child_pid;

/*
 * Attach mode: any of these signals ends the recording. Launch mode: the program decides; a
 * signal sent to pyuprof alone is passed on to it, while a terminal's Ctrl-C already reached it
 * (same process group) and is not sent twice.
 */
static void on_signal(int sig, siginfo_t *info, void *uctx)
{
	(void)uctx;
	if (!child_pid) {
		exiting = 1;
		return;
	}
	if (info->si_code == SI_USER || info->si_code == SI_QUEUE || sig == SIGTERM ||
	    sig == SIGHUP)
		kill(child_pid, sig);
}

static void install_signals(void)
{
	struct sigaction sa = { .sa_sigaction = on_signal, .sa_flags = SA_SIGINFO };
	int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts); /* the clock of bpf_ktime_get_ns */
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CAP_BPF and CAP_PERFMON (BPF programs, uprobes), CAP_SYS_PTRACE (the target's memory, and
 * stopping it around writes). Root has them all. */
static bool has_privileges(void)
{
	const unsigned long long need = 1ull << 19 | 1ull << 38 | 1ull << 39;
	unsigned long long eff = 0;
	char line[256];
	FILE *f = fopen("/proc/self/status", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	if (f)
		fclose(f);
	return (eff & need) == need;
}

static int exit_status_of(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return 1;
}

/* Summary of everything that was repaired, lost or left out: nothing goes unreported. */
static void print_notes(const struct profile *p, const struct recorder *r,
			const struct pyuprof_stats *s, const struct py_target *t)
{
	const struct hook_state *h = r->hooks;

	if (s->lost_calls + s->lost_returns + s->lost_codes + s->lost_requests)
		wlog("the ring buffer was full: %llu calls, %llu returns and %llu code identities "
		     "were lost (try a larger --ringbuf-mb)",
		     (unsigned long long)s->lost_calls, (unsigned long long)s->lost_returns,
		     (unsigned long long)s->lost_codes);
	if (p->n.recovered)
		wlog("%llu calls ran inline despite the eval_frame switch (a known CPython %s hole) "
		     "and were recovered from the frame chain; calls of that kind that call no "
		     "other Python function are not seen",
		     (unsigned long long)p->n.recovered, t->version);
	if (h->resets_setter + h->resets_entry)
		wlog("the target reset its eval_frame hook %llu times (a PEP 523 user such as "
		     "Dynamo turning itself off); pyuprof switched it back, calls made in the "
		     "moment between may be missing",
		     (unsigned long long)(h->resets_setter + h->resets_entry));
	if (s->foreign_hook)
		vlog("another eval_frame hook (PEP 523) was active; it was left alone");
	if (s->read_fail)
		wlog("%llu reads of the target's memory failed", (unsigned long long)s->read_fail);
	if (p->n.unknown_code)
		wlog("%llu calls have no function name (identity lost)",
		     (unsigned long long)p->n.unknown_code);
	if (p->n.closed_unseen || p->n.unmatched_returns)
		vlog("%llu frames returned without an event, %llu returns of frames entered before "
		     "recording", (unsigned long long)p->n.closed_unseen,
		     (unsigned long long)p->n.unmatched_returns);
	if (p->n.open_at_stop)
		vlog("%llu calls were still running at the stop and were closed there",
		     (unsigned long long)p->n.open_at_stop);
}

static int write_profile(const struct profile *p, struct outfile *out)
{
	struct marshal_buf b;
	int err;

	marshal_init(&b);
	err = pstats_encode(p, &b);
	if (!err)
		err = outfile__write(out, b.data, b.len);
	if (!err)
		err = outfile__commit(out);
	marshal_free(&b);
	return err;
}

int main(int argc, char **argv)
{
	struct recorder rec = { 0 };
	struct outfile out = { .fd = -1 };
	struct py_target target = { 0 };
	struct hook_state hooks = { 0 };
	struct pyuprof_stats bstats = { 0 };
	struct tracer *tr = NULL;
	uint64_t start_ns, stop_ns, deadline_ns = 0;
	int err, child_status = -1, exit_code = 1, restored;
	bool launched, released = false, child_done = false;
	char why[512] = "";
	pid_t pid;

	cli_parse(argc, argv);
	log_level = env.debug ? LOG_DEBUG : env.verbose ? LOG_VERBOSE : env.quiet ? LOG_ERROR
										: LOG_INFO;
	libbpf_set_print(libbpf_print_fn);
	launched = env.command != NULL;

	if (!has_privileges()) {
		elog("needs root (or CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE): run it with sudo");
		return 1;
	}
	/* fail on an unwritable output before touching any process */
	err = outfile__open(&out, env.output ? env.output : "pyuprof.prof");
	if (err) {
		elog("cannot write %s: %s", env.output ? env.output : "in the current directory",
		     strerror(-err));
		return 1;
	}
	install_signals();

	if (launched) {
		err = launch_start(env.command, &pid, &target, &child_status, why, sizeof(why));
		if (err) {
			elog("%s", why);
			goto cleanup;
		}
		child_pid = pid;
	} else {
		pid = env.pid;
		err = py_target__find(pid, &target, why, sizeof(why));
		if (err) {
			elog("cannot record pid %d: %s", pid, why);
			goto cleanup;
		}
	}
	if (!env.output)
		snprintf(out.path, sizeof(out.path), "pyuprof-%d.prof", pid);
	vlog("Python %s in %s (pid %d), %d return sites", target.version, target.path, pid,
	     target.nret);

	rec.prof = profile__new();
	rec.target = &target;
	rec.hooks = &hooks;
	if (!rec.prof) {
		err = -ENOMEM;
		elog("out of memory");
		goto cleanup;
	}
	err = tracer__start(&tr, &target, env.ringbuf_mb, recorder__handle, &rec);
	if (err) {
		elog("cannot attach probes to pid %d: %s", pid, errstr(err));
		goto cleanup;
	}
	start_ns = now_ns();
	if (env.duration > 0)
		deadline_ns = start_ns + (uint64_t)(env.duration * 1e9);
	if (launched) {
		err = hook_preinit(&target, &hooks);
		if (err)
			wlog("cannot switch inlining off before start (%s); switched at the first "
			     "call instead", strerror(-err));
		err = launch_release(pid);
		if (err) {
			elog("cannot start %s: %s", env.command[0], strerror(-err));
			goto cleanup;
		}
		released = true;
	} else if (target.offsets->bpf.PyInterpreterState_eval_frame) {
		err = hook_install(&target, &hooks);
		if (err)
			wlog("cannot stop pid %d to switch inlining off (%s); switched at its next "
			     "call instead", pid, strerror(-err));
		err = 0;
	}
	ilog("recording pid %d (Python %s)%s", pid, target.version,
	     launched ? "" : "; Ctrl-C to stop");

	while (!exiting) {
		err = tracer__poll(tr, 100);
		if (err == -EINTR)
			err = 0;
		if (err < 0) {
			elog("reading events failed: %s", errstr(err));
			break;
		}
		err = 0;
		if (rec.err)
			break;
		err = hook_service(&target, &hooks);
		if (err && proc_alive(pid) == 0)
			wlog("cannot stop pid %d to switch inlining off: %s", pid, strerror(-err));
		err = 0;
		if (deadline_ns && now_ns() >= deadline_ns)
			break;
		if (launched) {
			int st;

			if (waitpid(pid, &st, WNOHANG) == pid) {
				child_status = st;
				child_done = true;
				break;
			}
		} else if (proc_alive(pid)) {
			vlog("pid %d exited", pid);
			break;
		}
	}
	stop_ns = rec.stop_ns = now_ns();

	/* from here on nothing rewrites the hook; then put the target back as it was */
	tracer__stop_hook(tr);
	tracer__detach(tr);
	tracer__counters(tr, &bstats);
	restored = hook_restore(&target, &hooks);
	if (restored < 0)
		wlog("cannot stop pid %d to restore its eval_frame hook (%s): left switched; the "
		     "program runs correctly, only without call inlining", pid, strerror(-restored));
	if (rec.err) {
		err = rec.err;
		goto cleanup;
	}
	profile__finish(rec.prof, stop_ns);

	err = write_profile(rec.prof, &out);
	if (err == -ENODATA) {
		elog("no Python calls were recorded; nothing written");
	} else if (err) {
		elog("cannot write %s: %s", out.path, strerror(-err));
	} else {
		uint64_t lost = bstats.lost_calls + bstats.lost_returns + bstats.lost_codes +
				bstats.lost_requests;

		if (env.top && !env.quiet)
			report_print(stderr, rec.prof, env.top);
		print_notes(rec.prof, &rec, &bstats, &target);
		ilog("%llu calls, %u functions, %u threads, %llu lost events, %.3f s wall; wrote %s",
		     (unsigned long long)rec.prof->n.calls, rec.prof->nfuncs, rec.prof->nthreads,
		     (unsigned long long)lost, (stop_ns - start_ns) / 1e9, out.path);
	}
	exit_code = err ? 1 : 0;

cleanup:
	outfile__abort(&out);
	tracer__free(tr);
	if (child_pid && !released)
		launch_abort(child_pid); /* the program has not run any of its code */
	else if (child_pid && !child_done)
		while (waitpid(child_pid, &child_status, 0) < 0 && errno == EINTR)
			;
	py_target__free(&target);
	hook_state_free(&hooks);
	profile__free(rec.prof);
	/* a launched program's own status wins, whatever happened to the profile */
	if (released && child_status != -1)
		return exit_status_of(child_status);
	return exit_code;
}
