// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Baselines for the overhead benchmark: programs that only count, attached at exactly the places
 * pyuprof probes (eval-function entry, its ret instructions), and a uretprobe for comparison.
 * What pyuprof costs above these is its own work; below them nothing can go.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile __u32 targ_tgid = 0;
__u64 entries = 0, returns = 0;

SEC("uprobe")
int BPF_KPROBE(count_entry)
{
	if ((bpf_get_current_pid_tgid() >> 32) == targ_tgid)
		__sync_fetch_and_add(&entries, 1);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(count_return)
{
	if ((bpf_get_current_pid_tgid() >> 32) == targ_tgid)
		__sync_fetch_and_add(&returns, 1);
	return 0;
}
