/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The probe trampoline's code and its parameters, as one position-independent block that
 * tramp_build.c copies into a page of the target and fills in (the p_* fields, the replayed first
 * instruction, the head's call). pyuprof never runs it: it sits in read-only data here. Layout
 * and the reasons for it: tramp.h. One file although long: the page is one block of code whose
 * parts jump into each other, and its layout is one contract with
 * tramp_layout.h.
 */
#include "stage.h"
#include "cfuncs.h"
#include "inject/tramp_cfuncs.h"
#include "tramp_cfuncs_blob.h"	/* the Makefile's: the blob of tramp_cfuncs.c, its entry */
#define WALK_LEVELS 6	/* return addresses looked at above a call, at most */
#define CALLER_FROM_CFRAME 1	/* include/py_offsets.h's enum caller_mode */
#define CO_GENERATOR_KINDS 0x3a0	/* co_flags of generators, coroutines, async generators */
#define FRAME_OWNED_BY_GENERATOR 1	/* 3.11+: _PyInterpreterFrame.owner */
#define STACK_RAISE 1		/* tramp.h's enum tramp_stack_mode */
#define STACK_BUDGET 2

/* eax: the running thread's key for the batch path: glibc's tid in its thread block (%fs) */
.macro thread_key
	mov b_tid_off(%rip), %eax
	mov %fs:(%rax), %eax
.endm

	.section .rodata.pyuprof_tramp, "a"
	.balign 64
	.globl tramp_code
tramp_code:
	/* +0: the entry probe's 5-byte nop; registers exactly as at the function's entry */
	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00
	.globl tramp_head_push
tramp_head_push:
	push %rsi			/* the frame (3.8: push %rdi, tramp_build.c), and the function's
					 * own stack alignment */
	.globl tramp_head_call
tramp_head_call:
	call tramp_body_plain		/* or tramp_body_budget: tramp_build.c points it */
	.globl tramp_return_nop
tramp_return_nop:
	/* +11: the return probe's 5-byte nop; rax holds the result, (%rsp) the frame */
	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00
	pop %rcx
	ret

/*
 * To \room where rsp is on the main thread's stack with more than p_margin of it left below
 * (one compare: p_main_floor is the stack's bottom and the margin, p_main_room what lies above
 * it; with no guard at all, every stack pointer has room); else on, with rax the bytes left
 * below rsp on the running thread's stack, ~0 where its bounds are not known (.Lstack_left).
 * Uses rcx and r8.
 */
.macro stack_room room
	mov %rsp, %rax
	sub p_main_floor(%rip), %rax
	cmp p_main_room(%rip), %rax
	jb \room
	call .Lstack_left
.endm

/*
 * The hook of a page without the batch path (--exits trampoline, usdt; 3.12+ with uretprobe or
 * ret: a pass-through). A call with less than p_margin of its thread's C stack left raises
 * RecursionError (.Llow) rather than run into the stack's end; any other goes to the head. If
 * pyuprof is gone (the head's entry nop is no longer probed) the thread's interpreter gets its
 * hook back first (.Lunhook), so that the calls after run natively again.
 */
	.globl tramp_guard
tramp_guard:
	stack_room 98f
	cmp p_margin(%rip), %rax
	jb .Llow
98:	lea tramp_guard(%rip), %r8
.Lhead:	/* r8: this page's hook value */
	cmpb $0x0f, tramp_code(%rip)
	jne tramp_code
	cmpl $0, p_hook_slot(%rip)
	je tramp_code
	call .Lunhook
	jmp tramp_code

/*
 * Less than p_margin of the C stack is left (rax: how much; the stack nop's probe counts it):
 * each Python call through the hook is a C activation of its own, which natively it is not
 * (3.11+) or is with less C stack (before), so the call ends in RecursionError, as CPython
 * ends a call whose C stack runs out, where it would otherwise crash. 3.12, 3.13: CPython's
 * own check raises it, with the thread's C budget at 0 for the call (the budget the function
 * takes and gives back on its way out is its own; what was there is put back after). Before:
 * the function is not called; PyErr_SetString(PyExc_RecursionError, p_msg) and NULL, as the
 * eval function does when its recursion check fails at its entry, before it touches the frame
 * (3.11: its caller clears the frame, either way). No probe sees the call: CPython's profiler
 * hooks do not see one that fails so either.
 */
/*
 * rax: the bytes of C stack left below the caller's stack pointer on the running thread's
 * stack, ~0 where its bounds are not known. The main thread's stack, [p_main_low,
 * + p_main_span), is read from the target's maps and its stack limit (tramp_build.c); any other
 * thread's is in glibc's thread block (p_blk_off: stackblock, stackblock_size, guardsize, one
 * after the other; 0: the target's libc is not known to be glibc, and the block is not read).
 * A stack pointer outside the block it describes (a stack of some C code's own, or a block
 * that is not glibc's after all) is not judged. Uses rcx and r8.
 */
.Lstack_left:
	lea 8(%rsp), %r8
	mov %r8, %rax
	sub p_main_low(%rip), %rax
	cmp p_main_span(%rip), %rax
	jb 99f
	mov $-1, %rax
	mov p_blk_off(%rip), %ecx
	test %ecx, %ecx
	jz 99f
	sub %fs:(%rcx), %r8		/* rsp - stackblock (the main thread's block is 0) */
	cmp %fs:8(%rcx), %r8
	jae 99f
	sub %fs:16(%rcx), %r8		/* less the guard at its bottom: what is left */
	mov %r8, %rax
	jnb 99f
	xor %eax, %eax
99:	ret

.Llow:
	.globl tramp_stack_nop
tramp_stack_nop:
	/* the stack probe's 5-byte nop: rax the bytes left */
	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00
	cmpl $STACK_BUDGET, p_stk_mode(%rip)
	je 1f
	sub $8, %rsp
	mov p_exc(%rip), %rdi
	mov (%rdi), %rdi
	lea p_msg(%rip), %rsi
	call *p_seterr(%rip)
	add $8, %rsp
	xor %eax, %eax
	ret
1:	mov p_c_off(%rip), %ecx
	push %rdi			/* the thread state */
	mov (%rdi,%rcx), %eax
	push %rax			/* its budget */
	movl $0, (%rdi,%rcx)
	sub $8, %rsp
	call tramp_body_plain
	add $8, %rsp
	pop %rcx
	pop %rdx
	mov p_c_off(%rip), %r8d
	add %ecx, (%rdx,%r8)
	ret

/*
 * pyuprof is gone (its probes are off the page): the running thread's interpreter (rdi: its
 * thread state, 3.9+) gets back the eval_frame hook it had before pyuprof, if the hook is
 * still this page's (r8), as pyuprof puts it back when it stops. The thread holds the
 * interpreter's GIL. Uses rax and rcx.
 */
.Lunhook:
	mov p_interp_off(%rip), %eax
	mov (%rdi,%rax), %rax
	test %rax, %rax
	jz 1f
	mov p_hook_slot(%rip), %ecx
	cmp %r8, (%rax,%rcx)
	jne 1f
	mov p_hook_unset(%rip), %r8
	mov %r8, (%rax,%rcx)
1:	ret

/*
 * 3.12+: the C recursion budget handed back around the call (tramp.h), entered as a function
 * with the thread state in %rdi. It is handed back when the call is one CPython would have run
 * inline: the return addresses above it lead, through call sites of CPython's own call
 * machinery only (p_walk: each site's frame size and the budget its function holds across the
 * call), into the eval loop itself. What is added is kept on the stack and taken back after the
 * call, whatever the thread does meanwhile. Only rax, rcx and r8-r11 are used before the call:
 * the function's arguments are in rdi, rsi and rdx.
 */
/* The walk (above): eax, what to hand back (0: nothing), with the hook's caller's return
 * address at \at(%rsp). On a stack whose bounds are known the page guards its end (.Llow);
 * on any other, nothing is handed back past a Python depth of p_depth_cap, where the C stack
 * each hooked call uses is what the budget protects. Uses rcx and r8-r11. */
.macro budget_walk at
	stack_room 97f
	cmp $-1, %rax
	jne 97f
	xor %eax, %eax
	/* depth = py_recursion_limit - py_recursion_remaining; at or past the bound: nothing */
	mov p_limit_off(%rip), %ecx
	mov (%rdi,%rcx), %r8d
	mov p_remaining_off(%rip), %ecx
	sub (%rdi,%rcx), %r8d
	cmp p_depth_cap(%rip), %r8d
	jae 95f
97:	lea \at(%rsp), %r8
	mov $WALK_LEVELS, %r9d
	xor %r11d, %r11d		/* budget held by the functions walked through */
91:	mov (%r8), %r10
	mov %r10, %rax
	sub p_eval_start(%rip), %rax
	cmp p_eval_len(%rip), %rax
	jb 94f
	mov %r10, %rax
	sub p_cold_start(%rip), %rax
	cmp p_cold_len(%rip), %rax
	jb 94f
	lea p_walk(%rip), %rcx
92:	mov (%rcx), %rax
	test %rax, %rax
	jz 93f				/* another caller: a C path, which spends the budget natively */
	cmp %r10, %rax
	je 96f
	add $16, %rcx
	jmp 92b
96:	mov 8(%rcx), %eax		/* that frame's size: its own return address is there */
	add %rax, %r8
	add 12(%rcx), %r11d
	dec %r9d
	jnz 91b
93:	xor %eax, %eax
	jmp 95f
94:	mov p_units(%rip), %eax
	add %r11d, %eax
95:
.endm

	.globl tramp_body_budget
tramp_body_budget:
	budget_walk 16			/* the hook's caller's return address, above the head's */
	push %rdi			/* the thread state */
	push %rax			/* what is handed back */
	sub $8, %rsp
	mov p_c_off(%rip), %ecx
	add %eax, (%rdi,%rcx)
	call tramp_body_plain
	mov 8(%rsp), %ecx
	mov 16(%rsp), %rdx
	mov p_c_off(%rip), %r8d
	sub %ecx, (%rdx,%r8)
	add $24, %rsp
	ret

	/* the function's first instruction (nop-padded), then the rest of the function */
	.globl tramp_body_plain
tramp_body_plain:
	.globl tramp_replay
tramp_replay:
	.byte 0x90, 0x90, 0x90, 0x90
	jmp *p_slot(%rip)

/*
 * The batch path (the default, --exits batch; the hook points here): stages an entry record
 * and its chain, calls the function as the head does, stages an exit record; the kernel is entered
 * only at the flush nop (include/stage.h says when, and the records). A call it does not stage
 * goes to the head (+0) instead, whose probes see it: one of another interpreter (3.12+, which
 * may hold a GIL of its own) or one entered from an activation's entry shim (3.12+: made while
 * that activation's frame is cleared after it returned), which the BPF side reads in full.
 * With staging off (pyuprof not recording, a forked child, pyuprof gone) it only passes the call
 * through; with STAGE_ON_PERCALL (a thread key that does not check out) every call goes to the
 * head. While it stages, the function's arguments and the callee-saved registers it uses
 * wait on the stack (rax, rcx, rdx, r8-r11 are scratch); at the call three slots are above the
 * hook's return address (the hand-back's walk of return addresses starts past them): the
 * STAGE_TOP to put back when the function returns (the one it found if that was the caller,
 * else 0), on 3.12+ the frame if it is a generator's or coroutine's own, whose exit record then
 * says whether it returned rather than yielded (stage.h), and the frame. An entry whose caller
 * is STAGE_TOP has no chain record: the reader has that frame on top, and its entry sent the
 * chain's code objects. An exit whose frame is not STAGE_TOP (its thread ran frames of another
 * stack meanwhile: a greenlet's, switched to without an exit) names its frame first, in a
 * resume record. A call with too little C stack left raises RecursionError instead (.Llow).
 */
	.globl tramp_batch
tramp_batch:
	stack_room .Lb_room
	cmp p_margin(%rip), %rax
	jb .Lb_low
.Lb_room:
	mov b_stage(%rip), %r10
	xor %r11d, %r11d		/* the STAGE_TOP to put back: none */
	cmpl $STAGE_ON_STAGING, STAGE_ON(%r10)
	jne .Lb_notstaging
	mov b_interp_off(%rip), %eax
	test %eax, %eax
	jz 1f
	mov (%rdi,%rax), %rax
	cmp b_main_interp(%rip), %rax
	jne tramp_code
1:	push %rdi
	push %rsi
	push %rdx
	push %rbx
	push %r12
	push %r13
	/* rbx: the frame; r12: its code; r13d: why to flush first */
	mov %rdi, %rbx
	cmpl $0, b_frame_arg(%rip)
	cmovne %rsi, %rbx
	mov b_code_off(%rip), %eax
	mov (%rbx,%rax), %r12
	and b_code_mask(%rip), %r12	/* 3.14+: f_executable is a tagged _PyStackRef */
	xor %r13d, %r13d
	thread_key
	cmp STAGE_OWNER(%r10), %eax
	je 2f
	or $STAGE_FLUSH_SWITCH, %r13d
2:	mov %r12, %rcx
	call .Lslot
	je 4f
	or $STAGE_FLUSH_CODE, %r13d
4:	test %r13d, %r13d
	jz 5f
	cmpl $0, b_frame_arg(%rip)	/* 3.9+: the thread state first, the frame second */
	je 3f
	mov 40(%rsp), %r9		/* the thread state: which interpreter the thread runs */
	or $STAGE_FLUSH_TSTATE, %r13d
3:	call .Lflush
	cmpl $STAGE_ON_STAGING, STAGE_ON(%r10)	/* (a thread key that did not check out) */
	jne .Lb_head
5:	cmpl $CF_PROFILE, b_cf_mode(%rip)
	jne 20f
	call .Lcf_take
	jmp 19f
20:	cmpl $CF_MONITOR, b_cf_mode(%rip)
	jne 19f
	cmpl $0, STAGE_CFUNCS(%r10)
	je 19f
	call .Lmon_check
19:	/* the chain: the caller (rsi) as the BPF side finds it, then its caller */
	mov 40(%rsp), %rdi		/* the thread state (3.9+) */
	mov b_back_off(%rip), %ecx
	mov b_mode(%rip), %eax
	cmp $CALLER_FROM_CFRAME, %eax
	je 6f
	ja 7f
	mov (%rbx,%rcx), %rsi		/* <= 3.10: f_back */
	jmp 8f
6:	mov b_cframe_off(%rip), %eax
	mov (%rdi,%rax), %rsi
	test %rsi, %rsi
	jz 8f
	mov b_cfcur_off(%rip), %eax
	mov (%rsi,%rax), %rsi
	jmp 8f
7:	mov b_cur_off(%rip), %eax
	mov (%rdi,%rax), %rsi
8:	xor %r8d, %r8d			/* chain_code[0] | flags */
	xor %r9d, %r9d			/* chain[1] */
	xor %edi, %edi			/* chain_code[1] */
	xor %edx, %edx			/* back */
	test %rsi, %rsi
	jz .Lb_stage
	mov b_owner_off(%rip), %eax
	test %eax, %eax
	jz 9f
	movzbl (%rsi,%rax), %eax	/* 3.11+: its owner */
	cmp $3, %eax
	jae .Lb_head			/* an entry shim: not staged */
	cmp $1, %eax
	jne 9f
	or $STAGE_CHAIN_GEN0, %r8
9:	cmp STAGE_TOP(%r10), %rsi
	je .Lb_nochain
	mov b_code_off(%rip), %eax
	mov (%rsi,%rax), %rax
	and b_code_mask(%rip), %rax
	or %rax, %r8			/* chain_code[0] */
	mov (%rsi,%rcx), %r9		/* chain[1] */
	test %r9, %r9
	jz .Lb_gen
	mov b_owner_off(%rip), %eax
	test %eax, %eax
	jz 10f
	movzbl (%r9,%rax), %eax
	cmp $3, %eax
	jae 11f				/* a shim ends the chain */
	cmp $1, %eax
	jne 10f
	or $STAGE_CHAIN_GEN1, %r8
10:	mov b_code_off(%rip), %eax
	mov (%r9,%rax), %rdi
	and b_code_mask(%rip), %rdi	/* chain_code[1] */
	mov (%r9,%rcx), %rdx		/* back */
	jmp .Lb_gen
11:	xor %r9d, %r9d
.Lb_gen:
	/* <= 3.10: a generator's frame is known by its code's flags */
	cmpl $0, b_owner_off(%rip)
	jne .Lb_stage
	mov b_flags_off(%rip), %eax
	mov %r8, %r11
	and $-16, %r11
	testl $CO_GENERATOR_KINDS, (%r11,%rax)
	jz 12f
	or $STAGE_CHAIN_GEN0, %r8
12:	test %rdi, %rdi
	jz .Lb_stage
	testl $CO_GENERATOR_KINDS, (%rdi,%rax)
	jz .Lb_stage
	or $STAGE_CHAIN_GEN1, %r8
.Lb_stage:
	/* the chain's code objects too: a frame CPython ran inline (a hole of the eval_frame
	 * switch, 3.13.0's __init__ shim) has one that no entry sent. Before 3.11 every frame
	 * entered through here (those running at attach are read then), and a caller's code
	 * object lives as long as its frame: its identity went out at its own entry. */
	cmpl $0, b_chains(%rip)
	je 16f
	push %rdx
	push %rdi
	push %r9
	push %r8
	push %rsi
	mov 8(%rsp), %rcx
	and $-8, %rcx
	jz 14f
	call .Lchain_code
14:	mov 24(%rsp), %rcx
	test %rcx, %rcx
	jz 15f
	call .Lchain_code
15:	pop %rsi
	pop %r8
	pop %r9
	pop %rdi
	pop %rdx
	cmpl $STAGE_ON_STAGING, STAGE_ON(%r10)
	jne .Lb_head
16:	or $STAGE_CHAIN, %r8
	mov STAGE_W(%r10), %rcx
	lea STAGE_BUF(%r10,%rcx), %r11
	mov %r8, STAGE_ENTRY_BYTES(%r11)
	mov %r9, STAGE_ENTRY_BYTES + 8(%r11)
	mov %rdi, STAGE_ENTRY_BYTES + 16(%r11)
	mov %rdx, STAGE_ENTRY_BYTES + 24(%r11)
	mov $2 * STAGE_ENTRY_BYTES, %r9d	/* r9: the bytes staged */
	jmp 17f
.Lb_nochain:	/* the caller is STAGE_TOP: the entry alone */
	mov STAGE_W(%r10), %rcx
	lea STAGE_BUF(%r10,%rcx), %r11
	mov $STAGE_ENTRY_BYTES, %r9d
17:	mov %rsi, 24(%r11)
	mov %r12, 16(%r11)
	mov %r8, %r13			/* (whether the caller is a generator's frame) */
	mov %rbx, %r8
	/* 3.11+: a frame of a generator function that only makes the generator */
	mov b_owner_off(%rip), %eax
	test %eax, %eax
	jz 13f
	cmpb $0, (%rbx,%rax)
	jne 13f
	mov b_flags_off(%rip), %eax
	testl $CO_GENERATOR_KINDS, (%r12,%rax)
	jz 13f
	or $STAGE_GEN_CREATE, %r8
13:	mov %r8, 8(%r11)
	rdtsc
	shl $32, %rdx
	or %rdx, %rax
	mov %rax, %rdx
	bts $63, %rdx			/* STAGE_TAG_ENTRY, the top bit alone: */
.if STAGE_TAG_ENTRY << STAGE_TAG_SHIFT != 1 << 63
	.error "STAGE_TAG_ENTRY is not bit 63"
.endif
	mov %rdx, (%r11)
	add %r9, %rcx
	mov %rcx, STAGE_W(%r10)		/* the records are whole before they count */
	/* what its return makes the top again: the caller, which the reader then has on top
	 * (found there, or named by the chain staged). Not the top found whatever the caller:
	 * after a switch of the GIL that is 0 until the frame that runs returns, and each call of
	 * a loop in a thread that took the GIL back would stage a chain (more than half the calls
	 * of a thread's loop, 50-100 ns each). None (the next call from the caller names it in a
	 * chain) where the reader may not have put the caller on top: a generator's frame, which
	 * it may pass over (profile/stacks.c), or a chain whose caller's code is not known */
	mov STAGE_TOP(%r10), %r11	/* (.Lafter keeps r11) */
	cmp %rsi, %r11
	je 19f
	mov %r13, %r11
	and $-16, %r11
	jz 19f
	xor %r11d, %r11d
	test $STAGE_CHAIN_GEN0, %r13d
	jnz 19f
	mov %rsi, %r11
19:	mov %rbx, STAGE_TOP(%r10)
	call .Lafter
	/* r10: the frame if it is a generator's or coroutine's own (3.12+), else 0 */
	xor %r10d, %r10d
	cmpl $0, b_gen_state(%rip)
	je 18f
	mov b_owner_off(%rip), %eax
	cmpb $FRAME_OWNED_BY_GENERATOR, (%rbx,%rax)
	cmove %rbx, %r10
18:	mov %rbx, %r8			/* the frame */
	pop %r13
	pop %r12
	pop %rbx
	pop %rdx
	pop %rsi
	pop %rdi
.Lb_call:
	push %r11			/* the STAGE_TOP to put back */
	push %r10			/* the generator's frame, or 0 */
	push %r8			/* the frame */
	.globl tramp_batch_call
tramp_batch_call:
	call tramp_body_plain		/* 3.12+: a jmp to tramp_batch_budget (tramp_build.c) */
.Lb_back:
	pop %r8
	pop %r9				/* (the generator's frame, or 0: .Lflush keeps r9) */
	pop %r11
	mov b_stage(%rip), %r10
	cmpl $STAGE_ON_STAGING, STAGE_ON(%r10)
	jne 1f
	push %rax			/* the result */
	push %rbx
	push %r12
	push %r13
	mov %r8, %rbx			/* the frame (.Lflush's frame, read only with a code) */
	xor %r12d, %r12d
	xor %r13d, %r13d
	thread_key
	cmp STAGE_OWNER(%r10), %eax
	je 2f
	mov $STAGE_FLUSH_SWITCH, %r13d
	call .Lflush
2:	mov $STAGE_TAG_EXIT, %edx
	/* a generator's frame that returned rather than yielded: its state completed or cleared
	 * (the generator lives on: whoever resumed it holds it), a result */
	test %r9, %r9
	jz 3f
	movslq b_gen_state(%rip), %rsi
	movsbl (%r9,%rsi), %esi
	cmp b_gen_done(%rip), %esi
	jl 3f
	mov 24(%rsp), %rsi		/* the result */
	test %rsi, %rsi
	jz 3f				/* an exception */
	mov $STAGE_TAG_EXIT_DONE, %edx
	cmp b_none(%rip), %rsi
	jne 3f
	mov $STAGE_TAG_EXIT_NONE, %edx
3:	mov STAGE_W(%r10), %rcx
	cmp STAGE_TOP(%r10), %rbx
	je 4f
	/* not the frame the reader has on top: since its last event the thread ran frames of
	 * another stack (a greenlet's, switched to without an exit), or another thread took the
	 * batch. The exit names its frame first. */
	lea STAGE_BUF(%r10,%rcx), %rsi
	mov $STAGE_TAG_RESUME, %eax
	shl $STAGE_TAG_SHIFT, %rax
	mov %rax, (%rsi)
	mov %rbx, 8(%rsi)
	add $STAGE_RESUME_BYTES, %rcx
4:	mov %r11, STAGE_TOP(%r10)	/* (this thread's: after any switch) */
	lea STAGE_BUF(%r10,%rcx), %r11
	mov %edx, %esi			/* (the tag: rdtsc takes rdx) */
	shl $STAGE_TAG_SHIFT, %rsi
	rdtsc
	shl $32, %rdx
	or %rdx, %rax
	or %rax, %rsi
	mov %rsi, (%r11)
	add $STAGE_EXIT_BYTES, %rcx
	mov %rcx, STAGE_W(%r10)
	call .Lafter
	pop %r13
	pop %r12
	pop %rbx
	pop %rax
1:	ret

/* 3.12+: the call with the C budget handed back, as tramp_body_budget does it for the head,
 * in this frame (one return fewer); stack: three slots (.Lb_call), the hook's return address */
	.globl tramp_batch_budget
tramp_batch_budget:
	budget_walk 24
	push %rdi			/* the thread state */
	push %rax			/* what is handed back */
	mov p_c_off(%rip), %ecx
	add %eax, (%rdi,%rcx)
	call tramp_body_plain
	pop %rcx
	pop %rdx
	mov p_c_off(%rip), %r8d
	sub %ecx, (%rdx,%r8)
	jmp .Lb_back

.Lb_notstaging:
	cmpl $STAGE_ON_PASS, STAGE_ON(%r10)
	je .Lb_off
	lea tramp_batch(%rip), %r8	/* STAGE_ON_PERCALL: the head, as tramp_guard does */
	jmp .Lhead

.Lb_off:	/* staging off: a pass-through; if pyuprof is gone (the flush nop unprobed), or
		 * this is a process it never recorded through this page (the area as a forked
		 * child has it, wiped: no batch bound), the interpreter gets its own hook back
		 * first */
	cmpq $0, STAGE_BOUND(%r10)
	je 2f
	cmpb $0x0f, tramp_flush(%rip)
	jne 1f
2:	cmpl $0, p_hook_slot(%rip)
	je 1f
	lea tramp_batch(%rip), %r8
	call .Lunhook
1:	mov %rdi, %r8			/* the frame, should staging be on at its exit */
	cmpl $0, b_frame_arg(%rip)
	cmovne %rsi, %r8
	xor %r10d, %r10d
	jmp .Lb_call

/*
 * Too little C stack left: RecursionError (.Llow), but in a process pyuprof never recorded
 * through this page (a child forked by a thread the hold had not seized yet, whose probed nops
 * are calls into a page of the kernel's it does not have, and whose area is wiped: no batch
 * bound): there the call goes on as above, and the hook goes back (.Lb_off).
 */
.Lb_low:
	mov b_stage(%rip), %r10
	cmpq $0, STAGE_BOUND(%r10)
	je .Lb_room
	jmp .Llow

.Lb_head:	/* not staged: the head's probes see this call */
	pop %r13
	pop %r12
	pop %rbx
	pop %rdx
	pop %rsi
	pop %rdi
	jmp tramp_code

/* In .Lslot: to 2f, 1f, 3f or 4f (the way that adds 0, 1, 2 or 3 slots to r11) if a slot of the
 * set at r11 starts with \key; else on. */
.macro ways_holding key
	cmp (%r11), \key
	je 2f
	cmp STAGE_SLOT(%r11), \key
	je 1f
	cmp 2 * STAGE_SLOT(%r11), \key
	je 3f
	cmp 3 * STAGE_SLOT(%r11), \key
	je 4f
.endm

/*
 * rcx: a code object. ZF set if its identity was sent; else it is noted as sent, ZF clear,
 * and its identity must be sent before a record names it. A new object at a freed one's
 * address differs in its identity:
 * - 3.12+: in co_version, which each code object takes at its creation from a counter that
 *   only grows. A version below STAGE_VERSIONS has a bit in the version map (stage.h); one
 *   past it has a slot in the table (the slot's second word: the version, co_firstlineno above
 *   it, and bit 63, which no address has, so that it never equals a co_name the other way
 *   stored);
 * - before, or once that counter wrapped to 0 (each new object then gets 0): in one of co_name
 *   and its hash, co_filename's address, length, hash and first and last 8 bytes, and
 *   co_firstlineno, in its slot in the table. Reads stay inside the objects: a str's
 *   characters start at least 8 bytes into it, and its first 8 are read only when it has 8.
 * The version spares the loads from the two strings, and the map the table's slots, which a
 * program's many code objects rarely have in the cache. Clobbers rax, rdx, rsi, r8, r9, r11.
 */
.Lslot:
	/* 3.12+: a version below STAGE_VERSIONS (and not 0) has a bit of its own */
	mov b_version_off(%rip), %eax
	test %eax, %eax
	jz .Lslot_table
	mov (%rcx,%rax), %eax		/* co_version */
	lea -1(%rax), %edx
	cmp $(STAGE_VERSIONS - 1), %edx
	jae .Lslot_table
	mov %eax, %edx
	shr $3, %edx
	and $7, %eax
	movzbl STAGE_VMAP(%r10,%rdx), %r8d
	bts %eax, %r8d
	jc 1f
	mov %r8b, STAGE_VMAP(%r10,%rdx)
	test %r10, %r10			/* ZF clear: not sent yet */
	ret
1:	xor %eax, %eax			/* ZF set */
	ret
.Lslot_table:
	mov %rcx, %r11
	shr $4, %r11
	mov %rcx, %rax
	shr $18, %rax
	xor %rax, %r11
	and $(STAGE_SLOTS / STAGE_WAYS - 1), %r11d
	shl $(6 + STAGE_WAYS_LOG2), %r11
	lea STAGE_TABLE(%r10,%r11), %r11
	/* r11: the way of its set that holds the address, else an empty one, else one picked at
	 * random (the TSC's low bits: a miss is a flush, hundreds of cycles apart). Not in turn:
	 * a loop over one code object more than a set holds would evict the next one it calls,
	 * every call */
	ways_holding %rcx
	xor %eax, %eax
	ways_holding %rax
	rdtsc
	shr $4, %eax
	and $(STAGE_WAYS - 1), %eax
	shl $6, %eax
	add %rax, %r11
	jmp 2f
4:	add $STAGE_SLOT, %r11
3:	add $STAGE_SLOT, %r11
1:	add $STAGE_SLOT, %r11
2:	mov b_version_off(%rip), %eax
	test %eax, %eax
	jz .Lslot_names
	mov (%rcx,%rax), %eax		/* co_version */
	test %eax, %eax
	jz .Lslot_names
	mov b_line_off(%rip), %r8d
	mov (%rcx,%r8), %r8d
	shl $32, %r8
	or %rax, %r8
	bts $63, %r8
	cmp (%r11), %rcx
	jne 5f
	cmp 8(%r11), %r8
	jne 5f
	ret
5:	mov %rcx, (%r11)
	mov %r8, 8(%r11)
	test %r11, %r11
	ret
.Lslot_names:
	cmp (%r11), %rcx
	jne .Lfill
	mov b_name_off(%rip), %eax
	mov (%rcx,%rax), %r8
	cmp 8(%r11), %r8
	jne .Lfill
	mov b_hash_off(%rip), %eax
	mov (%r8,%rax), %r9
	cmp 16(%r11), %r9
	jne .Lfill
	mov b_file_off(%rip), %eax
	mov (%rcx,%rax), %rsi
	cmp 24(%r11), %rsi
	jne .Lfill
	call .Lfile_fields
	cmp 32(%r11), %rdx
	jne .Lfill
	cmp 44(%r11), %r9d
	jne .Lfill
	cmp 48(%r11), %r8
	jne .Lfill
	cmp 56(%r11), %rax
	jne .Lfill
	mov b_line_off(%rip), %eax
	mov (%rcx,%rax), %eax
	cmp 40(%r11), %eax
	jne .Lfill
	ret
.Lfill:
	mov %rcx, (%r11)
	mov b_name_off(%rip), %eax
	mov (%rcx,%rax), %r8
	mov %r8, 8(%r11)
	mov b_hash_off(%rip), %eax
	mov (%r8,%rax), %r9
	mov %r9, 16(%r11)
	mov b_file_off(%rip), %eax
	mov (%rcx,%rax), %rsi
	mov %rsi, 24(%r11)
	call .Lfile_fields
	mov %rdx, 32(%r11)
	mov %r9d, 44(%r11)
	mov %r8, 48(%r11)
	mov %rax, 56(%r11)
	mov b_line_off(%rip), %eax
	mov (%rcx,%rax), %eax
	mov %eax, 40(%r11)
	test %r11, %r11
	ret

/* rsi: a str. Out: r9 its length, rdx its last 8 bytes, r8 its first 8 (or the last again if
 * it is shorter), rax its hash. */
.Lfile_fields:
	mov b_len_off(%rip), %eax
	mov (%rsi,%rax), %r9
	mov b_data_off(%rip), %eax
	add %rsi, %rax
	mov -8(%rax,%r9), %rdx
	mov %rdx, %r8
	cmp $8, %r9
	jb 1f
	mov (%rax), %r8
1:	mov b_hash_off(%rip), %eax
	mov (%rsi,%rax), %rax
	ret

/* rcx: a code object of the chain; its identity is sent now if the table does not have it. */
.Lchain_code:
	call .Lslot
	je 1f
	push %r12
	push %rbx
	push %r13
	mov %rcx, %r12
	xor %ebx, %ebx
	mov $STAGE_FLUSH_CODE, %r13d
	call .Lflush
	pop %r13
	pop %rbx
	pop %r12
1:	ret

/* After a record (rax: its TSC, rcx: bytes staged): flushes a full or an old batch. */
.Lafter:
	xor %r13d, %r13d
	cmp $STAGE_LIMIT, %rcx
	jbe 1f
	or $STAGE_FLUSH_FULL, %r13d
1:	sub STAGE_FIRST(%r10), %rax
	cmp STAGE_BOUND(%r10), %rax
	jb 2f
	or $STAGE_FLUSH_TIME, %r13d
2:	test %r13d, %r13d
	jnz .Lflush
	ret

/*
 * Hands the staged records to the BPF program on the flush nop (r10: the stage, r13d: why,
 * r12: a code object to send, rbx: its frame, r9: the thread state with STAGE_FLUSH_TSTATE),
 * then starts a batch owned by this thread: W to 0 first, then the generation (a thread held
 * or ended between the two still shows the batch copied, as before the first: stage.h), and,
 * if the batch changes hands, no STAGE_TOP (it was the other thread's), and after a code
 * flush a pause record of its time, then a gauge record (stage.h). A flush of the same
 * owner keeps it: forgotten there, the value each call puts back would be 0 until the frame
 * that runs returns, and each call of a loop that outlives a flush would stage a chain
 * (every resumption of sum(gen()) after the first, whose code flush came in between). If
 * the nop is no longer probed, nobody consumes (pyuprof is gone): staging stops. Clobbers
 * rax, rcx, rdx, rsi, rdi, r8.
 */
.Lflush:
	xor %eax, %eax
	test $(STAGE_FLUSH_CODE | STAGE_FLUSH_CFUNC), %r13d
	jz 3f
	rdtsc
	shl $32, %rdx
	or %rdx, %rax
3:	push %rax			/* a code flush's start (TSC), else 0 */
	mov %r10, %rdi
	mov STAGE_W(%r10), %rsi
	mov %r13, %rdx
	mov %r12, %rcx
	mov %rbx, %r8
	mov STAGE_GEN(%r10), %rax
	call tramp_flush
	movq $0, STAGE_W(%r10)
	incq STAGE_GEN(%r10)
	test $STAGE_FLUSH_SWITCH, %r13d
	jz 2f
	movq $0, STAGE_TOP(%r10)
2:	thread_key
	mov %eax, STAGE_OWNER(%r10)
	rdtsc
	shl $32, %rdx
	or %rdx, %rax
	mov %rax, STAGE_FIRST(%r10)
	/* a code flush's time opens the new batch (a pause record): it comes at a code object's
	 * first call, or its first since another took its slot, and the compensation, which
	 * spreads the other flushes' cost over every call, takes it out where it was spent */
	pop %rcx
	test %rcx, %rcx
	jz 4f
	mov $STAGE_TAG_PAUSE, %edx
	shl $STAGE_TAG_SHIFT, %rdx
	or %rdx, %rcx
	mov %rcx, STAGE_BUF(%r10)
	mov %rax, STAGE_BUF + 8(%r10)
	movq $STAGE_PAUSE_BYTES, STAGE_W(%r10) /* (the record is whole before it counts) */
	/* the speed gauge (stage.h): a fixed loop timed here, on the CPU the batch's calls run
	 * on, at their moment */
4:	rdtsc
	shl $32, %rdx
	or %rdx, %rax
	mov %rax, %rsi
	mov $STAGE_GAUGE_ITERS, %ecx
5:	dec %ecx
	jnz 5b
	rdtsc
	shl $32, %rdx
	or %rdx, %rax
	sub %rsi, %rax			/* its ticks */
	mov $STAGE_TAG_GAUGE, %edx
	shl $STAGE_TAG_SHIFT, %rdx
	or %rdx, %rsi
	mov STAGE_W(%r10), %rcx
	lea STAGE_BUF(%r10,%rcx), %rdi
	mov %rsi, (%rdi)
	mov %rax, 8(%rdi)
	add $STAGE_GAUGE_BYTES, %rcx
	mov %rcx, STAGE_W(%r10)		/* (the record is whole before it counts) */
	cmpb $0x0f, tramp_flush(%rip)
	jne 1f
	movl $0, STAGE_ON(%r10)
1:	ret

/*
 * <= 3.11: C functions through a profile function of the page's (include/cfuncs.h), one per
 * thread: CPython's c_profilefunc slot, which the page takes at the thread's first call it
 * stages if the slot is empty and which the function gives back itself (slot NULL) at the
 * first event it gets while pyuprof does not record C functions, whatever ended the recording.
 * A program's own profile function (sys.setprofile, cProfile) replaces it and sees what it
 * would natively; the page takes the slot again only once it is empty.
 */
/* In the batch path (r10: the stage, the thread owning the batch; 48(%rsp): the hook's first
 * argument): takes the thread's profile slot if it is empty. Then, or while the program's own
 * profile function holds it, it stages a sync: the C calls open in the thread's records
 * returned to another profile function, unseen. Uses rax, rcx, rdx. */
.Lcf_take:
	cmpl $0, STAGE_CFUNCS(%r10)
	je 9f
	mov 48(%rsp), %rax		/* 3.9+: the thread state */
	cmpl $0, b_frame_arg(%rip)
	jne 1f
	mov b_tstate_cur(%rip), %rax	/* 3.8: the GIL holder's */
	mov (%rax), %rax
1:	test %rax, %rax
	jz 9f
	mov b_pfunc_off(%rip), %ecx
	lea tramp_cprof(%rip), %rdx
	cmp %rdx, (%rax,%rcx)
	je 9f				/* ours */
	cmpq $0, (%rax,%rcx)
	jne 3f				/* the program's own: C calls go to it */
	mov %rdx, (%rax,%rcx)
	/* tracing on, as _PyEval_SetProfile does: 3.8, 3.9 in the thread state; 3.10, 3.11 in
	 * the running activation's frame of C (an activation copies its caller's, and gives its
	 * own back to it when it returns) */
	mov b_use_off(%rip), %ecx
	mov b_use_mode(%rip), %edx
	cmp $1, %edx
	jne 2f
	movl $1, (%rax,%rcx)
	jmp 3f
2:	mov (%rax,%rcx), %rax
	test %rax, %rax
	jz 3f
	cmp $2, %edx
	jne 4f
	movl $1, (%rax)
	jmp 3f
4:	movb $255, (%rax)
3:	mov STAGE_W(%r10), %rcx
	rdtsc
	shl $32, %rdx
	or %rdx, %rax
	mov $STAGE_TAG_CSYNC, %edx
	shl $STAGE_TAG_SHIFT, %rdx
	or %rdx, %rax
	mov %rax, STAGE_BUF(%r10,%rcx)
	add $STAGE_CSYNC_BYTES, %rcx
	mov %rcx, STAGE_W(%r10)
9:	ret

/* int f(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg): 0, always */
	.globl tramp_cprof
tramp_cprof:
	mov b_stage(%rip), %r10
	cmpq $0, STAGE_CF_PEND_TSTATE(%r10)
	jne .Lcp_pend
.Lcp_go:
	cmpl $STAGE_ON_STAGING, STAGE_ON(%r10)	/* (not staging, or per call) */
	jne .Lcp_drop
	cmpl $0, STAGE_CFUNCS(%r10)
	je .Lcp_drop
	cmp $CF_PYTRACE_C_CALL, %edx
	je .Lcp_call
	cmp $CF_PYTRACE_C_EXCEPTION, %edx
	je .Lcp_ret
	cmp $CF_PYTRACE_C_RETURN, %edx
	je .Lcp_ret
	xor %eax, %eax
	ret
.Lcp_pend:	/* the return of a call that changed the thread's slot (.Lcf_wrap): what it put
		 * there goes back in now, past its event, as natively */
	cmp $CF_PYTRACE_C_CALL, %edx
	je .Lcp_go
	mov b_tstate_cur(%rip), %rax
	mov (%rax), %rax
	cmp STAGE_CF_PEND_TSTATE(%r10), %rax
	jne .Lcp_go
	mov b_pfunc_off(%rip), %r8d
	mov STAGE_CF_PEND_FUNC(%r10), %r9
	mov %r9, (%rax,%r8)
	mov b_pobj_off(%rip), %r8d
	mov STAGE_CF_PEND_OBJ(%r10), %r9
	mov %r9, (%rax,%r8)
	movq $0, STAGE_CF_PEND_TSTATE(%r10)
	jmp .Lcp_go
.Lcp_drop:	/* not recording C functions: the slot back to NULL (CPython sets its tracing
		 * flag from the slots once this returns) */
	mov b_tstate_cur(%rip), %rax
	mov (%rax), %rax
	test %rax, %rax
	jz 1f
	mov b_pfunc_off(%rip), %ecx
	lea tramp_cprof(%rip), %rdx
	cmp %rdx, (%rax,%rcx)
	jne 1f
	movq $0, (%rax,%rcx)
1:	xor %eax, %eax
	ret
.Lcp_call:	/* arg: a PyCFunction (CPython binds a method descriptor for the event) */
	push %rbx
	push %r12
	push %r13
	mov %rcx, %r12			/* the callable: its identity, if sent now */
	mov CF_M_SELF(%rcx), %rbx		/* the object it is bound to */
	mov b_fframe_off(%rip), %eax	/* the calling frame, as the hook sees frames */
	test %eax, %eax
	jz 1f
	mov (%rsi,%rax), %rsi
1:	push %rsi
	mov %rsi, %rdx
	mov %r12, %rdi
	mov %rbx, %rsi
	call .Lcf_units
	pop %rsi
	push %rax			/* CF_SWAP_UNIT or 0 */
	push %rax
	mov CF_M_ML(%r12), %r9		/* its PyMethodDef: the key */
	push $0
	push %rsi
	push %r9
	call .Lcf_stage_call
	add $16, %rsp
	pop %rax
	pop %rdx
	pop %rdx
	test $CF_RISKY_STARTS, %eax
	jz 3f
	or $CF_SWAP_STARTS, %edx
3:	test %edx, %edx
	jz 2f
	mov %r12, %rdi
	call .Lcf_swap
2:	pop %r13
	pop %r12
	pop %rbx
	xor %eax, %eax
	ret
.Lcp_ret:
	push %rbx
	push %r12
	push %r13
	mov b_fframe_off(%rip), %eax	/* the calling frame, as the hook sees frames */
	test %eax, %eax
	jz 1f
	mov (%rsi,%rax), %rsi
1:	push %rsi
	call .Lcf_stage_ret
	add $8, %rsp
	pop %r13
	pop %r12
	pop %rbx
	xor %eax, %eax
	ret

/* A C call's record (r10: the stage, r12: the callable, rbx: the object it is called on;
 * 8(%rsp): its key, 16(%rsp): the calling frame or 0), after a flush if another thread owns
 * the batch or its identity is to be sent; 24(%rsp) is set to what .Lcf_risky says of the
 * function (CF_RISKY_*). Clobbers rax, rcx, rdx, rsi, rdi, r8, r9, r11, r13. */
.Lcf_stage_call:
	xor %r13d, %r13d
	thread_key
	cmp STAGE_OWNER(%r10), %eax
	je 1f
	or $STAGE_FLUSH_SWITCH, %r13d
1:	mov 8(%rsp), %rcx
	mov %rcx, %rax
	shr $4, %rax
	mov %rcx, %rdx
	shr $17, %rdx
	xor %rdx, %rax
	and $(STAGE_CSLOTS - 1), %eax
	lea STAGE_CTABLE(%r10,%rax,8), %rsi
	/* the table's word: the key (8-aligned), CF_RISKY_* in its low bits */
	mov (%rsi), %rax
	mov %eax, %edx
	and $(CF_RISKY_STARTS | CF_RISKY_READS), %edx
	mov %edx, 24(%rsp)
	and $-8, %rax
	cmp %rax, %rcx
	je 2f
	call .Lcf_risky
	mov %eax, 24(%rsp)
	or %rcx, %rax
	mov %rax, (%rsi)
	mov %rcx, %r9			/* (the key, for the flush) */
	or $STAGE_FLUSH_CFUNC, %r13d
2:	test %r13d, %r13d
	jz 3f
	call .Lflush
3:	mov STAGE_W(%r10), %rcx
	lea STAGE_BUF(%r10,%rcx), %r11
	mov 8(%rsp), %rax
	mov %rax, 8(%r11)
	mov 16(%rsp), %rax
	mov %rax, 16(%r11)
	rdtsc
	shl $32, %rdx
	or %rdx, %rax
	mov $STAGE_TAG_CCALL, %edx
	shl $STAGE_TAG_SHIFT, %rdx
	or %rax, %rdx
	mov %rdx, (%r11)
	add $STAGE_CCALL_BYTES, %rcx
	mov %rcx, STAGE_W(%r10)
	jmp .Lafter

/*
 * The call of a C function .Lcf_risky names or .Lcf_units picks, about to be made: its
 * callable (rdi: a PyCFunction or a method descriptor, whose vectorcall is at the same place)
 * calls .Lcf_wrap instead, for this call alone (stage.h: STAGE_CF_SWAPS; rdx: what the wrap
 * does, CF_SWAP_*, which the ring's entry keeps in the low bits of the callable). A callable
 * called through tp_call (no vectorcall) is left as it is. r10: the stage. Clobbers rax, rcx,
 * rdx.
 */
.Lcf_swap:
	test $CF_SWAP_INIT, %edx
	jnz 2f
	mov CF_M_VECTORCALL(%rdi), %rax
	test %rax, %rax
	jz 1f
	call .Lcf_ring
	lea tramp_cf_wrap(%rip), %rax
	mov %rax, CF_M_VECTORCALL(%rdi)
1:	ret
2:	/* a class (CF_SWAP_INIT): its tp_vectorcall, NULL where it is called through tp_call */
	mov CF_TP_VECTORCALL(%rdi), %rax
	call .Lcf_ring
	lea tramp_cf_wrap(%rip), %rax
	mov %rax, CF_TP_VECTORCALL(%rdi)
	ret
/* The ring's next entry: the callable rdi with the flags rdx in its low bits, its own
 * vectorcall rax; none if rax is the wrap already (a swap whose call has not come: its own
 * vectorcall is in the ring's entry before). Returns to .Lcf_swap's caller then. */
.Lcf_ring:
	lea tramp_cf_wrap(%rip), %rcx
	cmp %rcx, %rax
	jne 1f
	add $8, %rsp
	ret
1:	or %rdi, %rdx
	mov STAGE_CF_SWAP(%r10), %ecx
	incl STAGE_CF_SWAP(%r10)
	and $(STAGE_CF_NSWAPS - 1), %ecx
	shl $4, %ecx
	mov %rdx, STAGE_CF_SWAPS(%r10,%rcx)
	mov %rax, STAGE_CF_SWAPS + 8(%r10,%rcx)
	ret

/*
 * The vectorcall of a callable .Lcf_swap wrapped (rdi, rsi, rdx, rcx as CPython passes them):
 * the callable gets its own back and is called; a call of CF_SWAP_UNIT with the unit of
 * recursion budget its generic path takes given back for its length (.Lcf_units); then, if
 * the call started a profiler (CF_SWAP_STARTS), the return event it is about to get is kept
 * from it (stage.h); a call that reads the interpreter's table of events (CF_SWAP_READS,
 * 3.12+: sys.monitoring.get_events, _all_events) is made with the page's CALL event out of
 * the table, put back after (the code stays instrumented for it: only the table is read).
 * Returns the call's result.
 */
	.globl tramp_cf_wrap
tramp_cf_wrap:
	push %rbx
	push %r12
	push %r13
	sub $32, %rsp			/* (%rsp): the thread state given a unit, or 0 */
	movq $0, (%rsp)
	mov b_stage(%rip), %r10
	/* its own vectorcall: in the ring, the latest swap of it */
	mov STAGE_CF_SWAP(%r10), %eax
	mov $STAGE_CF_NSWAPS, %r8d
1:	dec %eax
	mov %eax, %r9d
	and $(STAGE_CF_NSWAPS - 1), %r9d
	shl $4, %r9d
	mov STAGE_CF_SWAPS(%r10,%r9), %r12
	mov %r12, %r11
	and $-16, %r11
	cmp %r11, %rdi
	je 2f
	dec %r8d
	jnz 1b
	xor %eax, %eax			/* (never: each swap is undone by the call it was made for) */
	jmp 6f
2:	movq $0, STAGE_CF_SWAPS(%r10,%r9)
	mov STAGE_CF_SWAPS + 8(%r10,%r9), %rax
	test $CF_SWAP_INIT, %r12d
	jnz 8f
	mov %rax, CF_M_VECTORCALL(%rdi)
	jmp 9f
8:	mov %rax, CF_TP_VECTORCALL(%rdi)
	test %rax, %rax
	jnz 9f
	mov tramp_cf_page + CF_PAGE_VECTORCALL(%rip), %rax	/* (through tp_call) */
9:	test $(CF_SWAP_UNIT | CF_SWAP_INIT), %r12d
	jz 5f
	push %rax
	push %rcx
	call .Lcf_tstate
	mov %rax, %r11
	pop %rcx
	pop %rax
	test %r11, %r11
	jz 5f
	mov %r11, (%rsp)
	/* the units: a C function's one (CF_SWAP_UNIT); a class call's (CF_SWAP_INIT) shim unit of
	 * the Python budget taken, and with CF_SWAP_UNIT the C units of _PyObject_MakeTpCall and
	 * of its __init__'s activation given back */
	movq $0, 8(%rsp)		/* the C units given (8), the Python one taken (12) */
	movq $0, 16(%rsp)		/* the data stack's words taken */
	test $CF_SWAP_INIT, %r12d
	jz 4f
	push %rax
	push %rcx
	push %rdx
	push %rsi
	push %rdi
	sub $8, %rsp
	call .Lcfw_shim
	add $8, %rsp
	pop %rdi
	pop %rsi
	pop %rdx
	pop %rcx
	mov %rax, %r8
	pop %rax
	mov (%rsp), %r11
	test %r8, %r8
	jz 5f				/* no room: CPython calls it generic, as here */
	mov %r8, 16(%rsp)
4:	test $CF_SWAP_UNIT, %r12d
	jz 7f
	movl $1, 8(%rsp)
	test $CF_SWAP_INIT, %r12d
	jz 7f
	mov p_units(%rip), %r8d
	add %r8d, 8(%rsp)
7:	mov 8(%rsp), %r8d
	mov b_unit_off(%rip), %r9d
	add %r8d, (%r11,%r9)
	test $CF_SWAP_INIT, %r12d
	jz 5f
	movl $1, 12(%rsp)
	mov p_remaining_off(%rip), %r9d
	decl (%r11,%r9)
5:	test $CF_SWAP_READS, %r12d
	jnz .Lcfw_reads
	call *%rax
	mov %rax, %rbx
	call .Lcfw_unit_back
	mov b_stage(%rip), %r10
	test $CF_SWAP_STARTS, %r12d
	jz 3f
	cmpl $CF_PROFILE, b_cf_mode(%rip)
	jne 4f
	/* <= 3.11: the slot holds what the call put there, if it is not the page's function: the
	 * page's again until the return event, which it then gives back (.Lcp_pend) */
	mov b_tstate_cur(%rip), %rax
	mov (%rax), %rax
	test %rax, %rax
	jz 3f
	mov b_pfunc_off(%rip), %ecx
	lea tramp_cprof(%rip), %rdx
	mov (%rax,%rcx), %r8
	cmp %rdx, %r8
	je 3f
	mov %r8, STAGE_CF_PEND_FUNC(%r10)
	mov %rdx, (%rax,%rcx)
	mov b_pobj_off(%rip), %ecx
	mov (%rax,%rcx), %r8
	mov %r8, STAGE_CF_PEND_OBJ(%r10)
	movq $0, (%rax,%rcx)
	mov %rax, STAGE_CF_PEND_TSTATE(%r10)
3:	mov %rbx, %rax
6:	add $32, %rsp
	pop %r13
	pop %r12
	pop %rbx
	ret
/* The units given back at the wrap's call taken again, the one taken given back, the shim's
 * words given back to the data stack (8(%rsp): the thread state, or 0; 16(%rsp): the C units,
 * 20(%rsp): the Python one; 24(%rsp): the words). Uses r8, r9, r11. */
.Lcfw_unit_back:
	mov 8(%rsp), %r11
	test %r11, %r11
	jz 1f
	mov 16(%rsp), %r8d
	mov b_unit_off(%rip), %r9d
	sub %r8d, (%r11,%r9)
	mov 20(%rsp), %r8d
	mov p_remaining_off(%rip), %r9d
	add %r8d, (%r11,%r9)
	mov 24(%rsp), %r8
	shl $3, %r8
	mov b_ds_top_off(%rip), %r9d
	sub %r8, (%r11,%r9)
1:	ret

/*
 * 3.13, a class call of CF_SWAP_INIT about to be made (rdi: the class, r11: the thread state):
 * the words of CPython's shim frame (_Py_InitCleanup) taken on the thread's data stack where
 * CPython's CALL_ALLOC_AND_ENTER_INIT would push it, so that the __init__'s frame lands where it
 * does natively: if the shim and the frame fit in the data stack's chunk (the instruction's
 * guard, _PyThreadState_HasStackSpace); else CPython calls it generic, as here. rax: the words
 * taken, or 0. Called with the stack aligned; clobbers the caller-saved registers.
 */
.Lcfw_shim:
	push %rbx
	push %r12
	push %r13
	mov %rdi, %r12
	mov %r11, %r13
	mov b_stage(%rip), %r10
	mov STAGE_CF_INIT_NAME(%r10), %rsi
	xor %eax, %eax
	test %rsi, %rsi
	jz 9f
	call *b_type_lookup(%rip)	/* (borrowed; sets no exception) */
	test %rax, %rax
	jz 9f
	mov 8(%rax), %rcx
	cmp b_function_type(%rip), %rcx
	jne 8f
	mov CF_FUNC_CODE(%rax), %rax
	movslq CF_CO_FRAMESIZE(%rax), %rax
	add b_shim_words(%rip), %rax	/* the words both take */
	mov b_ds_top_off(%rip), %ecx
	mov (%r13,%rcx), %rdx		/* datastack_top */
	test %rdx, %rdx
	jz 8f
	mov b_ds_limit_off(%rip), %ecx
	mov (%r13,%rcx), %rcx		/* datastack_limit */
	sub %rdx, %rcx
	sar $3, %rcx
	cmp %rcx, %rax
	jge 8f
	mov b_shim_words(%rip), %rax
	lea (%rdx,%rax,8), %rdx
	mov b_ds_top_off(%rip), %ecx
	mov %rdx, (%r13,%rcx)
	jmp 9f
8:	xor %eax, %eax
9:	pop %r13
	pop %r12
	pop %rbx
	ret
.Lcfw_reads:	/* the page's CALL event (its tool's bit) out of the table for the call (rdi, rsi,
		 * rdx, rcx: the call's arguments) */
	xor %r12d, %r12d
	mov tramp_cf_page + CF_PAGE_INTERP(%rip), %r13
	mov tramp_cf_page + CF_PAGE_MONITORS(%rip), %r8d
	lea CF_EV_CALL(%r13,%r8), %r13
	mov STAGE_CF_TOOL(%r10), %r8d
	dec %r8d
	cmp $CF_TOOLS, %r8d
	jae 7f				/* (no tool held) */
	movzbl (%r13), %r9d
	btr %r8d, %r9d
	jnc 7f
	mov %r9b, (%r13)
	lea 1(%r8), %r12d		/* its bit + 1: to be put back */
7:	call *%rax
	mov %rax, %rbx
	call .Lcfw_unit_back
	test %r12d, %r12d
	jz 3b
	lea -1(%r12), %ecx
	movzbl (%r13), %edx
	bts %ecx, %edx
	mov %dl, (%r13)
	jmp 3b
4:	/* 3.12+: no other tool saw the call begin: none gets its return */
	cmpl $0, STAGE_CF_OTHERS(%r10)
	jne 3b
	lea tramp_cf_page(%rip), %rdi
	mov $CF_OP_MUTE, %esi
	xor %edx, %edx
	mov %r10, %rcx
	call tramp_cf_blob + CF_BLOB_ENTRY
	jmp 3b

/*
 * Whether CPython would run the C call about to be made without taking a unit of its recursion
 * budget, as it does natively: calls that it specialises (Python/specialize.c) into
 * instructions that call the C function directly, where the generic path that watching C
 * calls forces on them (the page's events) takes one (cfunction_vectorcall_*,
 * method_vectorcall_*: _Py_EnterRecursiveCallTstate). CF_SWAP_UNIT in eax, which .Lcf_wrap
 * gives back around the call; else 0. Those are: a PyCFunction (not a PyCMethod) of
 * METH_FASTCALL, or of METH_FASTCALL | METH_KEYWORDS (3.13: called without keywords, CALL_KW
 * is not specialised); builtins.len; a method descriptor of those flags called on an object of
 * its own type exactly and without keywords (the instructions' guards). The instructions that
 * call METH_O and METH_NOARGS functions check as the generic path does: nothing then. And only
 * once CPython would have specialised the call site (.Lcf_warm). rdi: the callable (<= 3.11:
 * a method descriptor's call is bound, its object in m_self; 3.12+: a PyCFunction or the
 * descriptor), rsi: 3.12+ the descriptor's object, rdx: the calling frame. Clobbers rax, rcx,
 * rdx, rsi, r8, r9.
 */
.Lcf_units:
	cmpl $0, b_unit_off(%rip)
	je 9f
	test %rdx, %rdx
	jz 9f
	mov b_ip_off(%rip), %ecx	/* the call's instruction */
	mov (%rdx,%rcx), %r9
	test %r9, %r9
	jz 9f
	/* a CALL (not CALL_FUNCTION_EX, never specialised, nor one of another tool's
	 * instrumentation): 3.11 CALL and its quickened forms, 3.12+ INSTRUMENTED_CALL */
	movzbl (%r9), %ecx
	cmpl $1, b_warm_mode(%rip)
	jne 1f
	cmp $171, %ecx
	je 2f
	sub $22, %ecx			/* CALL_ADAPTIVE, CALL_PY_EXACT_ARGS, _WITH_DEFAULTS */
	cmp $2, %ecx
	ja 9f
	jmp 2f
1:	cmp b_call_op(%rip), %ecx
	jne 9f
2:
	movslq b_kw_at(%rip), %rcx
	movzbl (%r9,%rcx), %ecx		/* the opcode that says the call has keywords */
	xor %edx, %edx
	cmp b_kw_op(%rip), %ecx
	sete %dl			/* edx: 1 if it has */
	mov 8(%rdi), %rcx
	cmp b_cfunction_type(%rip), %rcx
	je 1f
	cmp b_methoddescr_type(%rip), %rcx
	jne 9f
	mov CF_D_METHOD(%rdi), %r8
	mov CF_ML_FLAGS(%r8), %ecx
	cmp $CF_METH_FASTCALL, %ecx
	je 2f
	cmp $(CF_METH_FASTCALL | CF_METH_KEYWORDS), %ecx
	jne 9f
	test %edx, %edx
	jnz 9f
2:	cmp b_missing(%rip), %rsi
	je 9f
	mov 8(%rsi), %rcx
	cmp CF_D_TYPE(%rdi), %rcx
	jne 9f
	jmp .Lcf_warm
1:	mov CF_M_ML(%rdi), %r8
	mov CF_ML_FLAGS(%r8), %ecx
	cmp $CF_METH_O, %ecx
	je 5f
	cmp $CF_METH_FASTCALL, %ecx
	je 3f
	cmp $(CF_METH_FASTCALL | CF_METH_KEYWORDS), %ecx
	jne 9f
	/* with keywords: a builtin's call is specialised on 3.11, 3.12 (not 3.13's CALL_KW); a
	 * bound method descriptor's (<= 3.11) not */
	test %edx, %edx
	jz 3f
	testl $CF_UNIT_KW_BUILTIN, b_unit_flags(%rip)
	jnz 9f
	cmpl $CF_PROFILE, b_cf_mode(%rip)
	jne .Lcf_warm
	mov CF_M_SELF(%rdi), %rsi
	test %rsi, %rsi
	jz .Lcf_warm
	mov 8(%rsi), %rsi
	cmp b_module_type(%rip), %rsi
	je .Lcf_warm
	jmp 9f
3:	/* <= 3.11: a method descriptor's call comes bound: the method must be one of its
	 * object's type's own (the instruction's guard), a module's function is not one */
	cmpl $CF_PROFILE, b_cf_mode(%rip)
	jne .Lcf_warm
	mov CF_M_SELF(%rdi), %rsi
	test %rsi, %rsi
	jz .Lcf_warm
	mov 8(%rsi), %rsi
	cmp b_module_type(%rip), %rsi
	je .Lcf_warm
	mov CF_TP_METHODS(%rsi), %rsi
	test %rsi, %rsi
	jz 9f
4:	cmpq $0, CF_ML_NAME(%rsi)
	je 9f
	cmp %rsi, %r8
	je .Lcf_warm
	add $CF_ML_SIZE, %rsi
	jmp 4b
5:	/* len(): "len" of the module named "builtins" */
	mov CF_ML_NAME(%r8), %rcx
	cmpl $0x006e656c, (%rcx)
	jne 9f
	mov CF_M_SELF(%rdi), %rsi
	test %rsi, %rsi
	jz 9f
	mov 8(%rsi), %rsi
	cmp b_module_type(%rip), %rsi
	jne 9f
	mov CF_M_MODULE(%rdi), %rsi
	test %rsi, %rsi
	jz 9f
	mov 8(%rsi), %rcx
	cmp b_unicode_type(%rip), %rcx
	jne 9f
	mov b_len_off(%rip), %ecx
	cmpq $8, (%rsi,%rcx)
	jne 9f
	mov b_data_off(%rip), %ecx
	movabs $0x736e69746c697562, %rax	/* "builtins" */
	cmp %rax, (%rsi,%rcx)
	jne 9f
.Lcf_warm:
	call .Lcf_counter
	test %eax, %eax
	jz 9f
	call .Lcf_room
	test %eax, %eax
	jz 9f
	mov $CF_SWAP_UNIT, %eax
	ret
9:	xor %eax, %eax
	ret

/*
 * 1 in eax if CPython would run the call site r9 (its instruction) specialised now, else 0. A
 * site is specialised only when its adaptive counter has run down, and meanwhile called
 * generic: 3.12, 3.13 at its second run (the counter of the CALL's cache: 17, then 1; 832 once
 * specialised, before the page's events came), 3.11 once its code is quickened (PRECALL until
 * then, PRECALL_ADAPTIVE after, with its counter) and the counter has run down. The events
 * keep CPython from counting (3.12+: INSTRUMENTED_CALL adds back what CALL takes off; 3.11
 * runs the generic PRECALL while tracing): the page counts down for it, as CPython would
 * natively, where it would give a unit back. Clobbers rcx, r9.
 */
.Lcf_counter:
	cmpl $1, b_warm_mode(%rip)
	jne 1f
	cmpb $144, -2(%r9)		/* 3.11: EXTENDED_ARG, EXTENDED_ARG_QUICK: not PRECALL's */
	je 9f				/* cache before the CALL */
	cmpb $34, -2(%r9)
	je 9f
	movzbl -4(%r9), %ecx
	cmp $166, %ecx			/* PRECALL: not quickened */
	je 9f
	cmp $64, %ecx			/* PRECALL_ADAPTIVE; any other: specialised */
	jne 6f
	sub $2, %r9
	jmp 2f
1:	add $2, %r9
	cmpw $832, (%r9)		/* ADAPTIVE_COOLDOWN: specialised */
	je 6f
2:	movzwl (%r9), %ecx
	cmp $16, %ecx
	jb 6f
	sub $16, %ecx
	mov %cx, (%r9)
9:	xor %eax, %eax
	ret
6:	mov $1, %eax
	ret

/* 1 in eax if a unit of C budget may be given back: 3.12+, on a stack whose bounds are not
 * known, not past the hand-back's depth bound (budget_walk), where the budget is what
 * protects the C stack. Clobbers rcx, r8. */
.Lcf_room:
	cmpl $CF_PROFILE, b_cf_mode(%rip)
	je 7f
	stack_room 7f
	cmp $-1, %rax
	jne 7f
	call .Lcf_tstate
	test %rax, %rax
	jz 9f
	mov p_limit_off(%rip), %ecx
	mov (%rax,%rcx), %r8d
	mov p_remaining_off(%rip), %ecx
	sub (%rax,%rcx), %r8d
	cmp p_depth_cap(%rip), %r8d
	jae 9f
7:	mov $1, %eax
	ret
9:	xor %eax, %eax
	ret

/*
 * 3.13: a class call CPython runs inline natively (CALL_ALLOC_AND_ENTER_INIT: a shim frame and
 * the frame of its __init__, two units of the Python budget, none of the C budget) and through
 * C under the page's events (type_call, slot_tp_init: a unit of the C budget in
 * _PyObject_MakeTpCall, an activation of the eval function, one unit of the Python budget).
 * CF_SWAP_INIT in eax (with CF_SWAP_UNIT where the C units may be given back, .Lcf_room),
 * which .Lcf_wrap takes the shim's Python unit for and gives the C units back for, around the
 * call; else 0. CPython's rules (specialize.c: specialize_class_call,
 * get_init_for_simple_managed_python_class; the instruction's guards): a CALL without
 * keywords of a class whose type is type itself, mutable, a heap type with inline values,
 * object's tp_new and tp_alloc, whose __init__ (_PyType_Lookup) is a Python function of simple
 * arguments (no *args, **kwargs or keyword-only ones; optimised) taking the call's arguments
 * and the object; and a site CPython would have specialised (.Lcf_counter). rdi: the class,
 * rdx: the calling frame, r10: the stage. Uses rbx, r12, r13 (the caller's to save); clobbers
 * the caller-saved registers.
 */
.Lcf_init:
	test %rdx, %rdx
	jz 9f
	mov %rdi, %r12
	mov b_ip_off(%rip), %ecx
	mov (%rdx,%rcx), %r13		/* the call's instruction */
	test %r13, %r13
	jz 9f
	movzbl (%r13), %ecx
	cmp b_call_op(%rip), %ecx
	jne 9f
	mov CF_TP_FLAGS(%r12), %rcx
	and $(CF_TPFLAGS_IMMUTABLE | CF_TPFLAGS_HEAP | CF_TPFLAGS_INLINE_VALUES), %ecx
	cmp $(CF_TPFLAGS_HEAP | CF_TPFLAGS_INLINE_VALUES), %ecx
	jne 9f
	mov b_object_type(%rip), %rax
	mov CF_TP_NEW(%rax), %rcx
	cmp CF_TP_NEW(%r12), %rcx
	jne 9f
	mov CF_TP_ALLOC(%rax), %rcx
	cmp CF_TP_ALLOC(%r12), %rcx
	jne 9f
	push %rbp
	mov %rsp, %rbp
	and $-16, %rsp
	mov STAGE_CF_INIT_NAME(%r10), %rbx
	test %rbx, %rbx
	jnz 1f
	/* "__init__" (interned; made once, and kept: CPython's own is immortal) */
	call *tramp_cf_page + CF_PAGE_GET_EXC(%rip)
	mov %rax, %rbx
	lea .Ls_init(%rip), %rdi
	call *b_intern(%rip)
	mov %rbx, %rdi
	mov %rax, %rbx
	call *tramp_cf_page + CF_PAGE_SET_EXC(%rip)
	mov b_stage(%rip), %r10
	mov %rbx, STAGE_CF_INIT_NAME(%r10)
	test %rbx, %rbx
	jz 8f
1:	mov %r12, %rdi
	mov %rbx, %rsi
	call *b_type_lookup(%rip)	/* (borrowed; sets no exception) */
	mov b_stage(%rip), %r10
	test %rax, %rax
	jz 8f
	mov 8(%rax), %rcx
	cmp b_function_type(%rip), %rcx
	jne 8f
	mov CF_FUNC_CODE(%rax), %rax
	mov b_flags_off(%rip), %ecx
	testl $(CF_CO_VARARGS | CF_CO_VARKEYWORDS), (%rax,%rcx)
	jnz 8f
	testl $CF_CO_OPTIMIZED, (%rax,%rcx)
	jz 8f
	cmpl $0, CF_CO_KWONLYARGCOUNT(%rax)
	jne 8f
	movzbl 1(%r13), %ecx		/* oparg: the arguments, besides the object */
	inc %ecx
	cmp CF_CO_ARGCOUNT(%rax), %ecx
	jne 8f
	mov %rbp, %rsp
	pop %rbp
	mov %r13, %r9
	call .Lcf_counter
	test %eax, %eax
	jz 9f
	call .Lcf_room
	test %eax, %eax
	jz 2f
	mov $(CF_SWAP_INIT | CF_SWAP_UNIT), %eax
	ret
2:	mov $CF_SWAP_INIT, %eax
	ret
8:	mov %rbp, %rsp
	pop %rbp
9:	xor %eax, %eax
	ret
.Ls_init:
	.asciz "__init__"

/* rax: the running thread's state (the GIL's holder: <= 3.11 _PyRuntime's, 3.12+ its
 * interpreter's GIL's last holder), or 0. Clobbers rcx. */
.Lcf_tstate:
	cmpl $CF_PROFILE, b_cf_mode(%rip)
	jne 1f
	mov b_tstate_cur(%rip), %rax
	mov (%rax), %rax
	ret
1:	xor %eax, %eax
	mov b_gil_off(%rip), %ecx
	test %ecx, %ecx
	jz 2f
	add tramp_cf_page + CF_PAGE_INTERP(%rip), %rcx
	mov (%rcx), %rcx
	test %rcx, %rcx
	jz 2f
	mov b_holder_off(%rip), %eax
	mov (%rcx,%rax), %rax
2:	ret

/* What the C function rcx (its PyMethodDef) is, by its name: one that starts a profiler
 * (tramp_cf_risky: CF_RISKY_STARTS in eax), one that reads the interpreter's table of events
 * (tramp_cf_reads: CF_RISKY_READS), or neither (0). Clobbers rax, rdx, rdi, r8, r11. */
.Lcf_risky:
	lea tramp_cf_risky(%rip), %rdi
	call .Lcf_named
	test %eax, %eax
	jnz 1f
	lea tramp_cf_reads(%rip), %rdi
	call .Lcf_named
	add %eax, %eax			/* (CF_RISKY_READS) */
1:	ret
/* Whether the C function rcx's name is in the list rdi: 1 or 0 in eax. */
.Lcf_named:
	mov CF_ML_NAME(%rcx), %r8
	test %r8, %r8
	jz 4f
1:	cmpb $0, (%rdi)
	je 4f				/* (the list's end) */
	xor %edx, %edx
2:	movzbl (%rdi,%rdx), %eax
	cmp (%r8,%rdx), %al
	jne 3f
	inc %edx
	test %eax, %eax
	jnz 2b
	mov $1, %eax
	ret
3:	cmpb $0, (%rdi)			/* the next name */
	lea 1(%rdi), %rdi
	jne 3b
	jmp 1b
4:	xor %eax, %eax
	ret

/* A C call's return (r10: the stage; 8(%rsp): the calling frame, or 0). Clobbers rax, rcx,
 * rdx, rsi, rdi, r8, r11, r13; rbx and r12 are 0 after. */
.Lcf_stage_ret:
	xor %ebx, %ebx
	xor %r12d, %r12d
	thread_key
	cmp STAGE_OWNER(%r10), %eax
	je 1f
	mov $STAGE_FLUSH_SWITCH, %r13d
	call .Lflush
1:	mov STAGE_W(%r10), %rcx
	rdtsc
	shl $32, %rdx
	or %rdx, %rax
	mov $STAGE_TAG_CRET, %edx
	shl $STAGE_TAG_SHIFT, %rdx
	or %rax, %rdx
	mov 8(%rsp), %r8		/* (rax keeps the stamp: .Lafter ages the batch by it) */
	mov %r8, STAGE_BUF + 8(%r10,%rcx)
	mov %rdx, STAGE_BUF(%r10,%rcx)
	add $STAGE_CRET_BYTES, %rcx
	mov %rcx, STAGE_W(%r10)
	jmp .Lafter

/*
 * 3.12+: C functions through the C-call events of sys.monitoring's tool 7 (include/cfuncs.h),
 * taken and given back by tramp_cfuncs.c (the blob below). Its callbacks are the two objects below:
 * vectorcall(callable, args, nargsf, kwnames), args the event's (code, offset, callable, arg0),
 * returning None (immortal: no reference to take).
 */
	.globl tramp_mon_call, tramp_mon_ret
tramp_mon_call:
	mov $1, %eax
	jmp .Lmon_event
tramp_mon_ret:
	xor %eax, %eax
.Lmon_event:
	btr $63, %rdx			/* PY_VECTORCALL_ARGUMENTS_OFFSET */
	cmp $4, %rdx
	jne .Lmon_none			/* (not an event's call) */
	mov b_stage(%rip), %r10
	/* the return callbacks taken out at the last wrapped call go back (.Lcf_wrap), but at
	 * the event of its return: CPython calls the other tools' callbacks after the page's */
	mov STAGE_CF_MUTED(%r10), %ecx
	test %ecx, %ecx
	jz .Lmon_go
	test %eax, %eax
	jnz .Lmon_unmute
	btr $STAGE_CF_MUTED_FRESH, %ecx
	jnc .Lmon_unmute
	mov %ecx, STAGE_CF_MUTED(%r10)
.Lmon_go:
	cmpl $STAGE_ON_STAGING, STAGE_ON(%r10)	/* (not staging, or per call) */
	jne .Lmon_drop
	cmpl $0, STAGE_CFUNCS(%r10)
	je .Lmon_drop
	/* the C function: a PyCFunction, or a method descriptor called with its object */
	mov 16(%rsi), %r8		/* the callable */
	mov 24(%rsi), %r9		/* arg0 */
	mov 8(%r8), %rcx		/* its type */
	cmp b_cfunction_type(%rip), %rcx
	je 2f
	cmp b_cmethod_type(%rip), %rcx
	je 2f
	cmp b_methoddescr_type(%rip), %rcx
	jne .Lmon_class
	cmp b_missing(%rip), %r9
	je .Lmon_none			/* (no arguments: CPython raises, cProfile skips it) */
	mov CF_D_METHOD(%r8), %rdx
	jmp 3f
2:	mov CF_M_ML(%r8), %rdx
	mov CF_M_SELF(%r8), %r9
3:	push %rbx
	push %r12
	push %r13
	test %eax, %eax
	jz 4f
	mov %r8, %r12			/* the callable, its object: its identity if sent now */
	mov %r9, %rbx
	push %rdx			/* the key */
	call .Lmon_frame
	push %rax
	mov %rax, %rdx
	mov %r12, %rdi
	mov %rbx, %rsi
	call .Lcf_units
	pop %rsi
	pop %rdx
	push %rax			/* CF_SWAP_UNIT or 0 */
	push %rax
	push $0
	push %rsi			/* the calling frame */
	push %rdx			/* the key */
	call .Lcf_stage_call
	add $16, %rsp
	pop %rax
	pop %rdx
	pop %rdx
	test $CF_RISKY_STARTS, %eax
	jz 6f
	/* one that may start a profiler: did another tool see it begin? (.Lcf_wrap) */
	mov STAGE_CF_TOOL(%r10), %ecx
	dec %ecx
	mov $-2, %eax
	rol %cl, %eax			/* every tool but the page's */
	mov tramp_cf_page + CF_PAGE_MONITORS(%rip), %ecx
	add tramp_cf_page + CF_PAGE_INTERP(%rip), %rcx
	movzbl CF_EV_CALL(%rcx), %ecx
	and %ecx, %eax
	mov %eax, STAGE_CF_OTHERS(%r10)
	or $CF_SWAP_STARTS, %edx
	jmp 7f
6:	test $CF_RISKY_READS, %eax	/* one that reads the table of events */
	jz 7f
	or $CF_SWAP_READS, %edx
7:	test %edx, %edx
	jz 5f
	mov %r12, %rdi
	call .Lcf_swap
	jmp 5f
4:	call .Lmon_frame
	push %rax			/* the calling frame */
	call .Lcf_stage_ret
	add $8, %rsp
5:	pop %r13
	pop %r12
	pop %rbx
.Lmon_none:
	mov b_none(%rip), %rax
	ret
.Lmon_class:	/* 3.13: a class call that CPython would run inline (.Lcf_init) */
	test %eax, %eax
	jz .Lmon_none
	cmpl $0, b_init_on(%rip)
	je .Lmon_none
	cmp b_type_type(%rip), %rcx
	jne .Lmon_none
	push %rbx
	push %r12
	push %r13
	mov %r8, %r12
	call .Lmon_frame
	mov %rax, %rdx
	mov %r12, %rdi
	call .Lcf_init
	test %eax, %eax
	jz 1f
	mov b_stage(%rip), %r10
	mov %r12, %rdi
	mov %eax, %edx
	call .Lcf_swap
1:	pop %r13
	pop %r12
	pop %rbx
	jmp .Lmon_none
/* rax: the frame the thread runs (the callback's caller's), or 0: from the thread state that
 * holds the interpreter's GIL, the one the callback runs in. Clobbers rcx. */
.Lmon_frame:
	xor %eax, %eax
	mov b_gil_off(%rip), %ecx
	test %ecx, %ecx
	jz 1f
	add tramp_cf_page + CF_PAGE_INTERP(%rip), %rcx
	mov (%rcx), %rcx		/* the GIL */
	test %rcx, %rcx
	jz 1f
	mov b_holder_off(%rip), %eax
	mov (%rcx,%rax), %rcx		/* its holder */
	xor %eax, %eax
	test %rcx, %rcx
	jz 1f
	cmpl $CALLER_FROM_CFRAME, b_mode(%rip)
	ja 2f
	mov b_cframe_off(%rip), %eax	/* 3.12: its cframe's current frame */
	mov (%rcx,%rax), %rcx
	xor %eax, %eax
	test %rcx, %rcx
	jz 1f
	mov b_cfcur_off(%rip), %eax
	mov (%rcx,%rax), %rax
1:	ret
2:	mov b_cur_off(%rip), %eax	/* 3.13+: its current frame */
	mov (%rcx,%rax), %rax
	ret
.Lmon_unmute:
	push %rdi
	push %rsi
	push %rax
	lea tramp_cf_page(%rip), %rdi
	mov $CF_OP_UNMUTE, %esi
	xor %edx, %edx
	mov %r10, %rcx
	call tramp_cf_blob + CF_BLOB_ENTRY
	pop %rax
	pop %rsi
	pop %rdi
	mov b_stage(%rip), %r10
	jmp .Lmon_go
.Lmon_drop:	/* not recording C functions: tool 7's C-call events given back */
	mov (%rsi), %rdx		/* the event's code object: its co_name is lent */
	mov 8(%rdx), %rax
	cmp b_code_type(%rip), %rax
	jne .Lmon_none
	mov b_name_off(%rip), %eax
	mov (%rdx,%rax), %rdx
	lea tramp_cf_page(%rip), %rdi
	mov $CF_OP_REMOVE, %esi
	mov %r10, %rcx
	sub $8, %rsp
	call tramp_cf_blob + CF_BLOB_ENTRY
	add $8, %rsp
	jmp .Lmon_none

/* In the batch path (r10: the stage; r12: the code object entered, whose co_name is lent):
 * takes tool 7's C-call events for the page if it holds none, or again if its CALL event or
 * callback went (sys.settrace sets that tool's events to its own). Uses rax, rcx, rdx, rsi,
 * rdi, r8-r11; r10 is reloaded. */
.Lmon_check:
	cmpl $0, STAGE_CF_MUTED(%r10)
	jne .Lmon_take_unmute
	mov STAGE_CF_TOOL(%r10), %eax
	test %eax, %eax
	jz .Lmon_take
	cmp $STAGE_CF_NO_TOOL, %eax
	je 1f
	dec %eax
	mov tramp_cf_page + CF_PAGE_INTERP(%rip), %rdx
	mov tramp_cf_page + CF_PAGE_MONITORS(%rip), %ecx
	movzbl CF_EV_CALL(%rdx,%rcx), %ecx
	bt %eax, %ecx
	jnc .Lmon_take			/* (its CALL event went) */
	movzbl tramp_cf_page + CF_PAGE_NEVENTS(%rip), %ecx
	imul %ecx, %eax
	shl $3, %eax
	add tramp_cf_page + CF_PAGE_CALLABLES(%rip), %eax
	add %rdx, %rax
	mov CF_EV_CALL * 8(%rax), %rax
	cmp tramp_cf_page + CF_PAGE_OBJ_CALL(%rip), %rax
	jne .Lmon_take
1:	ret
.Lmon_take_unmute:	/* (a call entered through no CALL event: a generator resumed) */
	push %rbp
	mov %rsp, %rbp
	and $-16, %rsp
	lea tramp_cf_page(%rip), %rdi
	mov $CF_OP_UNMUTE, %esi
	xor %edx, %edx
	mov %r10, %rcx
	call tramp_cf_blob + CF_BLOB_ENTRY
	mov b_stage(%rip), %r10
	mov %rbp, %rsp
	pop %rbp
	jmp .Lmon_check
.Lmon_take:
	push %rbp
	mov %rsp, %rbp
	and $-16, %rsp
	lea tramp_cf_page(%rip), %rdi
	mov $CF_OP_INSTALL, %esi
	mov b_name_off(%rip), %eax
	mov (%r12,%rax), %rdx
	xor %ecx, %ecx
	call tramp_cf_blob + CF_BLOB_ENTRY
	mov b_stage(%rip), %r10
	lea 1(%rax), %ecx		/* its id + 1; none: STAGE_CF_NO_TOOL */
	test %eax, %eax
	jns 1f
	mov $STAGE_CF_NO_TOOL, %ecx
1:	mov %ecx, STAGE_CF_TOOL(%r10)
	mov %rbp, %rsp
	pop %rbp
	ret

/* The names of the C functions that may start a profiler (.Lcf_risky), the list ending in an
 * empty one: sys.setprofile and sys._setprofileallthreads (threading's), sys.monitoring's
 * set_events and set_local_events, and profilers' own (cProfile's enable; pyinstrument's). A
 * function of another name that starts one (a C extension calling PyEval_SetProfile) gets a
 * return event it would not natively. */
tramp_cf_risky:
	.asciz "setprofile"
	.asciz "_setprofileallthreads"
	.asciz "set_events"
	.asciz "set_local_events"
	.asciz "enable"
	.asciz "setstatprofile"
	.byte 0
/* sys.monitoring's functions that read the interpreter's table of events (3.12+), where the
 * page's CALL event shows otherwise */
tramp_cf_reads:
	.asciz "get_events"
	.asciz "_all_events"
	.byte 0

/* tramp_cfuncs.c, built to run here (the Makefile: no relocations, no data) */
	.balign 16
tramp_cf_blob:
	.incbin CF_BLOB_PATH
	.balign 8

/* The tool's callbacks: PyCFunction objects, immortal (their count is never written: CPython
 * leaves an immortal object's alone), each after the 16 bytes of a GC header that says it is
 * not tracked. tramp_build.c writes the addresses: the type, the page's own. */
	.zero 16
	.globl tramp_mon_obj_call, tramp_mon_obj_ret, tramp_mon_def, tramp_mon_name
tramp_mon_obj_call:
	.quad 0xffffffff, 0, 0, 0, 0, 0, 0 /* refcnt, type, m_ml, m_self, m_module, weakrefs, vectorcall */
	.zero 16
tramp_mon_obj_ret:
	.quad 0xffffffff, 0, 0, 0, 0, 0, 0
tramp_mon_def:			/* PyMethodDef: name, meth, flags (METH_FASTCALL), doc */
	.quad 0, 0
	.long 0x80, 0
	.quad 0
tramp_mon_name:
	.asciz "pyuprof"
	.balign 8
	.globl tramp_mon_meth
tramp_mon_meth:			/* (its meth: None, called with whatever arguments) */
	mov b_none(%rip), %rax
	ret

	.globl tramp_flush
tramp_flush:
	/* the flush probe's 5-byte nop: rdi the stage, rsi bytes staged, rdx why, rcx a code
	 * object, r8 its frame, rax the batch's generation; STAGE_FLUSH_TSTATE: r9 the thread
	 * state; STAGE_FLUSH_CFUNC: rcx a C function's callable, r8 its object, r9 its key */
	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00
	ret
	.fill 16, 1, 0xcc		/* (room for the code tests/batch.bats puts after the nop) */

	.balign 64
	.globl tramp_params
tramp_params:
p_slot:		.quad 0		/* the function's second instruction (pass-through: the function) */
p_eval_start:	.quad 0		/* _PyEval_EvalFrameDefault and its .cold part: the eval loop */
p_eval_len:	.quad 0
p_cold_start:	.quad 0
p_cold_len:	.quad 0
p_units:	.long 0		/* the budget an activation of the eval function takes */
p_c_off:	.long 0		/* PyThreadState's c_recursion_remaining, */
p_limit_off:	.long 0		/* py_recursion_limit */
p_remaining_off: .long 0	/* and py_recursion_remaining */
p_depth_cap:	.long 0		/* TRAMP_HANDBACK_DEPTH */
	.long 0
	.globl tramp_ident
tramp_ident:	.zero 32	/* IDENT (tramp_layout.h), the function's address */
/* the guard of the C stack's end (tramp_guard, tramp_batch) */
p_margin:	.quad 0		/* bytes left below which a call raises (0: no guard) */
p_main_floor:	.quad 0		/* the main thread's stack: its lowest usable address and the
				 * margin (0 and ~0 for room: no guard, no budget to guard), */
p_main_room:	.quad 0		/* and what lies above it, up to the stack's top */
p_main_low:	.quad 0		/* the main thread's stack: its lowest usable address, */
p_main_span:	.quad 0		/* and its size up to its top */
p_exc:		.quad 0		/* before 3.12: &PyExc_RecursionError, */
p_seterr:	.quad 0		/* PyErr_SetString */
/* the hook put back once pyuprof is gone (.Lunhook) */
p_hook_unset:	.quad 0		/* what the hook was before pyuprof */
p_blk_off:	.long 0		/* glibc's struct pthread: stackblock (then its size, its guard) */
p_stk_mode:	.long 0		/* STACK_RAISE or STACK_BUDGET */
p_interp_off:	.long 0		/* PyThreadState.interp (3.9+) */
p_hook_slot:	.long 0		/* PyInterpreterState: the eval_frame hook; 0: not put back */
p_msg:		.zero 40	/* RecursionError's text, as CPython words it */
/* the batch path's: the stage (0: no batch path), and where it reads the target */
b_stage:	.quad 0
b_main_interp:	.quad 0		/* 3.12+: the interpreter that stages (its GIL is the stage's) */
b_none:		.quad 0		/* 3.12+: &_Py_NoneStruct */
b_code_mask:	.quad 0		/* what of the frame's code pointer is the pointer (3.14+: not the
				 * _PyStackRef's tag bits) */
b_interp_off:	.long 0		/* 3.12+: PyThreadState.interp; 0: every interpreter stages */
b_frame_arg:	.long 0		/* the frame is in rsi (3.9+), else rdi */
b_tid_off:	.long 0		/* glibc's struct pthread: tid, from %fs */
b_code_off:	.long 0		/* frame: f_code / f_executable */
b_back_off:	.long 0		/* frame: f_back / previous */
b_owner_off:	.long 0		/* 3.11+: frame: owner */
b_mode:		.long 0		/* enum caller_mode */
b_cframe_off:	.long 0		/* 3.11, 3.12: PyThreadState.cframe, */
b_cfcur_off:	.long 0		/* _PyCFrame.current_frame */
b_cur_off:	.long 0		/* 3.13: PyThreadState.current_frame */
b_flags_off:	.long 0		/* PyCodeObject: co_flags, */
b_name_off:	.long 0		/* co_name, */
b_file_off:	.long 0		/* co_filename, */
b_line_off:	.long 0		/* co_firstlineno */
b_hash_off:	.long 0		/* str: hash, */
b_len_off:	.long 0		/* length, */
b_data_off:	.long 0		/* where an ASCII str's characters start */
b_chains:	.long 0		/* 3.11+: check the chain's code objects too */
b_gen_state:	.long 0		/* 3.12+: from a generator's frame to its gi_frame_state (< 0);
				 * 0: its returns are not told from its yields */
b_version_off:	.long 0		/* 3.12+: PyCodeObject: co_version (0: identity by the names) */
b_gen_done:	.long 0		/* 3.12+: the lowest gi_frame_state of a generator that returned
				 * (FRAME_COMPLETED; 3.15: FRAME_CLEARED); below it when suspended
				 * or running */
/* C functions (include/cfuncs.h) */
b_cf_mode:	.long 0		/* 0: none; CF_PROFILE (<= 3.11); CF_MONITOR (3.12+) */
b_pfunc_off:	.long 0		/* <= 3.11: PyThreadState: c_profilefunc */
b_use_mode:	.long 0		/* where tracing is switched on: 1 an int in the thread state (3.8,
				 * 3.9); 2 an int (3.10), 3 a byte of 255 (3.11) in its cframe */
b_use_off:	.long 0		/* PyThreadState: use_tracing (1), or cframe (2, 3) */
b_fframe_off:	.long 0		/* 3.11: PyFrameObject: f_frame (0: the frame object is the frame) */
b_pobj_off:	.long 0		/* <= 3.11: PyThreadState: c_profileobj */
	.balign 8
b_tstate_cur:	.quad 0		/* <= 3.11: &_PyRuntime.gilstate.tstate_current */
/* 3.12+: the types a callback tells a C function by; sys.monitoring.MISSING (0: unknown);
 * PyCode_Type */
b_cfunction_type: .quad 0
b_cmethod_type:	.quad 0
b_methoddescr_type: .quad 0
b_missing:	.quad 0
b_code_type:	.quad 0
b_gil_off:	.long 0		/* 3.12+: PyInterpreterState: ceval.gil (0: not known), */
b_holder_off:	.long 0		/* its last_holder: the thread state a callback runs in */
/* 3.11-3.13: the recursion unit a specialised C call does not take (.Lcf_units) */
b_unit_off:	.long 0		/* PyThreadState: the budget it comes from (0: none to give) */
b_unit_flags:	.long 0		/* CF_UNIT_* */
b_ip_off:	.long 0		/* _PyInterpreterFrame: the instruction running */
b_kw_at:	.long 0		/* from it, the opcode that says the call has keywords, */
b_kw_op:	.long 0		/* and its number */
b_warm_mode:	.long 0		/* 1: 3.11's PRECALL_ADAPTIVE; 2: 3.12+'s CALL counter */
b_call_op:	.long 0		/* 3.12+: INSTRUMENTED_CALL */
b_init_on:	.long 0		/* 3.13: class calls too (.Lcf_init) */
b_module_type:	.quad 0		/* PyModule_Type */
b_unicode_type:	.quad 0		/* PyUnicode_Type */
b_type_type:	.quad 0		/* 3.13: PyType_Type, */
b_object_type:	.quad 0		/* PyBaseObject_Type, */
b_function_type: .quad 0	/* PyFunction_Type, */
b_intern:	.quad 0		/* PyUnicode_InternFromString, */
b_type_lookup:	.quad 0		/* _PyType_Lookup */
b_shim_words:	.quad 0		/* _Py_InitCleanup.co_framesize */
b_ds_top_off:	.long 0		/* PyThreadState: datastack_top, */
b_ds_limit_off:	.long 0		/* datastack_limit */
	.globl tramp_cf_page
tramp_cf_page:	.zero CF_PAGE_SIZE	/* struct cf_page (inject/tramp_cfuncs.h) */
	.balign 16
p_walk:		.zero 16 * 64	/* {return address, frame size, budget held}, 0-terminated */
	.globl tramp_code_end
tramp_code_end:
	.section .note.GNU-stack, "", @progbits
