/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The probe trampoline's code and its parameters, as one position-independent block that
 * tramp.c copies into a page of the target and fills in (the p_* fields, the replayed first
 * instruction, the head's call). pyuprof never runs it: it sits in read-only data here. Layout
 * and the reasons for it: tramp.h.
 */
#define WALK_LEVELS 6	/* return addresses looked at above a call, at most */

	.section .rodata.pyuprof_tramp, "a"
	.balign 64
	.globl tramp_code
tramp_code:
	/* +0: the entry probe's 5-byte nop; registers exactly as at the function's entry */
	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00
	sub $8, %rsp			/* the function's own stack alignment */
	.globl tramp_head_call
tramp_head_call:
	call tramp_body_plain		/* or tramp_body_budget: tramp.c points it */
	add $8, %rsp
	.globl tramp_return_nop
tramp_return_nop:
	/* +18: the return probe's 5-byte nop; rax holds the result */
	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00
	ret

/*
 * 3.12+: the C recursion budget handed back around the call (tramp.h), entered as a function
 * with the thread state in %rdi. It is handed back when the call is one CPython would have run
 * inline: the return addresses above it lead, through call sites of CPython's own call
 * machinery only (p_walk: each site's frame size and the budget its function holds across the
 * call), into the eval loop itself. What is added is kept on the stack and taken back after the
 * call, whatever the thread does meanwhile. Only rax, rcx and r8-r11 are used before the call:
 * the function's arguments are in rdi, rsi and rdx.
 */
	.globl tramp_body_budget
tramp_body_budget:
	xor %eax, %eax
	/* depth = py_recursion_limit - py_recursion_remaining; at or past the bound: nothing */
	mov p_limit_off(%rip), %ecx
	mov (%rdi,%rcx), %r8d
	mov p_remaining_off(%rip), %ecx
	sub (%rdi,%rcx), %r8d
	cmp p_depth_cap(%rip), %r8d
	jae .Lcall
	lea 16(%rsp), %r8		/* where the hook's caller's return address is */
	mov $WALK_LEVELS, %r9d
	xor %r11d, %r11d		/* budget held by the functions walked through */
.Lwalk:
	mov (%r8), %r10
	mov %r10, %rax
	sub p_eval_start(%rip), %rax
	cmp p_eval_len(%rip), %rax
	jb .Lhand
	mov %r10, %rax
	sub p_cold_start(%rip), %rax
	cmp p_cold_len(%rip), %rax
	jb .Lhand
	lea p_walk(%rip), %rcx
.Lscan:
	mov (%rcx), %rax
	test %rax, %rax
	jz .Lnone			/* another caller: a C path, which spends the budget natively */
	cmp %r10, %rax
	je .Lstep
	add $16, %rcx
	jmp .Lscan
.Lstep:
	mov 8(%rcx), %eax		/* that frame's size: its own return address is there */
	add %rax, %r8
	add 12(%rcx), %r11d
	dec %r9d
	jnz .Lwalk
.Lnone:
	xor %eax, %eax
	jmp .Lcall
.Lhand:
	mov p_units(%rip), %eax
	add %r11d, %eax
.Lcall:
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
tramp_ident:	.zero 32	/* "pyuprof-tramp 2", the function's address */
	.balign 16
p_walk:		.zero 16 * 64	/* {return address, frame size, budget held}, 0-terminated */
	.globl tramp_code_end
tramp_code_end:
	.section .note.GNU-stack, "", @progbits
