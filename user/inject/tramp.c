// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Finding the trampoline page again in a target, or placing it there (built by tramp_build.c)
 * through system calls made by the target: an anonymous page for the name and the bytes,
 * memfd_create, pwrite, mmap (private, read+execute), close, munmap. Each call is its own
 * injection, so the thread stands with its own registers between two of them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "base/log.h"
#include "base/proc.h"
#include "inject/tramp.h"
#include "inject/tramp_layout.h"
#include "stage.h"

/* the scratch area: our `syscall; ud2` stub, the memfd's name, the page's bytes; the page is
 * mapped right after it, in address space reserved with it (its address goes into the page's
 * bytes: tramp__build) */
#define SCRATCH_STUB 0
#define SCRATCH_NAME 16
#define SCRATCH_PAGE 64
#define SCRATCH_LEN ((SCRATCH_PAGE + TRAMP_PAGE + 4095) / 4096 * 4096)

/* One trampoline mapping of pid: its start and the path of the file behind it. */
struct page_ref {
	uint64_t start;
	char path[96];
};

/* Reads the page from the file behind it (not as memory: the kernel rewrites probed nops in
 * the process's copy). Returns 0 or -errno. */
static int read_file(const char *path, uint8_t *buf)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (pread(fd, buf, TRAMP_PAGE, 0) != TRAMP_PAGE)
		err = -EIO;
	close(fd);
	return err;
}

/*
 * The mappings of ours in pid: read+execute, private, at file offset 0 of a memfd named
 * pyuprof-tramp (placed by any version of pyuprof). Returns how many are in refs (at most max),
 * or -errno.
 */
static int list_pages(pid_t pid, struct page_ref *refs, int max)
{
	char path[64], line[512];
	unsigned long long s, e, off;
	char perms[8];
	int pos, n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (n < max && fgets(line, sizeof(line), f)) {
		pos = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &s, &e, perms, &off, &pos) < 4 ||
		    !pos || strncmp(line + pos, "/memfd:" TRAMP_NAME " ", 7 + strlen(TRAMP_NAME) + 1) ||
		    strcmp(perms, "r-xp") || off || e - s != TRAMP_PAGE)
			continue;
		refs[n].start = s;
		snprintf(refs[n++].path, sizeof(refs[0].path), "/proc/%d/map_files/%llx-%llx", pid,
			 s, e);
	}
	fclose(f);
	return n;
}

#define MAX_PAGES 16 /* pages of ours looked at in one process */

/* A mapping of ours in pid (at only, if not 0) whose file holds the page built for t, kind
 * and stage at its address. */
static int find_placed(pid_t pid, const struct py_target *t, enum tramp_kind kind,
		       uint64_t stage, uint64_t only, struct tramp *out)
{
	struct page_ref refs[MAX_PAGES];
	uint8_t *got = malloc(TRAMP_PAGE), *want = malloc(TRAMP_PAGE);
	int i, n = list_pages(pid, refs, MAX_PAGES), err = n < 0 ? n : -ENOENT;
	char why[256];

	for (i = 0; got && want && i < n && err; i++) {
		if ((only && refs[i].start != only) || read_file(refs[i].path, got) ||
		    tramp__build(t, kind, stage, refs[i].start, want, why, sizeof(why)) ||
		    memcmp(got, want, TRAMP_PAGE))
			continue;
		out->addr = refs[i].start;
		snprintf(out->path, sizeof(out->path), "%s", refs[i].path);
		err = 0;
	}
	free(want);
	free(got);
	return got && want ? err : -ENOMEM;
}

int tramp__restore(pid_t pid)
{
	struct page_ref refs[MAX_PAGES];
	uint8_t *file = malloc(TRAMP_PAGE), *mem = malloc(TRAMP_PAGE);
	int i, n = list_pages(pid, refs, MAX_PAGES), fixed = 0, err = n < 0 ? n : 0;
	size_t at, len;

	if (!file || !mem)
		err = -ENOMEM;
	for (i = 0; !err && i < n; i++) {
		err = read_file(refs[i].path, file);
		if (!err)
			err = proc__read(pid, refs[i].start, mem, TRAMP_PAGE);
		/* each run of differing bytes is written back as one */
		for (at = 0; !err && at < TRAMP_PAGE; at += len) {
			for (len = 0; at + len < TRAMP_PAGE && mem[at + len] != file[at + len]; len++)
				;
			if (!len) {
				len = 1;
				continue;
			}
			err = proc__poke(pid, refs[i].start + at, file + at, len);
			fixed += (int)len;
		}
	}
	free(file);
	free(mem);
	return err ? err : fixed;
}

