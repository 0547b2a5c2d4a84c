// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Running system calls in a stopped thread of the target (what debuggers and CRIU's parasite
 * loader do), kept to the minimum: registers and signal mask are saved, every signal the
 * target could take is blocked, the thread is pointed at a `syscall` instruction with the
 * call's number and arguments and resumed up to the exit of that one call (PTRACE_SYSCALL, the
 * stops told apart by PTRACE_GET_SYSCALL_INFO, not by a signal number). Then it gets its mask
 * and registers back and is sent into a PTRACE_EVENT_STOP by PTRACE_INTERRUPT.
 *
 * Blocking signals keeps each signal of the target's in the kernel's queue, with its siginfo,
 * until the thread is its own again: none interrupts our calls, runs a handler on our
 * registers, or is lost. Only SIGSTOP (and SIGKILL) cannot be blocked: a SIGSTOP seen meanwhile
 * is held back and sent again after.
 *
 * Going back through PTRACE_INTERRUPT rather than straight from our call's exit stop leaves
 * the thread's own interrupted system call to the kernel: the trap is taken on the way to user
 * mode, where the kernel decides, by its rules and with the thread's own registers, whether
 * that call is restarted or returns EINTR because a handler runs, as it would have without us.
 *
 * pyuprof killed by SIGKILL while the thread has our registers: the tracer's death resumes the
 * thread from where it stands. Our calls run with rsp = rbp = 0, so whatever follows the
 * `syscall` faults at its first use of the stack (the vDSO's instruction is followed by
 * `leave`, an epilogue or `ret`), and tramp.c runs every call after the first from a
 * `syscall; ud2` stub of its own: the thread dies at once, it never runs on with a wrong value.
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
#include <time.h>
#include <unistd.h>
#include "base/log.h"
#include "base/proc.h"
#include "inject/inject.h"

/* How many stops that are not ours a call may meet before it is given up. */
#define MAX_OTHER_STOPS 64

/*
 * For the tests of a death or a signal in the middle of a call: PYUPROF_TEST_INJECT_PAUSE=
 * TID,K,MS holds the K-th call (from 1) injected into thread TID for MS milliseconds at its
 * entry, the thread standing inside it with our registers, and says so on stderr.
 */
static void test_pause(pid_t tid, long nr)
{
	static int parsed, who, at, ms, count;
	const char *env;

	if (!parsed) {
		parsed = 1;
		env = getenv("PYUPROF_TEST_INJECT_PAUSE");
		if (!env || sscanf(env, "%d,%d,%d", &who, &at, &ms) != 3)
			who = 0;
	}
	if (!who || tid != who || ++count != at)
		return;
	wlog("test: injected call %d (system call %ld) held %d ms in thread %d", at, nr, ms, tid);
	nanosleep(&(struct timespec){ ms / 1000, (ms % 1000) * 1000000L }, NULL);
}

/* Waits for tid's next ptrace-stop (*st its status). Returns 0, -ESRCH if the thread is
 * gone, or -errno. */
