/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * BPF objects are loaded one at a time, whatever thread loads them (the probes, the hold's
 * guard, a load ahead, a spare): libbpf (1.1) looks at the kernel's features at its first loads
 * and keeps what it found, and two threads looking at once can find a feature missing (seen:
 * global data taken for unsupported, ~2% of recordings, and then every load of the process
 * failed). Loads still overlap everything else: finding the target, stopping it, placing its
 * page.
 */
#ifndef __PYUPROF_BPF_SERIAL_H
#define __PYUPROF_BPF_SERIAL_H

void bpf_serial__lock(void);
void bpf_serial__unlock(void);

#endif /* __PYUPROF_BPF_SERIAL_H */
