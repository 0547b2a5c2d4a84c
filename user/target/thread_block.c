// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* glibc's thread block and the main thread's stack, in pyuprof and in a target. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "base/proc.h"
#include "target/thread_block.h"

/* the stack and guard of the thread that looks (distinct sizes, found as they are) */
#define LOOK_STACK (192 << 10)
#define LOOK_GUARD (12 << 10)
/* how far into the block the fields are looked for (glibc 2.36: tid 0x2d0, stack 0x690) */
#define LOOK_BYTES 4096
/* the kernel's gap below a stack that grows (stack_guard_gap: 256 pages by default) */
#define STACK_GUARD_GAP (1 << 20)

/* The mask find_own starts its thread with: signals no program's thread is likely to block
 * all of (SIGHUP, SIGUSR1, SIGUSR2, SIGXFSZ, SIGWINCH, SIGSYS) */
static const int look_sigs[] = { SIGHUP, SIGUSR1, SIGUSR2, SIGXFSZ, SIGWINCH, SIGSYS };
static uint64_t look_mask;

static void *look(void *arg)
{
	struct thread_block *tb = arg;
	const uint8_t *self = (const uint8_t *)pthread_self(); /* glibc: the thread pointer */
	uint64_t want[3], w[3], top;
	int32_t tid = (int32_t)gettid(), v;
	pthread_attr_t a;
	size_t size = 0, guard = 0;
	void *addr = NULL;

	if (pthread_getattr_np(pthread_self(), &a))
		return NULL;
	if (pthread_attr_getstack(&a, &addr, &size) || pthread_attr_getguardsize(&a, &guard))
		size = 0;
	pthread_attr_destroy(&a);
	/* what the block holds: the guard at the bottom of the stack block, below the stack */
	want[0] = (uint64_t)(uintptr_t)addr - guard;
	want[1] = size + guard;
	want[2] = guard;
	/* (glibc keeps the block at the top of the thread's stack block: no further) */
	top = (uint64_t)(uintptr_t)addr + size;
	for (uint32_t off = 8; off + sizeof(w) <= LOOK_BYTES &&
			       (uint64_t)(uintptr_t)self + off + sizeof(w) <= top;
	     off += 4) {
		memcpy(&v, self + off, sizeof(v));
		if (!tb->tid_off && v == tid)
			tb->tid_off = off;
		memcpy(w, self + off, sizeof(w));
		if (!tb->stack_off && size && !(off & 7) && !memcmp(w, want, sizeof(w)))
			tb->stack_off = off;
		if (!tb->sigmask_off && look_mask && !(off & 7) && w[0] == look_mask)
			tb->sigmask_off = off;
	}
	return NULL;
}

static struct thread_block own;

static void find_own(void)
{
	sigset_t mask, old;
	pthread_attr_t a;
	pthread_t th;

	if (pthread_attr_init(&a))
		return;
	/* the thread's block holds the mask it starts with: this thread's, made one to find */
	sigemptyset(&mask);
	for (size_t i = 0; i < sizeof(look_sigs) / sizeof(look_sigs[0]); i++)
		sigaddset(&mask, look_sigs[i]);
	if (!pthread_sigmask(SIG_BLOCK, &mask, &old)) {
		sigset_t now;

		if (!pthread_sigmask(SIG_SETMASK, NULL, &now))
			memcpy(&look_mask, &now, sizeof(look_mask));
	}
	if (!pthread_attr_setstacksize(&a, LOOK_STACK) && !pthread_attr_setguardsize(&a, LOOK_GUARD) &&
	    !pthread_create(&th, &a, look, &own))
		pthread_join(th, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&a);
}

const struct thread_block *thread_block__own(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, find_own);
	return &own;
}

enum libc_kind thread_block__libc(pid_t pid, char *why, size_t why_len)
{
	char path[64], interp[256] = "";
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	enum libc_kind kind = LIBC_UNKNOWN;
	const char *base;
	int fd;