static int call(tramp_run_fn run, void *ctx, uint64_t via, long nr, uint64_t a0, uint64_t a1,
		uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5, int64_t *ret)
{
	struct inject_call c = { .nr = nr, .args = { a0, a1, a2, a3, a4, a5 }, .via = via };
	int err = run(ctx, &c);

	if (err)
		return err;
	*ret = c.ret;
	return c.ret < 0 && c.ret > -4096 ? (int)c.ret : 0;
}

/*
 * Maps the page (built here, for t, kind and the address it goes to) into pid; *addr where. A
 * batch page with no
 * staging area yet (*stage 0) gets one first, wiped in every child the target forks: a child
 * must start with staging off, never with a copy of its parent's batch. Returns 0 or -errno
 * with why set.
 *
 * The scratch page is executable, so that every call after the first runs from its own
 * `syscall; ud2`: a thread let go in one of them by pyuprof's death (SIGKILL) dies of SIGILL
 * there rather than running on (inject.c). A kernel that refuses writable code leaves them on
 * the vDSO's instruction, guarded by the stack pointer alone.
 */
static int place(pid_t pid, const struct py_target *t, enum tramp_kind kind, uint64_t *stage,
		 uint8_t *page, tramp_run_fn run, void *ctx, uint64_t *addr, char *why,
		 size_t why_len)
{
	static const uint8_t stub[] = { 0x0f, 0x05, 0x0f, 0x0b }; /* syscall; ud2 */
	char name[SCRATCH_PAGE - SCRATCH_NAME] = TRAMP_NAME;
	int64_t scratch = 0, fd = -1, n, r, area = 0;
	const char *step = "mmap";
	uint64_t via = 0;
	int err;

	err = call(run, ctx, 0, SYS_mmap, 0, SCRATCH_LEN + TRAMP_PAGE,
		   PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1, 0,
		   &scratch);
	if (err == -EACCES || err == -EPERM)
		err = call(run, ctx, 0, SYS_mmap, 0, SCRATCH_LEN + TRAMP_PAGE,
			   PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1, 0,
			   &scratch);
	else if (!err)
		via = (uint64_t)scratch + SCRATCH_STUB;
	if (err)
		goto fail;
	step = "writing the page";
	err = via ? proc__write(pid, via, stub, sizeof(stub)) : 0;
	if (err)
		goto undo;
	if (kind == TRAMP_BATCH && !*stage) {
		step = "mapping its staging area";
		err = call(run, ctx, via, SYS_mmap, 0, STAGE_SIZE, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1, 0, &area);
		if (err)
			goto undo;
		step = "madvise(MADV_WIPEONFORK)";
		err = call(run, ctx, via, SYS_madvise, (uint64_t)area, STAGE_SIZE, MADV_WIPEONFORK, 0,
			   0, 0, &r);
		if (err)
			goto undo;
		*stage = (uint64_t)area;
	}
	err = tramp__build(t, kind, *stage, (uint64_t)scratch + SCRATCH_LEN, page, why, why_len);
	if (err) {
		step = NULL;
		goto undo;
	}
	step = "writing the page";
	err = proc__write(pid, (uint64_t)scratch + SCRATCH_NAME, name, sizeof(name));
	if (!err)
		err = proc__write(pid, (uint64_t)scratch + SCRATCH_PAGE, page, TRAMP_PAGE);
	if (err)
		goto undo;
	step = "memfd_create";
	err = call(run, ctx, via, SYS_memfd_create, (uint64_t)scratch + SCRATCH_NAME, MFD_CLOEXEC,
		   0, 0, 0, 0, &fd);
	if (err)
		goto undo;
	step = "pwrite";
	err = call(run, ctx, via, SYS_pwrite64, (uint64_t)fd, (uint64_t)scratch + SCRATCH_PAGE,
		   TRAMP_PAGE, 0, 0, 0, &n);
	if (!err && n != TRAMP_PAGE)
		err = -EIO;
	if (err)
		goto undo;
	step = "mmap";
	err = call(run, ctx, via, SYS_mmap, (uint64_t)scratch + SCRATCH_LEN, TRAMP_PAGE,
		   PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, (uint64_t)fd, 0, &r);
	if (!err && (uint64_t)r != (uint64_t)scratch + SCRATCH_LEN)
		err = -EFAULT;
	if (!err)
		*addr = (uint64_t)r;
undo:
	if (err && area > 0) {
		call(run, ctx, via, SYS_munmap, (uint64_t)area, STAGE_SIZE, 0, 0, 0, 0, &n);
		*stage = 0;
	}
	/* the target keeps no descriptor and no scratch page of ours (munmap runs from the stub
	 * it unmaps: the thread is given its own registers back before it runs again) */
	if (fd >= 0)
		call(run, ctx, via, SYS_close, (uint64_t)fd, 0, 0, 0, 0, 0, &n);
	if (scratch > 0)
		call(run, ctx, via, SYS_munmap, (uint64_t)scratch,
		     *addr ? SCRATCH_LEN : SCRATCH_LEN + TRAMP_PAGE, 0, 0, 0, 0, &n);
fail:
	if (err == -EAGAIN && !scratch)
		snprintf(why, why_len, "no thread of it can make system calls for us now (each is "
				       "stopped by job control, under seccomp, or waiting in vfork)");
	else if (err && step)
		snprintf(why, why_len, "%s in the target failed: %s", step, strerror(-err));
	return err;
}

