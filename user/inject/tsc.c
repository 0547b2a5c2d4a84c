// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * TSC to CLOCK_MONOTONIC: two pairs of readings 20 ms or more apart give the rate (the error of a pair
 * is the few tens of ns between its reads, so the rate is good to a few parts per million), the
 * first pair the offset. Both clocks run from one crystal on an invariant TSC: the conversion
 * holds for the recording.
 *
 * One conversion serves every CPU only if their counters agree. The flags say each counter
 * ticks at one rate; they do not say the counters were started together (a hypervisor or a
 * firmware may set them apart, and some VMs boot with tsc=unstable while showing the flags).
 * So every CPU pyuprof may run on is checked against the first, as the kernel's boot-time
 * check does: two threads, one on each, take turns reading the counter, each after it has seen
 * the other's reading. Any reading below the one it followed is a step back in time, so the
 * counters differ by at least that much.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "base/clock.h"
#include "base/log.h"
#include "inject/tsc.h"
#include "stage.h"

/*
 * How far two CPUs' counters may differ. A thread that moves between CPUs shifts the times of
 * its open calls by the difference, once a move; threads move milliseconds apart, so 1 µs a move
 * stays under a thousandth of the time. A host whose counters differ more records per call, on
 * the kernel's clock.
 */
#define TSC_AGREE_NS 1000
/* The least time between the two pairs of readings that give the rate, and give a rough one. */
#define TSC_RATE_NS (20 * 1000 * 1000)
#define TSC_ROUGH_NS (1000 * 1000)
#define WARP_ROUNDS 500 /* turns a pair of CPUs takes */
/* A pair whose CPUs are taken by other work may wait for its turns: it gives up after 50 ms,
 * and the check after 200 ms in all (the CPUs it has not reached stay unchecked). */
#define WARP_PAIR_NS (50 * 1000 * 1000)
#define WARP_ALL_NS (200 * 1000 * 1000)

static struct {
	bool done;
	bool rough; /* from pairs less than TSC_RATE_NS apart: to be settled */
	uint64_t tsc0, ns0;
	uint64_t mult; /* ns per tick, 32.32 fixed point */
} conv;

static uint64_t rdtsc(void)
{
#if defined(__x86_64__)
	return __builtin_ia32_rdtsc();
#else
	return 0;
#endif
}

bool tsc__usable(char *why, size_t why_len)
{
	char line[4096];
	bool constant = false, nonstop = false;
	FILE *f = fopen("/proc/cpuinfo", "re");

	if (f) {
		while (fgets(line, sizeof(line), f)) {
			if (strncmp(line, "flags", 5))
				continue;
			constant = strstr(line, " constant_tsc") != NULL;
			nonstop = strstr(line, " nonstop_tsc") != NULL;
			break;
		}
		fclose(f);
	}
	if (!constant || !nonstop) {
		snprintf(why, why_len, "this CPU's time stamp counter is not invariant (no %s in "
				       "/proc/cpuinfo)",
			 constant ? "nonstop_tsc" : "constant_tsc");
		return false;
	}
	/* a staged record keeps its kind in the TSC's top bits (include/stage.h) */
	if (rdtsc() >= STAGE_TSC_LIMIT) {
		snprintf(why, why_len, "this CPU's time stamp counter reads %#llx, past what a staged "
				       "record holds",
			 (unsigned long long)rdtsc());
		return false;
	}
	return true;
}

/* A TSC reading and the monotonic time between its two halves, from the closest of a few. */
static void pair(uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX, a, b, m;

	for (int i = 0; i < 16; i++) {
		a = rdtsc();
		m = clock__mono_ns();
		b = rdtsc();
		if (b - a < best) {
			best = b - a;
			*tsc = a + (b - a) / 2;
			*ns = m;
		}
	}
}

/* A reading not taken before the loads ahead of it have completed (they saw the other CPU's
 * turn), nor after the stores behind it. */
static uint64_t rdtsc_ordered(void)
{
	uint64_t t;

#if defined(__x86_64__)
	__builtin_ia32_lfence();
#endif
	t = rdtsc();
#if defined(__x86_64__)
	__builtin_ia32_lfence();
#endif
	return t;
}

/* One pair of CPUs taking turns: odd turns are the first CPU's, even turns the second's. */
struct warp_pair {
	_Alignas(64) _Atomic uint64_t turn;
	uint64_t stamp; /* the last reading, published by turn */
	_Alignas(64) int cpu[2];
	uint64_t deadline; /* CLOCK_MONOTONIC ns */
	int64_t skew;	   /* tests: ticks added to the second CPU's readings */
	int64_t back[2];   /* the largest step back seen on each side, ticks */
	uint64_t seen[2];  /* readings each side compared with the other's */
	_Atomic bool quit; /* a side gave up (its CPU not given, or the other side's too busy) */
	/* the sides wait asleep until both are made (a side spinning on the CPU its maker runs
	 * on, ahead of it, would keep the second from being made) */
	pthread_mutex_t lock;
	pthread_cond_t start;
	bool go;
};

