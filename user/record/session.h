/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One recording session: the target and, following subprocesses, the processes it starts,
 * from the start (launch or attach, after the calibration) through the event loop to the one
 * teardown that leaves every process as it was. record.c drives it.
 */
#ifndef __PYUPROF_SESSION_H
#define __PYUPROF_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "profile/profile.h"
#include "record/calibrate.h"
#include "record/proc_rec.h"
#include "record/reader_thread.h"

/* One recording: the target and, following subprocesses, the processes it starts. */
struct session {
	pid_t pid; /* the target */
	char **command; /* launch mode: its argv */
	const struct launch_as *as; /* launch mode: where and as whom it runs (NULL: as pyuprof) */
	struct calib_run *calib; /* set when the session records the calibration snippet */
	bool launched, released, target_gone, follow;
	/* launched through a program that is not Python (following): the calibration waits for
	 * the first Python (session__calibrate_for) */
	bool calibrate_later;
	int child_status; /* launch mode: the program's wait status, -1 until known */
	/* launch mode: the program, started by launch__fork in pyuprof's main thread, and its
	 * launch__seize descriptor (forked 0: session__start starts it) */
	pid_t forked;
	int forked_fd;
	struct ptrace_hold *held; /* under ptrace (for the hook writes, or to follow processes) */
	/* new threads seized as the BPF side tells of them, not held by a clone stop
	 * (ptrace_hold.h, async_threads): births_fd readable when one was made */
	bool births;
	int births_fd;
	struct proc_rec **procs; /* procs[0] is the target's */
	uint32_t nprocs, procs_cap;
	bool stopping;
	/* CLOCK_MONOTONIC of pyuprof's start, of the probes in place, of the first event
	 * handled, and how long detaching took: the attach latency (--verbose, the bench) */
	uint64_t t_start, t_attached, t_first, detach_ns;
	struct calibration cal; /* zero: times not compensated */
	struct calib_speed speed; /* the speed run, for kept figures (calibrate_begin) */
	char calib_key[PATH_MAX + 1024]; /* where they are kept ("": nowhere) */
	struct load_job *spare; /* following: the next process's BPF side, loading ahead */
	bool status_shown; /* the live line is on the terminal: clear it before more output */
	struct top *view; /* pyuprof top: drawn at each turn of the loop; NULL otherwise */
	/* during session__record: reads the rings; its lock covers everything above */
	struct reader_thread reader;
	uint64_t reader_turn; /* bytes the reader reads a turn (READER_TURN_BYTES) */
	int read_err; /* -errno: reading a ring failed (the reader's drain) */
};

/* SIGINT, SIGTERM, SIGHUP and SIGQUIT end the recording (attach) or go to the program
 * (launch); SIGPIPE is ignored by pyuprof, not by the program it starts. */
void session__install_signals(void);

/* Launches or finds the target, calibrates, attaches; on return the program runs and is
 * recorded. Returns 0 or -errno (said once). */
int session__start(struct session *s);

/* Following, a process stopped at its start as a Python: calibrates for its interpreter if
 * the session waits for one to (calibrate_later); the held processes are served meanwhile. */
void session__calibrate_for(struct session *s, pid_t pid);

/* Consumes events until the program ends, a signal, deadline_ns (0: none) or an error.
 * Returns 0 or -errno. */
int session__record(struct session *s, uint64_t deadline_ns);

/* Ends the recording and leaves every process as it was (but for the 3.12 budget raise).
 * Does nothing the second time. */
void session__stop(struct session *s, uint64_t stop_ns);

/* Following: each process that made calls gets its own profile next to base, and the merge of
 * them all (into *merged) is what the outputs show. Returns 0 or -errno. */
int session__write_processes(struct session *s, const char *base, uint64_t stop_ns,
			     struct profile **merged);

/* Within the recording, for the loop (session_loop.c): whether a signal ended it; a process of
 * the session's by pid (NULL: none), a new one added (NULL on ENOMEM); a stopped process whose
 * probes were removed put back as it was written (its hooks, its page). */
bool session__exiting(void);
struct proc_rec *session__find_proc(const struct session *s, pid_t pid);
struct proc_rec *session__add_proc(struct session *s, pid_t pid, pid_t parent);
void session__put_back(struct proc_rec *pr);

/* The one way out, whatever happened before: stops the session if it is not (every process
 * put back and let go), ends a launched program that never ran, waits for one that did, and
 * frees the processes. Returns the launched program's exit status (pyuprof's to return), or
 * -1 when there is none. */
int session__end(struct session *s);

#endif /* __PYUPROF_SESSION_H */
