/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The recording of one process: its interpreter, its probes, the writes into it and its own
 * profile. A recording has one (the target) or, following subprocesses, one per process; an
 * exec'd process keeps its profile across images.
 */
#ifndef __PYUPROF_PROC_REC_H
#define __PYUPROF_PROC_REC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "inject/hook.h"
#include "inject/ptrace_hold.h"
#include "inject/staging.h"
#include "inject/tramp.h"
#include "record/probes.h"
#include "record/recorder.h"
#include "record/seed.h"
#include "target/py_target.h"

/* How a process comes to be recorded. */
enum rec_start {
	REC_LAUNCHED, /* stopped after exec, before its interpreter starts: nothing ran yet */
	REC_ATTACHED, /* stopped in the middle of its work: its running frames are seeded */
	REC_FORKED,   /* stopped at its birth by fork: a copy of a recorded parent */
};

struct proc_rec {
	pid_t pid, parent; /* parent: the recorded process it was forked from, or 0 */
	struct py_target target;
	bool has_target;
	struct probes *tr; /* NULL when not recording (not Python, ended, or exec'd away) */
	bool ring_watched; /* tr's ring wakes the session's reader thread (session.c) */
	enum exits want_exits; /* asked for (record --exits); EXITS_AUTO picks */
	enum exits exits;      /* in use for the image recorded now */
	enum tramp_kind kind;  /* the trampoline the exits take (if tramp__wanted) */
	bool batch_asked;      /* --exits batch: a fallback from it is a warning */
	bool live_checked;     /* attached: the layout checked on live frames */
	struct tramp tramp;    /* EXITS_TRAMPOLINE, EXITS_BATCH: the page in this process */
	bool staging;	       /* EXITS_BATCH: its staging area is on */
	bool per_call;	       /* EXITS_BATCH: its calls went to the per-call probes since a
				* thread key did not check out (proc_rec__stage_per_call) */
	bool cfuncs;	       /* C functions wanted (include/cfuncs.h): the batch mode only */
	struct staging_rest rest; /* what was staged when it was switched off */
	struct hook_state hooks;
	struct recorder rec; /* rec.prof: this process's profile */
	struct seeds seeds;
	struct pyuprof_stats bstats; /* what the BPF side counted, over every image */
	uint64_t bpf_run_ns, bpf_runs; /* its programs' run time (kernel.bpf_stats_enabled) */
	uint64_t direct_calls;	       /* calls that bypassed the trampoline */
	char version[32];	     /* of the last interpreter recorded, "" if none */
	bool gone;		     /* exited: nothing to restore */
	char *written;		     /* the profile written for it alone, if any */
	struct load_job *ahead;	     /* its BPF side loading ahead (proc_rec__load_ahead) */
};

/* A process not yet recorded; held is the shared ptrace hold. NULL on ENOMEM. */
struct proc_rec *proc_rec__new(pid_t pid, pid_t parent, struct ptrace_hold *held);
/* Whether the --exits asked for (want_exits) fit pr's interpreter (target found). Returns 0,
 * or -errno with why set. */
int proc_rec__exits_possible(const struct proc_rec *pr, char *why, size_t why_len);
/*
 * Starting to record pr takes four steps; proc_rec__start does them all, with pr stopped as
 * how says. An attach loads with the target running (session.c), between two stops.
 *  - choose: finds the target (unless has_target) and chooses the exits. Nothing stopped.
 *  - place: if proc_rec__places_page, checks the layout on live frames (attached) and maps
 *    the trampoline page, pr stopped; else nothing that needs a stop.
 *  - load: the BPF side into pr->tr, for the exits and page chosen. It touches nothing of
 *    the process's, so it needs no stop; if pr is held (rec.held), it runs in a thread of its
 *    own while this one serves the hold (ptrace_hold__serve_during): a followed child's load
 *    stops no other process, an attach's not the target.
 *  - arm (pr->tr loaded, pr stopped): seeds the running frames (not launched), attaches the
 *    probes, switches staging on and writes the hook.
 * Each returns 0, or -errno with why set.
 */
int proc_rec__choose(struct proc_rec *pr, char *why, size_t why_len);
bool proc_rec__places_page(const struct proc_rec *pr);
int proc_rec__place(struct proc_rec *pr, enum rec_start how, char *why, size_t why_len);
int proc_rec__load(struct proc_rec *pr, unsigned ringbuf_mb, char *why, size_t why_len);
/* The load begun early, in a thread of its own, once the exits are chosen: proc_rec__load then
 * takes it (an attach's: while the target is seized and its page placed). Nothing if it cannot
 * start (proc_rec__load loads then). */
void proc_rec__load_ahead(struct proc_rec *pr, unsigned ringbuf_mb);
/* Ends a load ahead that proc_rec__load did not take (pr is not recorded after all). */
void proc_rec__drop_ahead(struct proc_rec *pr);
int proc_rec__arm(struct proc_rec *pr, enum rec_start how, uint64_t now_ns, char *why,
		  size_t why_len);
/* spare: a load begun for another process (proc_rec__spare), taken if it fits pr's interpreter
 * and exits (*spare is NULL then); NULL for none. */
int proc_rec__start(struct proc_rec *pr, enum rec_start how, unsigned ringbuf_mb,
		    struct load_job **spare, uint64_t now_ns, char *why, size_t why_len);
/*
 * Following: a load begun now, in a thread of its own, for the next process of model's
 * interpreter and exits (a child forked or started again from the same binary), so that the
 * child, held stopped from its birth until its probes are in place, waits for no verifier.
 * NULL if it cannot start. Freed (after its thread) by proc_rec__spare_free.
 */
struct load_job *proc_rec__spare(struct proc_rec *model, unsigned ringbuf_mb);
void proc_rec__spare_free(struct load_job *spare);
/* The thread that asked stands (or pr is stopped): a thread's key did not check out at its
 * flush (recorder.key_bad), so every call goes to the per-call probes from now on, said once. */
void proc_rec__stage_per_call(struct proc_rec *pr);
/* A Thread about to be started (self; its starter stands in its clone): the BPF side reads
 * the names of its class from now on, if it can (bpf/thread_births.bpf.h). */
void proc_rec__learn_thread_class(struct proc_rec *pr, uint64_t self);
/* pr stopped (tracee): its staging off (EXITS_BATCH), the records it still holds kept for
 * proc_rec__end. */
void proc_rec__unstage(struct proc_rec *pr);
/* The image pr staged in is gone (exec): nothing is left to read or switch off there. */
void proc_rec__forget_stage(struct proc_rec *pr);
/* The probes go; what they sent is handled, then what proc_rec__unstage kept; frames still
 * open are closed at now_ns. From then on nothing asks for a write. */
void proc_rec__end(struct proc_rec *pr, uint64_t now_ns);
/* pr stopped (tracee): puts its eval_frame hooks back. */
void proc_rec__restore(struct proc_rec *pr);
/* Forgets the interpreter of an image pr has exec'd away from (its profile stays). */
void proc_rec__drop_image(struct proc_rec *pr);
void proc_rec__free(struct proc_rec *pr);
/* sum += s, counter by counter. */
void proc_rec__add_counters(struct pyuprof_stats *sum, const struct pyuprof_stats *s);

#endif /* __PYUPROF_PROC_REC_H */
