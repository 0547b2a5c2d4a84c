// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Sends a signal to a process as fast as it can for a while: a storm of process-directed
 * signals, each of which may land on the thread pyuprof is making run its system calls
 * (tests/inject.bats). Exits when the time is up or the process is gone.
 *
 *   signal_storm PID SECONDS SIGNAL
 */
#include <signal.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	struct timespec t0, t;
	pid_t pid;
	double secs;
	int sig;

	if (argc != 4)
		return 64;
	pid = atoi(argv[1]);
	secs = atof(argv[2]);
	sig = atoi(argv[3]);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		for (int i = 0; i < 1000; i++)
			if (kill(pid, sig))
				return 0;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 > secs)
			return 0;
	}
}