	snprintf(why, why_len, "a static program (no ELF interpreter)");
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, why_len, "cannot read %s: %s", path, strerror(errno));
		return LIBC_UNKNOWN;
	}
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64)
		goto out;
	for (unsigned i = 0; i < eh.e_phnum && i < 64; i++) {
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * eh.e_phentsize)) !=
		    sizeof(ph))
			break;
		if (ph.p_type != PT_INTERP || !ph.p_filesz || ph.p_filesz >= sizeof(interp))
			continue;
		if (pread(fd, interp, ph.p_filesz, (off_t)ph.p_offset) != (ssize_t)ph.p_filesz)
			break;
		interp[ph.p_filesz] = 0;
		base = strrchr(interp, '/') ? strrchr(interp, '/') + 1 : interp;
		kind = !strncmp(base, "ld-linux", 8) ? LIBC_GLIBC : LIBC_OTHER;
		snprintf(why, why_len, "its ELF interpreter is %s", interp);
		break;
	}
out:
	close(fd);
	return kind;
}

/* tid's id in its own PID namespace (the last of NSpid), which glibc keeps: a target in a
 * container has other ids there than pyuprof sees */
static int32_t own_ns_tid(pid_t pid, pid_t tid)
{
	char path[64], line[256], *last;
	int32_t id = tid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	f = fopen(path, "re");
	if (!f)
		return tid;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "NSpid:", 6))
			continue;
		line[strcspn(line, "\n")] = 0;
		last = strrchr(line, '\t') ? strrchr(line, '\t') + 1 : line + 6;
		id = (int32_t)strtol(last, NULL, 10);
		break;
	}
	fclose(f);
	return id;
}

int thread_block__check(pid_t pid, const pid_t *tids, const uint64_t *bases, int n, char *why,
			size_t why_len)
{
	const struct thread_block *tb = thread_block__own();
	uint64_t blk[3];
	int32_t key;
	int err;

	if (!tb->tid_off) {
		snprintf(why, why_len, "pyuprof's own glibc does not show where it keeps a tid");
		return -EINVAL;
	}
	for (int i = 0; i < n; i++) {
		if (!bases[i]) {
			snprintf(why, why_len, "thread %d has no thread pointer", tids[i]);
			return -EINVAL;
		}
		err = proc__read(pid, bases[i] + tb->tid_off, &key, sizeof(key));
		if (err || key != own_ns_tid(pid, tids[i])) {
			snprintf(why, why_len, "thread %d's block holds %d where glibc keeps the tid",
				 tids[i], err ? -1 : key);
			return -EINVAL;
		}
		if (!tb->stack_off)
			continue;
		err = proc__read(pid, bases[i] + tb->stack_off, blk, sizeof(blk));
		if (!err && !blk[0] && tids[i] == pid)
			continue; /* the main thread: its stack is the [stack] mapping */
		if (err || blk[2] >= blk[1] || bases[i] < blk[0] + blk[2] ||
		    bases[i] - blk[0] >= blk[1]) {
			snprintf(why, why_len, "thread %d's block does not lie in the stack it names",
				 tids[i]);
			return -EINVAL;
		}
	}
	return 0;
}

int thread_block__main_stack(pid_t pid, uint64_t *low, uint64_t *span)
{
	unsigned long long s, e, prev_end = 0;
	char path[64], line[512];
	struct rlimit rl;
	uint64_t top = 0, floor;
	FILE *f;

	*low = *span = 0;
	if (prlimit(pid, RLIMIT_STACK, NULL, &rl))
		return -errno;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx-%llx", &s, &e) != 2)
			continue;
		if (strstr(line, " [stack]")) {
			top = e;
			break;
		}
		prev_end = e;
	}
	fclose(f);
	if (!top)
		return -ENOENT;
	floor = prev_end + STACK_GUARD_GAP;
	*low = rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < top ? top - rl.rlim_cur : 0;
	if (*low < floor)
		*low = floor;
	if (*low >= top) {
		*low = 0;
		return -ENOENT;
	}
	*span = top - *low;
	return 0;
}
