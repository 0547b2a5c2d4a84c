/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A uprobe_multi link (kernel 6.6+): one BPF program on many offsets of one file, for one pid,
 * made and removed as one. Debian's libbpf 1.1.2 predates it (1.3), so the link is created
 * with the bpf() syscall directly.
 */
#ifndef __PYUPROF_UPROBE_MULTI_H
#define __PYUPROF_UPROBE_MULTI_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* BPF_TRACE_UPROBE_MULTI: a program to be attached this way is loaded with this attach type */
#define UPROBE_MULTI_ATTACH_TYPE 48
/* BPF_F_UPROBE_MULTI_RETURN: the link's probes are uretprobes */
#define UPROBE_MULTI_RETURN 1

/*
 * Attaches prog_fd at cnt offsets of path in process pid; ref_ctrs (or NULL) are the USDT
 * semaphores the kernel raises, cookies what bpf_get_attach_cookie returns at each; ret makes
 * them uretprobes. The kernel registers and unregisters the probes in array order. Returns the
 * link's fd, or -errno.
 */
int uprobe_multi__attach(int prog_fd, pid_t pid, const char *path, const uint64_t *offsets,
			const uint64_t *ref_ctrs, const uint64_t *cookies, uint32_t cnt, bool ret);

/*
 * Whether this kernel makes uprobe_multi links, asked with prog_fd (loaded with
 * UPROBE_MULTI_ATTACH_TYPE): a kernel that does refuses the root directory as the file
 * (EBADF), one that does not, the attach type. The answer comes before any probe is placed, so
 * a kernel without them is known before a stop (the program is loaded again for it then).
 */
bool uprobe_multi__supported(int prog_fd);

#endif /* __PYUPROF_UPROBE_MULTI_H */