static int wait_stop(pid_t tid, int *st)
{
	for (;;) {
		if (waitpid(tid, st, __WALL) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (WIFEXITED(*st) || WIFSIGNALED(*st))
			return -ESRCH;
		if (WIFSTOPPED(*st))
			return 0;
	}
}

/*
 * Waits for tid's next syscall stop, resuming it over any other stop (a SIGSTOP is held back
 * in *resend, a fault or a group-stop passed over). Returns the stop's PTRACE_SYSCALL_INFO_*
 * op, or -errno (-ESRCH: the thread is gone; -EPROTO: stops it does not understand, the
 * thread left standing in the last of them so that its registers can be put back).
 */
static int next_syscall_stop(pid_t tid, sigset_t *resend)
{
	struct __ptrace_syscall_info info;
	int st, sig, others, err;

	for (others = 0;; others++) {
		err = wait_stop(tid, &st);
		if (err)
			return err;
		memset(&info, 0, sizeof(info));
		if (ptrace(PTRACE_GET_SYSCALL_INFO, tid, (void *)sizeof(info), &info) > 0 &&
		    (info.op == PTRACE_SYSCALL_INFO_ENTRY || info.op == PTRACE_SYSCALL_INFO_EXIT))
			return info.op;
		/* a syscall stop the kernel does not describe: PTRACE_O_TRACESYSGOOD is off */
		if (WSTOPSIG(st) == (SIGTRAP | 0x80))
			return -EPROTO;
		if (others == MAX_OTHER_STOPS)
			return -EPROTO;
		sig = WSTOPSIG(st);
		/* a signal-delivery stop (no event) with every other signal blocked: SIGSTOP, or a
		 * fault no call of ours makes; either is sent again once the thread is its own */
		if (!(st >> 16))
			sigaddset(resend, sig);
		if (ptrace(PTRACE_SYSCALL, tid, NULL, NULL))
			return -errno;
	}
}

/* One call, from regs base; on return the thread stands in the call's exit stop. */
static int run_one(pid_t tid, const struct user_regs_struct *base, uint64_t insn,
		   struct inject_call *c, sigset_t *resend)
{
	struct __ptrace_syscall_info info;
	struct user_regs_struct r = *base;
	int op;

	r.rip = c->via ? c->via : insn;
	r.rsp = r.rbp = 0; /* a thread let go here faults at once: see the top of the file */
	r.rax = (uint64_t)c->nr;
	r.orig_rax = (uint64_t)-1; /* no restart handling of these registers on the way out */
	r.rdi = c->args[0];
	r.rsi = c->args[1];
	r.rdx = c->args[2];
	r.r10 = c->args[3];
	r.r8 = c->args[4];
	r.r9 = c->args[5];
	if (ptrace(PTRACE_SETREGS, tid, NULL, &r) || ptrace(PTRACE_SYSCALL, tid, NULL, NULL))
		return -errno;
	op = next_syscall_stop(tid, resend);
	if (op < 0)
		return op;
	/* the call made is the one asked for, or it is not let through */
	memset(&info, 0, sizeof(info));
	if (op != PTRACE_SYSCALL_INFO_ENTRY ||
	    ptrace(PTRACE_GET_SYSCALL_INFO, tid, (void *)sizeof(info), &info) <= 0 ||
	    info.entry.nr != (uint64_t)c->nr) {
		if (op != PTRACE_SYSCALL_INFO_ENTRY)
			return -EPROTO;
		/* skipped (orig_rax -1), so that the registers are put back at its exit stop */
		if (!ptrace(PTRACE_GETREGS, tid, NULL, &r)) {
			r.orig_rax = (uint64_t)-1;
			if (!ptrace(PTRACE_SETREGS, tid, NULL, &r) &&
			    !ptrace(PTRACE_SYSCALL, tid, NULL, NULL))
				next_syscall_stop(tid, resend);
		}
		return -EPROTO;
	}
	test_pause(tid, c->nr);
	if (ptrace(PTRACE_SYSCALL, tid, NULL, NULL))
		return -errno;
	op = next_syscall_stop(tid, resend);
	if (op != PTRACE_SYSCALL_INFO_EXIT || ptrace(PTRACE_GETREGS, tid, NULL, &r))
		return op < 0 ? op : -EPROTO;
	c->ret = (int64_t)r.rax;
	return 0;
}

/*
 * Gives the thread its mask and registers back and sends it into a PTRACE_EVENT_STOP, with
 * the signals held back sent again. The interrupt is asked first: should pyuprof die after,
 * the kernel's detach resumes the thread through the same signal path. The mask goes back
 * before the registers: killed between the two, the thread runs on ours (and faults), never
 * on its own with every signal blocked.
 */
static int give_back(pid_t tid, const struct user_regs_struct *back, uint64_t mask,
		     const sigset_t *resend)
{
	int st, sig, err = 0;

	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) ||
	    ptrace(PTRACE_SETSIGMASK, tid, (void *)sizeof(mask), &mask) ||
	    ptrace(PTRACE_SETREGS, tid, NULL, back) || ptrace(PTRACE_CONT, tid, NULL, NULL))
		return -errno;
	for (;;) {
		err = wait_stop(tid, &st);
		if (err)
			return err;
		if ((st >> 16) == PTRACE_EVENT_STOP)
			break;
		/* the trap comes before any signal is taken; anything else is passed on */
		sig = !(st >> 16) ? WSTOPSIG(st) : 0;
		if (ptrace(PTRACE_CONT, tid, NULL, (void *)(long)sig))
			return -errno;
	}
	for (sig = 1; sig < NSIG; sig++)
		if (sigismember(resend, sig) && syscall(SYS_tkill, tid, sig) && !err)
			err = -errno;
	return err;
}

