// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The batch path's own cost, in process: the page (user/inject/tramp_code.S) built by
 * tramp__build for a layout (3.MINOR) in front of a fake eval function that returns at once,
 * over fake thread state, frames and code objects (as tests/unit/test_stage.c sets them up),
 * its flush nop a jump to a bare ret (a consumer that takes nothing), called N times on the
 * main thread. bench/page_instructions.sh counts its instructions under valgrind, which a VM
 * without hardware counters does not measure otherwise; the time it prints is the best of R.
 * NOCHAIN=1: every call made from the frame entered last (no chain record), the common case.
 *
 *   page_instructions MINOR N R
 *
 * Built against an older tree with -DBEFORE_GUARD (no stack guard: no stack bounds to give).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include "inject/tramp.h"
#include "stage.h"
#include "target/py_layouts.h"

extern uint64_t frame_id(uint64_t tstate, uint64_t frame, uint64_t throwflag);
extern void flush_ret(void);
extern const uint8_t tramp_code[], tramp_batch[];
__asm__(".text\n.globl frame_id\nframe_id:\n push %r15\n mov %rsi,%rax\n pop %r15\n ret\n"
	".globl flush_ret\nflush_ret:\n ret\n");

#define OBJ 256
struct world {
	uint8_t tstate[OBJ], interp[16384], cframe[OBJ], frame[OBJ], caller[OBJ], shim[OBJ];
	uint8_t code[OBJ], caller_code[OBJ], name[OBJ], caller_name[OBJ], file[OBJ];
} __attribute__((aligned(64)));

static void put64(uint8_t *obj, uint32_t off, uint64_t v)
{
	memcpy(obj + off, &v, sizeof(v));
}

static uint64_t addr(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

static void put_str(const struct py_offsets *b, uint8_t *s, const char *text, uint64_t hash)
{
	put64(s, b->PyUnicode_length, strlen(text));
	put64(s, b->PyUnicode_length + 8, hash);
	memcpy(s + b->PyASCIIObject_size, text, strlen(text) + 1);
}

static void put_code(const struct py_offsets *b, uint8_t *code, uint8_t *name, uint8_t *file,
		     int32_t line)
{
	put64(code, b->PyCodeObject_co_name, addr(name));
	put64(code, b->PyCodeObject_co_filename, addr(file));
	memcpy(code + b->PyCodeObject_co_firstlineno, &line, sizeof(line));
}

/* The world of test_stage.c: the main interpreter's thread, in a call from caller. */
static void set_world(struct world *w, const struct py_offsets *b)
{
	put64(w->tstate, b->PyThreadState_interp, addr(w->interp));
	if (b->caller_mode == 1) { /* CALLER_FROM_CFRAME */
		put64(w->tstate, b->PyThreadState_cframe, addr(w->cframe));
		put64(w->cframe, b->PyCFrame_current_frame, addr(w->caller));
	} else if (b->caller_mode == 2) {
		put64(w->tstate, b->PyThreadState_current_frame, addr(w->caller));
	}
	put64(w->frame, b->frame_code, addr(w->code));
	put64(w->frame, b->frame_back, addr(w->caller));
	put64(w->caller, b->frame_code, addr(w->caller_code));
	put64(w->caller, b->frame_back, addr(w->shim));
	if (b->interp_frame)
		w->shim[b->frame_owner] = 3;
	put_str(b, w->name, "leaf", 0x1234);
	put_str(b, w->caller_name, "caller", 0x5678);
	put_str(b, w->file, "/srv/app/model.py", 0x9abc);
	put_code(b, w->code, w->name, w->file, 10);
	put_code(b, w->caller_code, w->caller_name, w->file, 3);
}

int main(int argc, char **argv)
{
	unsigned minor = argc > 1 ? (unsigned)atoi(argv[1]) : 12;
	long n = argc > 2 ? atol(argv[2]) : 20000000, i;
	int reps = argc > 3 ? atoi(argv[3]) : 7;
	const struct py_offsets_entry *o = py_layouts__find(3, minor, 0);
	struct world *w = aligned_alloc(64, sizeof(*w));
	uint8_t *stage = aligned_alloc(4096, STAGE_SIZE), *page, *island;
	uint64_t shim = addr(flush_ret), arg0, frame;
	uint64_t (*f)(uint64_t, uint64_t, uint64_t);
	struct timespec a, z;
	struct py_target t;
	double best = 1e9, ns;
	char why[256];
	int32_t rel;

	if (!o || !w || !stage)
		return 1;
	memset(w, 0, sizeof(*w));
	memset(stage, 0, STAGE_SIZE);
	memset(&t, 0, sizeof(t));
	t.major = 3;
	t.minor = minor;
	t.offsets = o;
	t.runtime_addr = addr(w->interp) - o->PyRuntime_main_interpreter;
	t.eval_addr = addr(frame_id);
	memcpy(t.eval_head, (void *)frame_id, sizeof(t.eval_head));
#ifndef BEFORE_GUARD
	/* the main thread's stack around here (valgrind runs it on a stack of its own) */
	t.main_stack_low = addr(__builtin_frame_address(0)) - (1 << 20);
	t.main_stack_span = 2 << 20;
	t.thread_blocks = true;
	t.seterr_addr = t.recursion_error_addr = 1; /* (never called: no stack runs out) */
#endif
	page = mmap(NULL, 2 * TRAMP_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		    0);
	if (page == MAP_FAILED || tramp__build(&t, TRAMP_BATCH, addr(stage), page, why, sizeof(why))) {
		fprintf(stderr, "page_instructions: %s\n", why);
		return 1;
	}
	/* the flush nop: push %rax; movabs $flush_ret, %rax; xchg %rax, (%rsp); ret */
	island = page + TRAMP_PAGE;
	memcpy(island, "\x50\x48\xb8", 3);
	memcpy(island + 3, &shim, 8);
	memcpy(island + 11, "\x48\x87\x04\x24\xc3", 5);
	page[tramp__flush_offset()] = 0xe9;
	rel = (int32_t)(TRAMP_PAGE - (tramp__flush_offset() + 5));
	memcpy(page + tramp__flush_offset() + 1, &rel, sizeof(rel));
	if (mprotect(page, 2 * TRAMP_PAGE, PROT_READ | PROT_EXEC))
		return 1;
	set_world(w, &o->bpf);
	*(uint32_t *)(stage + STAGE_ON) = 1;
	*(uint64_t *)(stage + STAGE_BOUND) = UINT64_MAX;
	f = (uint64_t(*)(uint64_t, uint64_t, uint64_t))(page + (tramp_batch - tramp_code));
	frame = addr(w->frame);
	arg0 = o->bpf.eval_frame_arg ? addr(w->tstate) : frame;
	if (getenv("NOCHAIN")) { /* a first call (its flushes), then the caller on top */
		f(arg0, frame, 0);
		*(uint64_t *)(stage + STAGE_TOP) = addr(w->caller);
	}
	for (int r = 0; r < reps; r++) {
		clock_gettime(CLOCK_MONOTONIC, &a);
		for (i = 0; i < n; i++)
			f(arg0, frame, 0);
		clock_gettime(CLOCK_MONOTONIC, &z);
		ns = ((double)(z.tv_sec - a.tv_sec) * 1e9 + (double)(z.tv_nsec - a.tv_nsec)) / (double)n;
		if (ns < best)
			best = ns;
	}
	printf("3.%u: %.2f ns a call (best of %d, %ld calls each)\n", minor, n ? best : 0.0, reps,
	       n);
	return 0;
}
