// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Running system calls in a stopped thread of the target (what debuggers and CRIU's parasite
 * loader do), kept to the minimum: registers are saved, the thread is pointed at a `syscall`
 * instruction of its vDSO with the call's number and arguments, and resumed up to the exit of
 * that one call (PTRACE_SYSCALL, the stops told apart by PTRACE_GET_SYSCALL_INFO, not by a
 * signal number). Then its registers are put back.
 *
 * A thread stopped inside a system call of its own (orig_rax >= 0 with a restart code in rax)
 * would have had that call restarted by the kernel when resumed from its stop; after our calls
 * it resumes from a syscall-exit stop, where the kernel does no such thing, so the restart is
 * done here as the kernel does it (rip back over the 2-byte instruction, the number back in
 * rax). Callers avoid threads with a signal of the target's pending in their stop, whose
 * handler would decide between a restart and EINTR.
 *
 * What cannot be made safe: pyuprof killed by SIGKILL between setting and restoring the
 * registers leaves the thread running from the vDSO's instruction. The window is a few
 * system calls long and happens once per process image.
 */
#include <capstone/capstone.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include "inject.h"
#include "proc.h"

/* the kernel's restart codes (include/linux/errno.h, not exported to user space) */
#define ERESTARTSYS 512
#define ERESTARTNOINTR 513
#define ERESTARTNOHAND 514
#define ERESTART_RESTARTBLOCK 516

/*
 * Waits for tid's next syscall stop, resuming it over any other stop: a signal of the target's
 * (kept in *stray, sent on later by the caller) or a group-stop. Returns the stop's
 * PTRACE_SYSCALL_INFO_* op, or -errno (-ESRCH: the thread is gone).
 */
static int next_syscall_stop(pid_t tid, int *stray)
{
	struct __ptrace_syscall_info info;
	int st, sig, others;

	/* a stop that keeps coming back is not one this loop understands: give up (and put the
	 * registers back) rather than let the thread run on past the syscall */
	for (others = 0; others < 64; others++) {
		if (waitpid(tid, &st, __WALL) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st))
			return -ESRCH;
		if (!WIFSTOPPED(st))
			continue;
		memset(&info, 0, sizeof(info));
		if (ptrace(PTRACE_GET_SYSCALL_INFO, tid, (void *)sizeof(info), &info) > 0 &&
		    (info.op == PTRACE_SYSCALL_INFO_ENTRY || info.op == PTRACE_SYSCALL_INFO_EXIT))
			return info.op;
		/* a syscall stop the kernel does not describe: PTRACE_O_TRACESYSGOOD is off */
		if (WSTOPSIG(st) == (SIGTRAP | 0x80) || WSTOPSIG(st) == SIGTRAP)
			return -EPROTO;
		sig = WSTOPSIG(st) & 0x7f;
		/* a signal-delivery stop (no event): the target's own signal, held back */
		if (!(st >> 16) && sig != SIGSTOP)
			*stray = sig;
		if (ptrace(PTRACE_SYSCALL, tid, NULL, NULL))
			return -errno;
	}
	return -EPROTO;
}

/*
 * One call: regs start from base; on return the thread stands in the call's exit stop. A
 * system call of the thread's own that was still under way (an exec event stops inside
 * execve) first reaches its exit stop: then the registers are set again.
 */
static int run_one(pid_t tid, const struct user_regs_struct *base, uint64_t insn,
		   struct inject_call *c, int *stray)
{
	struct __ptrace_syscall_info info;
	struct user_regs_struct r = *base;
	int op, tries;

	r.rip = insn;
	r.rax = (uint64_t)c->nr;
	r.orig_rax = (uint64_t)-1; /* no restart handling of these registers on the way out */
	r.rdi = c->args[0];
	r.rsi = c->args[1];
	r.rdx = c->args[2];
	r.r10 = c->args[3];
	r.r8 = c->args[4];
	r.r9 = c->args[5];
	for (tries = 0;; tries++) {
		if (ptrace(PTRACE_SETREGS, tid, NULL, &r) || ptrace(PTRACE_SYSCALL, tid, NULL, NULL))
			return -errno;
		op = next_syscall_stop(tid, stray);
		if (op < 0)
			return op;
		if (op == PTRACE_SYSCALL_INFO_ENTRY)
			break;
		if (tries) /* an exit stop again without an entry: not ours to understand */
			return -EPROTO;
	}
	/* the call made is the one asked for, or it is not let through */
	memset(&info, 0, sizeof(info));
	if (ptrace(PTRACE_GET_SYSCALL_INFO, tid, (void *)sizeof(info), &info) <= 0 ||
	    info.entry.nr != (uint64_t)c->nr) {
		/* skipped (orig_rax -1), so that the registers are put back at its exit stop */
		if (!ptrace(PTRACE_GETREGS, tid, NULL, &r)) {
			r.orig_rax = (uint64_t)-1;
			if (!ptrace(PTRACE_SETREGS, tid, NULL, &r) &&
			    !ptrace(PTRACE_SYSCALL, tid, NULL, NULL))
				next_syscall_stop(tid, stray);
		}
		return -EPROTO;
	}
	if (ptrace(PTRACE_SYSCALL, tid, NULL, NULL))
		return -errno;
	op = next_syscall_stop(tid, stray);
	if (op != PTRACE_SYSCALL_INFO_EXIT || ptrace(PTRACE_GETREGS, tid, NULL, &r))
		return op < 0 ? op : -EPROTO;
	c->ret = (int64_t)r.rax;
	return 0;
}

