// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * BPF_LINK_CREATE for a uprobe_multi link, by hand: the system's <linux/bpf.h> and libbpf are
 * older than this attach type. The attribute below is the link_create member of union bpf_attr
 * as of Linux 6.6 (include/uapi/linux/bpf.h), the fields that come before uprobe_multi's.
 */
#include <errno.h>
#include <linux/bpf.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "record/uprobe_multi.h"

struct link_create_uprobe_multi {
	uint32_t prog_fd;
	uint32_t target_fd;
	uint32_t attach_type;
	uint32_t flags;
	uint64_t path;
	uint64_t offsets;
	uint64_t ref_ctr_offsets;
	uint64_t cookies;
	uint32_t cnt;
	uint32_t multi_flags; /* BPF_F_UPROBE_MULTI_RETURN for uretprobes */
	uint32_t pid;
};
_Static_assert(sizeof(struct link_create_uprobe_multi) == 64, "link_create.uprobe_multi layout");

int uprobe_multi__attach(int prog_fd, pid_t pid, const char *path, const uint64_t *offsets,
			const uint64_t *ref_ctrs, const uint64_t *cookies, uint32_t cnt, bool ret)
{
	union {
		union bpf_attr attr; /* the kernel reads sizeof(attr) bytes: the rest must be 0 */
		struct link_create_uprobe_multi lc;
	} u;
	long fd;

	memset(&u, 0, sizeof(u));
	u.lc.prog_fd = (uint32_t)prog_fd;
	u.lc.attach_type = UPROBE_MULTI_ATTACH_TYPE;
	u.lc.path = (uint64_t)(uintptr_t)path;
	u.lc.offsets = (uint64_t)(uintptr_t)offsets;
	u.lc.ref_ctr_offsets = (uint64_t)(uintptr_t)ref_ctrs;
	u.lc.cookies = (uint64_t)(uintptr_t)cookies;
	u.lc.cnt = cnt;
	u.lc.multi_flags = ret ? UPROBE_MULTI_RETURN : 0;
	u.lc.pid = (uint32_t)pid;
	fd = syscall(__NR_bpf, BPF_LINK_CREATE, &u, sizeof(u));
	return fd < 0 ? -errno : (int)fd;
}

bool uprobe_multi__supported(int prog_fd)
{
	const uint64_t offset = 0;
	int fd = uprobe_multi__attach(prog_fd, 0, "/", &offset, NULL, NULL, 1, false);

	if (fd >= 0)
		close(fd);
	return fd >= 0 || fd == -EBADF;
}
