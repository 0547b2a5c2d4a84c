/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Code for tests/unit/test_inline_init.c, linked into a shared object (never run). Each case
 * is an eval function of its own, with a dispatch table whose entry 162
 * (CALL_ALLOC_AND_ENTER_INIT) leads to <case>_handler; <case>_site and <case>_alloc are the
 * call found and what it calls, where one must be found. The path is 3.13's: the instruction
 * pointer stored into the frame (rbp here, +56), checks that all leave to <case>_deopt, the
 * class's cached __init__ read from the type (+920), the type moved to rdi, the call. Built
 * twice: with WITH_SYM, the object also has a _PyType_NewManagedObject (plain's callee), to
 * which a call found must then go.
 */

/* CASE_TABLE name: 256 entries, each <name>_other but 162's; a word that is no code after */
	.macro CASE_TABLE name
	.section .data.rel.ro, "aw"
	.balign 8
\name\()_table:
	.rept 162
	.quad \name\()_other
	.endr
	.quad \name\()_handler
	.rept 93
	.quad \name\()_other
	.endr
	.quad 0
	.text
	.endm

	.text

/* 3.13.0's shape: the first check's path is its jump, the generic CALL falls through; then
 * every check jumps there. Found: plain_site, frame in rbp. (Every label local: a call
 * to a global one would go through the PLT.) */
	.type plain, @function
plain:
	ret
plain_handler:
	mov	%r15, 0x38(%rbp)
	mov	(%rax), %r10
	test	%rcx, %rcx
	je	1f
plain_deopt:
	jmp	plain_other
1:	testb	$0x80, 0xab(%rax)
	je	plain_deopt
	cmp	%eax, 0x180(%r10)
	jne	plain_deopt
	mov	0x398(%r10), %rdx
	cmp	%edi, 0x34(%rdx)
	jne	plain_deopt
	mov	%r10, %rdi
plain_site:
	call	plain_alloc
	ret
plain_other:
	ret
plain_alloc:
#ifdef WITH_SYM
_PyType_NewManagedObject:
#endif
	ret
	.size plain, . - plain
	CASE_TABLE plain

/* Debian's 3.13.18 shape: the handlers in a part split off the function (its CFA not the
 * entry's), which the function's own range does not cover and only a jump leads into; every
 * check falls through on the path. Found: split_site, frame in rbx. */
	.type split, @function
split:
	.cfi_startproc
	sub	$0x1a8, %rsp
	.cfi_def_cfa_offset 0x1b0
	test	%rdi, %rdi
	je	split_cold
	add	$0x1a8, %rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size split, . - split

	.type split_cold, @function
split_cold:
	.cfi_startproc
	.cfi_def_cfa_offset 0x1b0
	nop
split_handler:
	mov	%r12, 0x38(%rbx)
	mov	(%rax), %rdi
	cmpq	$0, (%r13)
	jne	split_deopt
	cmp	%eax, 0x180(%rdi)
	jne	split_deopt
	mov	0x398(%rdi), %r8
	mov	%rdi, 0x18(%rsp)
	cmp	%ecx, 0x34(%r8)
	jne	split_deopt
split_site:
	call	split_alloc
split_deopt:
split_other:
	nop
	.cfi_endproc
	.size split_cold, . - split_cold
split_alloc:
	ret
	CASE_TABLE split

/* CASE_START name, frame and CASE_END name: the path's start (the callable loaded, the
 * instruction pointer stored through frame) and end (a direct call) around the lines between,
 * which break the path in one thing */
	.macro CASE_START name, frame
	.type \name, @function
\name:
	ret
\name\()_handler:
	mov	%r15, 0x38(%\frame)
	mov	(%rax), %r10
	.endm

	.macro CASE_END name
	call	\name\()_other
\name\()_deopt:
	jmp	\name\()_other
\name\()_other:
	ret
	.size \name, . - \name
	CASE_TABLE \name
	.endm

/* checks that leave to two places: one of them is no deopt */
	CASE_START two_exits, rbp
	test	%rcx, %rcx
	jne	two_exits_deopt
	cmp	%eax, 0x180(%r10)
	jne	two_exits_other
	mov	0x398(%r10), %rdx
	cmp	%edi, 0x34(%rdx)
	jne	two_exits_deopt
	mov	%r10, %rdi
	CASE_END two_exits

/* the frame's register written on the way: not the frame at the call */
	CASE_START frame_written, rbp
	test	%rcx, %rcx
	jne	frame_written_deopt
	cmp	%eax, 0x180(%r10)
	jne	frame_written_deopt
	mov	0x398(%r10), %rdx
	mov	%rdx, %rbp
	cmp	%edi, 0x34(%rdx)
	jne	frame_written_deopt
	mov	%r10, %rdi
	CASE_END frame_written

/* the type not the call's first argument */
	CASE_START not_rdi, rbp
	test	%rcx, %rcx
	jne	not_rdi_deopt
	cmp	%eax, 0x180(%r10)
	jne	not_rdi_deopt
	mov	0x398(%r10), %rdx
	cmp	%edi, 0x34(%rdx)
	jne	not_rdi_deopt
	mov	%r10, %rsi
	CASE_END not_rdi

/* the type moved to rdi, then rdi written */
	CASE_START rdi_written, rbp
	test	%rcx, %rcx
	jne	rdi_written_deopt
	cmp	%eax, 0x180(%r10)
	jne	rdi_written_deopt
	mov	0x398(%r10), %rdx
	cmp	%edi, 0x34(%rdx)
	jne	rdi_written_deopt
	mov	%r10, %rdi
	xor	%edi, %edi
	CASE_END rdi_written

/* two checks only */
	CASE_START few_checks, rbp
	test	%rcx, %rcx
	jne	few_checks_deopt
	mov	0x398(%r10), %rdx
	cmp	%edi, 0x34(%rdx)
	jne	few_checks_deopt
	mov	%r10, %rdi
	CASE_END few_checks

/* no cached __init__ read (+912, not +920): another instruction's path */
	CASE_START no_init, rbp
	test	%rcx, %rcx
	jne	no_init_deopt
	cmp	%eax, 0x180(%r10)
	jne	no_init_deopt
	mov	0x390(%r10), %rdx
	cmp	%edi, 0x34(%rdx)
	jne	no_init_deopt
	mov	%r10, %rdi
	CASE_END no_init

/* the instruction pointer stored through a register no callee keeps (rax) */
	CASE_START no_frame, rax
	test	%rcx, %rcx
	jne	no_frame_deopt
	cmp	%eax, 0x180(%r10)
	jne	no_frame_deopt
	mov	0x398(%r10), %rdx
	cmp	%edi, 0x34(%rdx)
	jne	no_frame_deopt
	mov	%r10, %rdi
	CASE_END no_frame

/* an indirect call first */
	CASE_START indirect, rbp
	test	%rcx, %rcx
	jne	indirect_deopt
	cmp	%eax, 0x180(%r10)
	jne	indirect_deopt
	mov	0x398(%r10), %rdx
	cmp	%edi, 0x34(%rdx)
	jne	indirect_deopt
	mov	%r10, %rdi
	call	*%rdx
	CASE_END indirect

/* a split-off part's range that is a function of its own (its entry's CFA: the return
 * address alone): a tail call, not the eval function's part, though the table leads there */
	.type tail, @function
tail:
	.cfi_startproc
	test	%rdi, %rdi
	je	tail_callee
	ret
	.cfi_endproc
	.size tail, . - tail

	.type tail_callee, @function
tail_callee:
	.cfi_startproc
	nop
tail_handler:
	mov	%r12, 0x38(%rbx)
	mov	(%rax), %rdi
	cmpq	$0, (%r13)
	jne	tail_deopt
	cmp	%eax, 0x180(%rdi)
	jne	tail_deopt
	mov	0x398(%rdi), %r8
	cmp	%ecx, 0x34(%r8)
	jne	tail_deopt
	call	tail_alloc
tail_deopt:
tail_other:
	nop
	.cfi_endproc
	.size tail_callee, . - tail_callee
tail_alloc:
	ret
	CASE_TABLE tail