struct warp_side {
	struct warp_pair *p;
	int side;
};

static void *warp_side_run(void *arg)
{
	struct warp_side *w = arg;
	struct warp_pair *p = w->p;
	uint64_t t, prev, seen = 0;
	int64_t skew = w->side ? p->skew : 0, back = 0;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(p->cpu[w->side], &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set))
		atomic_store(&p->quit, true);
	pthread_mutex_lock(&p->lock);
	while (!p->go)
		pthread_cond_wait(&p->start, &p->lock);
	pthread_mutex_unlock(&p->lock);
	if (atomic_load(&p->quit))
		return NULL;
	for (uint64_t k = 0; k < WARP_ROUNDS; k++) {
		uint64_t mine = 2 * k + 1 + (uint64_t)w->side;

		for (unsigned spin = 0; atomic_load_explicit(&p->turn, memory_order_acquire) != mine - 1;
		     spin++) {
			if (atomic_load_explicit(&p->quit, memory_order_relaxed))
				goto out;
			if (!(spin & 1023) && clock__mono_ns() > p->deadline) {
				atomic_store(&p->quit, true);
				goto out;
			}
		}
		prev = p->stamp;
		t = rdtsc_ordered() + (uint64_t)skew;
		if (mine > 1) {
			seen++;
			if ((int64_t)(prev - t) > back)
				back = (int64_t)(prev - t);
		}
		p->stamp = t;
		atomic_store_explicit(&p->turn, mine, memory_order_release);
	}
out:
	p->back[w->side] = back;
	p->seen[w->side] = seen;
	return NULL;
}

/* Checks cpu against first until deadline: 0 when they agree, 1 when not (how far apart in
 * *apart), -errno when the pair could not take its turns both ways (a CPU not given to pyuprof,
 * or taken all along). */
static int warp_check(int first, int cpu, int64_t skew, uint64_t deadline, int64_t *apart)
{
	struct warp_pair p = { .cpu = { first, cpu },
			       .skew = skew,
			       .deadline = deadline,
			       .lock = PTHREAD_MUTEX_INITIALIZER,
			       .start = PTHREAD_COND_INITIALIZER };
	struct warp_side sides[2] = { { &p, 0 }, { &p, 1 } };
	struct sched_param prio = { .sched_priority = 1 };
	pthread_attr_t attr, *rt = &attr;
	pthread_t th[2];
	int err;

	/*
	 * A turn needs both sides on their CPUs at once: on CPUs busy with other work, ordinary
	 * threads overlapped too seldom to take one turn in 50 ms (seen with four busy processes on
	 * 2 vCPUs). As real-time threads they take their 500 turns ahead of everything but other
	 * real-time work: the check takes 1-2 ms here, up to 45 ms on CPUs busy fourfold.
	 */
	if (pthread_attr_init(&attr) || pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED) ||
	    pthread_attr_setschedpolicy(&attr, SCHED_FIFO) ||
	    pthread_attr_setschedparam(&attr, &prio))
		rt = NULL;
	err = pthread_create(&th[0], rt, warp_side_run, &sides[0]);
	if (err == EPERM && rt) {
		rt = NULL; /* (not allowed real-time threads: ordinary ones) */
		err = pthread_create(&th[0], NULL, warp_side_run, &sides[0]);
	}
	if (err) {
		pthread_attr_destroy(&attr);
		return -err;
	}
	err = pthread_create(&th[1], rt, warp_side_run, &sides[1]);
	pthread_attr_destroy(&attr);
	pthread_mutex_lock(&p.lock);
	if (err)
		atomic_store(&p.quit, true);
	p.go = true;
	pthread_cond_broadcast(&p.start);
	pthread_mutex_unlock(&p.lock);
	pthread_join(th[0], NULL);
	if (err)
		return -err;
	pthread_join(th[1], NULL);
	*apart = p.back[0] > p.back[1] ? p.back[0] : p.back[1];
	if (*apart > (int64_t)tsc__ticks(TSC_AGREE_NS))
		return 1;
	return p.seen[0] && p.seen[1] ? 0 : -EAGAIN;
}

static uint64_t ticks_ns(uint64_t ticks)
{
	return (uint64_t)(((unsigned __int128)ticks * conv.mult) >> 32);
}

/* Every CPU pyuprof may run on against the first; 0 when they agree, else -EINVAL and why. A
 * pair that could not be checked is trusted, as the flags say (debug says how many). */