int inject__syscalls(pid_t tid, uint64_t insn, struct inject_call *calls, int n, int *stray_sig)
{
	struct __ptrace_syscall_info info;
	struct user_regs_struct saved, back, r;
	int i, err = 0, e, op;

	*stray_sig = 0;
	if (ptrace(PTRACE_GETREGS, tid, NULL, &saved))
		return -errno;
	back = saved;
	memset(&info, 0, sizeof(info));
	if (ptrace(PTRACE_GET_SYSCALL_INFO, tid, (void *)sizeof(info), &info) > 0 &&
	    info.op == PTRACE_SYSCALL_INFO_ENTRY) {
		/*
		 * At a system call's entry (the loader stepped one call at a time): that call has
		 * not run. It is skipped now and made again when the thread goes back, from the
		 * instruction that made it.
		 */
		r = saved;
		r.orig_rax = (uint64_t)-1;
		if (ptrace(PTRACE_SETREGS, tid, NULL, &r) || ptrace(PTRACE_SYSCALL, tid, NULL, NULL))
			return -errno;
		op = next_syscall_stop(tid, stray_sig);
		if (op != PTRACE_SYSCALL_INFO_EXIT) {
			err = op < 0 ? op : -EPROTO;
			goto restore;
		}
		back.rax = saved.orig_rax;
		back.rip -= 2;
		back.orig_rax = (uint64_t)-1;
	} else if ((int64_t)saved.orig_rax >= 0) {
		switch ((int64_t)saved.rax) {
		case -ERESTARTSYS:
		case -ERESTARTNOINTR:
		case -ERESTARTNOHAND:
			back.rax = saved.orig_rax;
			back.rip -= 2;
			back.orig_rax = (uint64_t)-1;
			break;
		case -ERESTART_RESTARTBLOCK:
			back.rax = SYS_restart_syscall;
			back.rip -= 2;
			back.orig_rax = (uint64_t)-1;
			break;
		}
	}
	for (i = 0; i < n; i++) {
		calls[i].ret = -EINPROGRESS;
		err = run_one(tid, &saved, insn, &calls[i], stray_sig);
		if (err || calls[i].ret < 0)
			break;
	}
restore:
	if (err == -ESRCH)
		return err;
	/* whatever happened above, the thread gets its own registers back */
	e = ptrace(PTRACE_SETREGS, tid, NULL, &back) ? -errno : 0;
	return err ? err : e;
}

/* Offset in the vDSO image at base (in this process) of its first `syscall` instruction. */
static int vdso_syscall_offset(uint64_t base, size_t len, uint64_t *off)
{
	Elf *e = elf_memory((char *)base, len);
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	int err = -ENOENT;
	csh cs;

	if (!e)
		return -ENOEXEC;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK) {
		elf_end(e);
		return -ENOMEM;
	}
	while (err == -ENOENT && (scn = elf_nextscn(e, scn))) {
		const uint8_t *code;
		uint64_t addr;
		size_t size;
		cs_insn *insn;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || sh.sh_offset + sh.sh_size > len)
			continue;
		code = (const uint8_t *)base + sh.sh_offset;
		size = sh.sh_size;
		addr = sh.sh_offset;
		insn = cs_malloc(cs);
		if (!insn) {
			err = -ENOMEM;
			break;
		}
		/* a linear sweep of compiler output: stops at the first undecodable byte */
		while (cs_disasm_iter(cs, &code, &size, &addr, insn))
			if (insn->id == X86_INS_SYSCALL) {
				*off = insn->address;
				err = 0;
				break;
			}
		cs_free(insn, 1);
	}
	cs_close(&cs);
	elf_end(e);
	return err;
}

/* Start and length of pid's [vdso] mapping. */
static int vdso_of(pid_t pid, uint64_t *start, uint64_t *len)
{
	char path[64], line[512];
	unsigned long long s, e;
	int err = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") && sscanf(line, "%llx-%llx", &s, &e) == 2) {
			*start = s;
			*len = e - s;
			err = 0;
			break;
		}
	fclose(f);
	return err;
}

int inject__find_syscall(pid_t pid, uint64_t *insn)
{
	uint64_t mine = getauxval(AT_SYSINFO_EHDR), my_len, start, len, off;
	uint8_t *theirs;
	int err;

	if (!mine)
		return -ENOENT;
	elf_version(EV_CURRENT);
	err = vdso_of(getpid(), &start, &my_len);
	if (err)
		return err;
	err = vdso_of(pid, &start, &len);
	if (err)
		return err;
	/* one kernel, one vDSO: the image must be ours byte for byte, or nothing is assumed */
	if (len != my_len)
		return -ENOENT;
	theirs = malloc(len);
	if (!theirs)
		return -ENOMEM;
	err = proc__read(pid, start, theirs, len);
	if (!err && memcmp(theirs, (void *)mine, len))
		err = -ENOENT;
	free(theirs);
	if (err)
		return err;
	err = vdso_syscall_offset(mine, len, &off);
	if (!err)
		*insn = start + off;
	return err;
}