/* Whether pid has a private anonymous read+write mapping of exactly [start, start + len). */
static bool anon_mapping(pid_t pid, uint64_t start, uint64_t len)
{
	unsigned long long s, e, ino;
	char path[64], line[512], perms[8];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%llx-%llx %7s %*s %*s %llu", &s, &e, perms, &ino) == 4 &&
			s == start && e - s == len && !strcmp(perms, "rw-p") && !ino;
	fclose(f);
	return found;
}

/* The staging area a batch page of ours in pid writes (left by an earlier recording, or
 * inherited from the parent, wiped), or 0. */
static uint64_t find_stage(pid_t pid)
{
	struct page_ref refs[MAX_PAGES];
	uint8_t *got = malloc(TRAMP_PAGE);
	int i, n = list_pages(pid, refs, MAX_PAGES);
	struct tramp_params p;
	uint64_t stage = 0;

	for (i = 0; got && i < n && !stage; i++) {
		if (read_file(refs[i].path, got))
			continue;
		memcpy(&p, got + at(tramp_params), sizeof(p));
		if (p.stage && !memcmp(p.ident, IDENT, sizeof(IDENT)) &&
		    anon_mapping(pid, p.stage, STAGE_SIZE))
			stage = p.stage;
	}
	free(got);
	return stage;
}

int tramp__get(pid_t pid, const struct py_target *t, enum tramp_kind kind, tramp_run_fn run,
	       void *ctx, struct tramp *out, char *why, size_t why_len)
{
	uint8_t *page = malloc(TRAMP_PAGE);
	uint64_t addr = 0, stage = 0;
	int err, fixed;

	memset(out, 0, sizeof(*out));
	if (!page)
		return -ENOMEM;
	/* a batch page writes the staging area it was placed with (or its child inherited); a
	 * new one's address is known once it is mapped (place): until then 1 stands for it, so
	 * that a page that cannot be built is refused before the target makes any call */
	if (kind == TRAMP_BATCH)
		stage = find_stage(pid);
	err = tramp__build(t, kind, stage ? stage : 1, 0, page, why, why_len);
	if (err)
		goto out;
	/* a page found in place is reused as it is in memory, not only as its file says: what an
	 * earlier recording's probes left there (pyuprof killed at the wrong moment, a kernel that
	 * restored part of an instruction) is put back first */
	fixed = tramp__restore(pid);
	if (fixed > 0)
		wlog("pid %d: %d bytes of a trampoline page left by an earlier recording were not "
		     "its own code: put back", pid, fixed);
	if ((kind != TRAMP_BATCH || stage) && !find_placed(pid, t, kind, stage, 0, out)) {
		out->reused = true;
		goto found;
	}
	err = place(pid, t, kind, &stage, page, run, ctx, &addr, why, why_len);
	if (err)
		goto out;
	/* what is mapped there now must be what we wrote, or nothing is pointed at it */
	err = find_placed(pid, t, kind, stage, addr, out);
	if (err) {
		snprintf(why, why_len, "the trampoline mapped at 0x%llx does not read back",
			 (unsigned long long)addr);
		goto out;
	}
found:
	out->stage = stage;
	out->hook = out->addr + tramp__hook_offset(kind);
out:
	free(page);
	return err;
}
