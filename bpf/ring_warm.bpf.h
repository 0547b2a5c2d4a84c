/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __PYUPROF_RING_WARM_BPF_H
#define __PYUPROF_RING_WARM_BPF_H

/*
 * The ring buffer's pages written once before the recording. The kernel zeroes them through
 * its direct map when it makes the map, but the programs write them through the ring's own
 * vmap; on a host that shadows the guest's page tables (PVM here) the first write to each
 * page through that mapping costs 5-12 µs, ~50 ns a Python call until the ring has wrapped
 * once (bench/RESULTS.md, History, 2026-11-27T18:30Z and 18:52Z). Run once by user space
 * (BPF_PROG_TEST_RUN) before anything is attached: each step reserves a record, writes all of
 * it (a copy onto itself) and discards it; it stops when the ring is full, and the consumer
 * skips what was discarded. Up to RING_WARM_MAX bytes: a bigger ring's start-up stays bounded.
 */
#define RING_WARM_MAX (64ULL << 20)

struct ring_warm_rec {
	__u8 b[RING_WARM_REC];
};

static long ring_warm_step(__u32 i, void *data)
{
	struct ring_warm_rec *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e)
		return 1;
	bpf_probe_read_kernel(e, sizeof(*e), e);
	bpf_ringbuf_discard(e, BPF_RB_NO_WAKEUP);
	(*(__u32 *)data)++;
	return 0;
}

/* returns the records written (RING_WARM_REC bytes each) */
SEC("syscall")
int ring_warm(void *ctx)
{
	__u32 n = 0;

	bpf_loop(RING_WARM_MAX / RING_WARM_REC, ring_warm_step, &n, 0);
	return n;
}

#endif /* __PYUPROF_RING_WARM_BPF_H */