/* The event of the ptrace-stop tid stands in (0: none, a signal's or our interrupt's). */
static int stop_event(pid_t tid)
{
	siginfo_t si;

	if (ptrace(PTRACE_GETSIGINFO, tid, NULL, &si) || si.si_signo != SIGTRAP)
		return 0;
	return si.si_code >> 8;
}

int inject__syscalls(pid_t tid, uint64_t insn, struct inject_call *calls, int n)
{
	struct __ptrace_syscall_info info;
	struct user_regs_struct saved, back, r;
	uint64_t mask, none = ~0ULL;
	sigset_t resend;
	int i, err = 0, e, op, event;

	/* a seccomp filter (or strict mode; unknown counts as one) may forbid our calls, or kill
	 * for them */
	if (proc__status_field(tid, "Seccomp", 1))
		return -EBUSY;
	event = stop_event(tid);
	if (event == PTRACE_EVENT_VFORK)
		return -EBUSY; /* its own call waits for the child, which is held: it would hang */
	sigemptyset(&resend);
	if (ptrace(PTRACE_GETREGS, tid, NULL, &saved) ||
	    ptrace(PTRACE_GETSIGMASK, tid, (void *)sizeof(mask), &mask) ||
	    ptrace(PTRACE_SETSIGMASK, tid, (void *)sizeof(none), &none))
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
		if (ptrace(PTRACE_SETREGS, tid, NULL, &r) || ptrace(PTRACE_SYSCALL, tid, NULL, NULL)) {
			err = -errno;
			goto restore;
		}
		op = next_syscall_stop(tid, &resend);
		if (op != PTRACE_SYSCALL_INFO_EXIT) {
			err = op < 0 ? op : -EPROTO;
			goto restore;
		}
		back.rax = saved.orig_rax;
		back.rip -= 2;
		back.orig_rax = (uint64_t)-1;
	} else if (event == PTRACE_EVENT_FORK || event == PTRACE_EVENT_CLONE ||
		   event == PTRACE_EVENT_EXEC || event == PTRACE_EVENT_VFORK_DONE) {
		/* inside a call of its own (fork, exec) that has not set its result yet: the call
		 * ends first, so that what it returns is in the registers put back */
		if (ptrace(PTRACE_SYSCALL, tid, NULL, NULL)) {
			err = -errno;
			goto restore;
		}
		op = next_syscall_stop(tid, &resend);
		if (op != PTRACE_SYSCALL_INFO_EXIT || ptrace(PTRACE_GETREGS, tid, NULL, &saved)) {
			err = op < 0 ? op : -EPROTO;
			goto restore;
		}
		back = saved;
	}
	for (i = 0; i < n; i++) {
		calls[i].ret = -EINPROGRESS;
		err = run_one(tid, &saved, insn, &calls[i], &resend);
		if (err || calls[i].ret < 0)
			break;
	}
restore:
	if (err == -ESRCH)
		return err;
	/* whatever happened above, the thread gets its own mask and registers back */
	e = give_back(tid, &back, mask, &resend);
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
