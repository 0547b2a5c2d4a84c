// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Building the trampoline page, finding it again in a target, or placing it there through
 * system calls made by the target: an anonymous page for the name and the bytes, memfd_create,
 * pwrite, mmap (private, read+execute), close, munmap. Each call is its own injection, so the
 * thread stands with its own registers between two of them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "log.h"
#include "proc.h"
#include "tramp.h"

#define BODY_OFFSET 24
#define SLOT_OFFSET 64
#define IDENT_OFFSET 128
#define IDENT "pyuprof-tramp 1"
#define NAME_BYTES 64 /* the name's room at the start of the scratch page */

static const uint8_t head[BODY_OFFSET] = {
	0x0f, 0x1f, 0x44, 0x00, 0x00, /* nopl 0x0(%rax,%rax,1): entry probe */
	0x48, 0x83, 0xec, 0x08,	      /* sub $8,%rsp: the function's stack alignment */
	0xe8, 0x0a, 0x00, 0x00, 0x00, /* call BODY_OFFSET */
	0x48, 0x83, 0xc4, 0x08,	      /* add $8,%rsp */
	0x0f, 0x1f, 0x44, 0x00, 0x00, /* nopl 0x0(%rax,%rax,1): return probe */
	0xc3,			      /* ret */
};
_Static_assert(TRAMP_RETURN_OFFSET == 18, "return probe offset");

/*
 * Length of a first instruction that means the same wherever it runs: push of a register,
 * endbr64, mov %rsp,%rbp. Anything else (a rip-relative operand, a branch) is refused rather
 * than decoded: every build here starts with push %r15.
 */
static int replayable(const uint8_t *b)
{
	if (b[0] >= 0x50 && b[0] <= 0x57)
		return 1;
	if (b[0] == 0x41 && b[1] >= 0x50 && b[1] <= 0x57)
		return 2;
	if (b[0] == 0x48 && b[1] == 0x89 && b[2] == 0xe5)
		return 3;
	if (b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa)
		return 4;
	return 0;
}

int tramp__build(const struct py_target *t, uint8_t page[TRAMP_PAGE], char *why, size_t why_len)
{
	int len = replayable(t->eval_head);
	uint64_t next = t->eval_addr + (uint64_t)len;
	int32_t rel;

	if (!len) {
		snprintf(why, why_len,
			 "_PyEval_EvalFrameDefault starts with %02x %02x %02x %02x, which the "
			 "trampoline does not replay",
			 t->eval_head[0], t->eval_head[1], t->eval_head[2], t->eval_head[3]);
		return -ENOTSUP;
	}
	memset(page, 0xcc, TRAMP_PAGE); /* int3 wherever nothing should run */
	memcpy(page, head, sizeof(head));
	memcpy(page + BODY_OFFSET, t->eval_head, (size_t)len);
	/* jmp *SLOT_OFFSET(%rip), relative to the end of this 6-byte instruction */
	page[BODY_OFFSET + len] = 0xff;
	page[BODY_OFFSET + len + 1] = 0x25;
	rel = SLOT_OFFSET - (BODY_OFFSET + len + 6);
	memcpy(page + BODY_OFFSET + len + 2, &rel, sizeof(rel));
	memcpy(page + SLOT_OFFSET, &next, sizeof(next));
	memset(page + IDENT_OFFSET, 0, 32);
	memcpy(page + IDENT_OFFSET, IDENT, sizeof(IDENT));
	memcpy(page + IDENT_OFFSET + 16, &t->eval_addr, sizeof(t->eval_addr));
	return 0;
}

/* Whether the file behind a mapping holds exactly want (read as a file, not as memory: the
 * kernel rewrites probed nops in the process's copy). */
static bool holds(const char *path, const uint8_t *want)
{
	uint8_t *got = malloc(TRAMP_PAGE);
	bool same = false;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0 && got && pread(fd, got, TRAMP_PAGE, 0) == TRAMP_PAGE)
		same = !memcmp(got, want, TRAMP_PAGE);
	if (fd >= 0)
		close(fd);
	free(got);
	return same;
}

/* A mapping of ours in pid, read+execute at file offset 0, that holds want. */
static int find_placed(pid_t pid, const uint8_t *want, uint64_t only, struct tramp *out)
{
	char path[64], line[512];
	unsigned long long s, e, off;
	char perms[8];
	int pos, err = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (err && fgets(line, sizeof(line), f)) {
		pos = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &s, &e, perms, &off, &pos) < 4 ||
		    !pos || strncmp(line + pos, "/memfd:" TRAMP_NAME " ", 7 + strlen(TRAMP_NAME) + 1) ||
		    strcmp(perms, "r-xp") || off || (only && s != only))
			continue;
		snprintf(out->path, sizeof(out->path), "/proc/%d/map_files/%llx-%llx", pid, s, e);
		if (holds(out->path, want)) {
			out->addr = s;
			err = 0;
		}
	}
	fclose(f);
	return err;
}