static int cpus_agree(char *why, size_t why_len)
{
	/* tests: a second CPU whose counter reads this far ahead (or behind, < 0) */
	const char *env = getenv("PYUPROF_TEST_TSC_SKEW_NS");
	int64_t skew_ns = env ? strtoll(env, NULL, 10) : 0, apart = 0, worst = 0;
	int64_t skew = skew_ns < 0 ? -(int64_t)tsc__ticks((uint64_t)-skew_ns)
				   : (int64_t)tsc__ticks((uint64_t)skew_ns);
	uint64_t all = clock__mono_ns() + WARP_ALL_NS, now;
	int first = -1, checked = 0, unchecked = 0, err;
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 0; /* nothing known to check against */
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &set))
			continue;
		if (first < 0) {
			first = cpu;
			continue;
		}
		now = clock__mono_ns();
		err = now < all ? warp_check(first, cpu, skew,
					     now + WARP_PAIR_NS < all ? now + WARP_PAIR_NS : all, &apart)
				: -ETIME;
		if (err == 1) {
			snprintf(why, why_len, "the time stamp counters of CPUs %d and %d differ by at "
					       "least %llu ns",
				 first, cpu, (unsigned long long)ticks_ns((uint64_t)apart));
			return -EINVAL;
		}
		if (err) {
			unchecked++;
			continue;
		}
		checked++;
		if (apart > worst)
			worst = apart;
	}
	dlog("TSC: %d CPU(s) checked against CPU %d, %d could not be (busy or not given); largest "
	     "step back %llu ns",
	     checked, first, unchecked, (unsigned long long)ticks_ns((uint64_t)worst));
	return 0;
}

/* The first pair of readings, as early as may be (tsc__begin), and whether it was taken. */
static struct {
	bool taken;
	uint64_t tsc, ns;
} first;

void tsc__begin(void)
{
	if (!first.taken) {
		pair(&first.tsc, &first.ns);
		first.taken = true;
	}
}

/* The conversion from the first pair to one taken now, at least min_ns after it. */
static int convert_from_first(uint64_t min_ns)
{
	uint64_t t1, n1, now = clock__mono_ns();

	if (now < first.ns + min_ns) {
		uint64_t left = first.ns + min_ns - now;
		struct timespec gap = { .tv_sec = (time_t)(left / 1000000000),
					.tv_nsec = (long)(left % 1000000000) };

		nanosleep(&gap, NULL);
	}
	pair(&t1, &n1);
	if (t1 <= first.tsc || n1 <= first.ns)
		return -EINVAL;
	conv.tsc0 = first.tsc;
	conv.ns0 = first.ns;
	conv.mult = (uint64_t)(((unsigned __int128)(n1 - conv.ns0) << 32) / (t1 - conv.tsc0));
	conv.done = true;
	conv.rough = n1 - first.ns < TSC_RATE_NS;
	return 0;
}

int tsc__calibrate(void)
{
	if (conv.done)
		return 0;
	tsc__begin();
	/* a rough rate if the first pair is recent (good to a few 1e-5: enough for the CPUs'
	 * check), made exact by tsc__settle before anything is converted */
	return convert_from_first(TSC_ROUGH_NS);
}

int tsc__settle(void)
{
	if (!conv.done)
		return tsc__calibrate() ?: tsc__settle();
	/* the pairs TSC_RATE_NS apart at least: a recording's start has taken that long since
	 * tsc__begin as a rule (its probes' load), so nothing waits here */
	return conv.rough ? convert_from_first(TSC_RATE_NS) : 0;
}

int tsc__cpus_agree(char *why, size_t why_len)
{
	static struct {
		bool done;
		int err;
		char why[160];
	} agree;

	if (!agree.done) {
		agree.done = true;
		agree.err = conv.done ? cpus_agree(agree.why, sizeof(agree.why)) : -EINVAL;
		if (!conv.done)
			snprintf(agree.why, sizeof(agree.why), "the TSC is not calibrated");
	}
	if (agree.err)
		snprintf(why, why_len, "%s", agree.why);
	return agree.err;
}

uint64_t tsc__to_ns(uint64_t tsc)
{
	int64_t d = (int64_t)(tsc - conv.tsc0);
	__int128 off = ((__int128)d * (__int128)conv.mult) >> 32;

	return (uint64_t)((__int128)conv.ns0 + off);
}

uint64_t tsc__ps(uint64_t ticks)
{
	return (uint64_t)(((unsigned __int128)ticks * conv.mult * 1000) >> 32);
}

uint64_t tsc__ticks(uint64_t ns)
{
	return conv.mult ? (uint64_t)(((unsigned __int128)ns << 32) / conv.mult) : UINT64_MAX;
}
