/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Code for tests/unit/test_probe_site.c, linked into a shared object (never run). Each case is
 * a function; its site is its first instruction, and <case>_to is where a probe may move (or
 * the site itself when it may not).
 */
	.text

/* the path of Debian's 3.11.2 inline __getitem__: lea, store, test, then a branch */
	.globl moves, moves_to
	.type moves, @function
moves:
	lea	-0x1(%rax), %edx
	mov	%edx, 0x20(%r12)
	test	%eax, %eax
moves_to:
	jg	1f
	nop
1:	ret
	.size moves, . - moves

/* sub rsp, xor esi, then a call, as 3.13.0's _PyType_NewManagedObject starts (keep rdi, rbp) */
	.globl init_like, init_like_to
	.type init_like, @function
init_like:
	sub	$0x8, %rsp
	xor	%esi, %esi
init_like_to:
	call	moves
	add	$0x8, %rsp
	ret
	.size init_like, . - init_like

/* the kept register (rbx) written on the way */
	.globl writes_kept
	.type writes_kept, @function
writes_kept:
	lea	-0x1(%rax), %edx
	mov	%rax, %rbx
	jg	1f
1:	ret
	.size writes_kept, . - writes_kept

/* a part of it (bl) written */
	.globl writes_part
	.type writes_part, @function
writes_part:
	lea	-0x1(%rax), %edx
	mov	$1, %bl
	jg	1f
1:	ret
	.size writes_part, . - writes_part

/* a store through it: the memory the probe reads may change */
	.globl stores_through
	.type stores_through, @function
stores_through:
	lea	-0x1(%rax), %edx
	mov	%edx, 0x10(%rbx)
	jg	1f
1:	ret
	.size stores_through, . - stores_through

/* a branch the kernel does not emulate on the way */
	.globl indirect
	.type indirect, @function
indirect:
	lea	-0x1(%rax), %edx
	jmp	*%rdx
	jg	1f
1:	ret
	.size indirect, . - indirect

/* a short jump of the function into the middle of the way */
	.globl jumped_short
	.type jumped_short, @function
jumped_short:
	lea	-0x1(%rax), %edx
2:	test	%eax, %eax
	jg	1f
	jmp	2b
1:	ret
	.size jumped_short, . - jumped_short

/* a long jump from another function onto the instruction it would move to */
	.globl jumped_long
	.type jumped_long, @function
jumped_long:
	lea	-0x1(%rax), %edx
	test	%eax, %eax
3:	jg	1f
1:	ret
	.size jumped_long, . - jumped_long

	.globl elsewhere
	.type elsewhere, @function
elsewhere:
	.byte	0xe9
	.long	3b - (. + 4)
	.size elsewhere, . - elsewhere

/* more instructions on the way than a probe moves over */
	.globl too_far
	.type too_far, @function
too_far:
	.rept 9
	lea	-0x1(%rax), %edx
	.endr
	jg	1f
1:	ret
	.size too_far, . - too_far

/* the site is emulated already (a push) */
	.globl already
	.type already, @function
already:
	push	%r15
	lea	-0x1(%rax), %edx
	jg	1f
1:	pop	%r15
	ret
	.size already, . - already

/* the same path as moves, its branch a table's entry (tested with that table) */
	.globl table_entry, table_entry_to
	.type table_entry, @function
table_entry:
	lea	-0x1(%rax), %edx
	test	%eax, %eax
table_entry_to:
	jg	1f
1:	ret
	.size table_entry, . - table_entry

	.section .note.GNU-stack, "", @progbits