/* Whether pid's threads run under a seccomp filter or in strict mode. */
static bool seccomp_on(pid_t pid)
{
	char path[64], line[128];
	bool on = true; /* unknown counts as on */
	int mode;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return on;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Seccomp: %d", &mode) == 1) {
			on = mode != 0;
			break;
		}
	fclose(f);
	return on;
}

static int call(tramp_run_fn run, void *ctx, long nr, uint64_t a0, uint64_t a1, uint64_t a2,
		uint64_t a3, uint64_t a4, uint64_t a5, int64_t *ret)
{
	struct inject_call c = { .nr = nr, .args = { a0, a1, a2, a3, a4, a5 } };
	int err = run(ctx, &c);

	if (err)
		return err;
	*ret = c.ret;
	return c.ret < 0 && c.ret > -4096 ? (int)c.ret : 0;
}

/* Maps the page into pid; *addr where. Returns 0 or -errno with why set. */
static int place(pid_t pid, const uint8_t *page, tramp_run_fn run, void *ctx, uint64_t *addr,
		 char *why, size_t why_len)
{
	char name[NAME_BYTES] = TRAMP_NAME;
	int64_t scratch = 0, fd = -1, n, r;
	const char *step = "mmap";
	int err;

	err = call(run, ctx, SYS_mmap, 0, TRAMP_PAGE + NAME_BYTES, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1, 0, &scratch);
	if (err)
		goto fail;
	step = "writing the page";
	err = proc__write(pid, (uint64_t)scratch, name, sizeof(name));
	if (!err)
		err = proc__write(pid, (uint64_t)scratch + NAME_BYTES, page, TRAMP_PAGE);
	if (err)
		goto undo;
	step = "memfd_create";
	err = call(run, ctx, SYS_memfd_create, (uint64_t)scratch, MFD_CLOEXEC, 0, 0, 0, 0, &fd);
	if (err)
		goto undo;
	step = "pwrite";
	err = call(run, ctx, SYS_pwrite64, (uint64_t)fd, (uint64_t)scratch + NAME_BYTES, TRAMP_PAGE,
		   0, 0, 0, &n);
	if (!err && n != TRAMP_PAGE)
		err = -EIO;
	if (err)
		goto undo;
	step = "mmap";
	err = call(run, ctx, SYS_mmap, 0, TRAMP_PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE,
		   (uint64_t)fd, 0, &r);
	if (!err)
		*addr = (uint64_t)r;
undo:
	/* the target keeps no descriptor and no scratch page of ours */
	if (fd >= 0)
		call(run, ctx, SYS_close, (uint64_t)fd, 0, 0, 0, 0, 0, &n);
	if (scratch > 0)
		call(run, ctx, SYS_munmap, (uint64_t)scratch, TRAMP_PAGE + NAME_BYTES, 0, 0, 0, 0,
		     &n);
fail:
	if (err)
		snprintf(why, why_len, "%s in the target failed: %s", step, strerror(-err));
	return err;
}

int tramp__get(pid_t pid, const struct py_target *t, tramp_run_fn run, void *ctx,
	       struct tramp *out, char *why, size_t why_len)
{
	uint8_t *page = malloc(TRAMP_PAGE);
	uint64_t addr = 0;
	int err;

	memset(out, 0, sizeof(*out));
	if (!page)
		return -ENOMEM;
	err = tramp__build(t, page, why, why_len);
	if (err)
		goto out;
	if (!find_placed(pid, page, 0, out)) {
		out->reused = true;
		goto out;
	}
	if (seccomp_on(pid)) {
		snprintf(why, why_len, "it runs under seccomp, which may forbid the system calls "
				       "that map the trampoline");
		err = -EPERM;
		goto out;
	}
	err = place(pid, page, run, ctx, &addr, why, why_len);
	if (err)
		goto out;
	/* what is mapped there now must be what we wrote, or nothing is pointed at it */
	err = find_placed(pid, page, addr, out);
	if (err)
		snprintf(why, why_len, "the trampoline mapped at 0x%llx does not read back",
			 (unsigned long long)addr);
out:
	free(page);
	return err;
}
