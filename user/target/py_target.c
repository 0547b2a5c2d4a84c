// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Locating and identifying the CPython runtime of a process (cpython-internals.md section 8).
 * The object that defines PyEval_EvalFrameEx (every 2.7 and 3.x build) is the interpreter:
 * libpythonX.Y.so with --enable-shared, the executable itself in Debian's static build.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base/cache.h"
#include "base/log.h"
#include "base/proc.h"
#include "pyuprof.h"
#include "target/elf_syms.h"
#include "target/inline_init.h"
#include "target/proc_root.h"
#include "target/py_target.h"

#define EVAL_SYM "_PyEval_EvalFrameDefault"

static int detect_version(struct elf_file *ef, struct py_target *t)
{
	uint64_t vaddr, hex = 0;
	char cookie[8];

	/* 3.13+: _PyRuntime starts with _Py_DebugOffsets: "xdebugpy", then PY_VERSION_HEX */
	if (!elf_file__sym(ef, "_PyRuntime", &vaddr, NULL) &&
	    !elf_file__read(ef, vaddr, cookie, sizeof(cookie)) &&
	    !memcmp(cookie, "xdebugpy", 8))
		elf_file__read(ef, vaddr + 8, &hex, sizeof(hex));
	/* 3.11+: the exported constant Py_Version */
	if (!hex && !elf_file__sym(ef, "Py_Version", &vaddr, NULL))
		elf_file__read(ef, vaddr, &hex, sizeof(hex));
	if (hex) {
		t->major = (hex >> 24) & 0xff;
		t->minor = (hex >> 16) & 0xff;
		t->patch = (hex >> 8) & 0xff;
		snprintf(t->version, sizeof(t->version), "%u.%u.%u", t->major, t->minor, t->patch);
		return 0;
	}
	/* older: symbols that appeared in each minor version (internals 8.2) */
	t->major = 3;
	t->patch = 0;
	if (!elf_file__has_sym(ef, EVAL_SYM)) {
		t->major = 2;
		t->minor = 7;
	} else if (!elf_file__has_sym(ef, "_PyRuntime")) {
		t->minor = 6;
	} else if (elf_file__has_sym(ef, "PyIter_Send")) {
		t->minor = 10;
	} else if (elf_file__has_sym(ef, "PyFrame_GetCode")) {
		t->minor = 9;
	} else if (elf_file__has_sym(ef, "PyCode_NewWithPosOnlyArgs")) {
		t->minor = 8;
	} else {
		t->minor = 7;
	}
	snprintf(t->version, sizeof(t->version), "%u.%u", t->major, t->minor);
	return 0;
}

/* The displacement in `mov disp32(%rdi),%rax` that starts the eval_frame getter (internals 8.4),
 * after an endbr64 in builds with CET (Debian's 3.14 and 3.15). */
static int check_eval_frame_offset(struct elf_file *ef, const struct py_target *t, char *why,
				   size_t why_len)
{
	static const unsigned char endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	unsigned want = t->offsets->bpf.PyInterpreterState_eval_frame;
	unsigned char buf[11], *b = buf;
	uint64_t vaddr;
	uint32_t disp;

	if (!want || elf_file__sym(ef, "_PyInterpreterState_GetEvalFrameFunc", &vaddr, NULL) ||
	    elf_file__read(ef, vaddr, buf, sizeof(buf)))
		return 0;
	if (!memcmp(b, endbr64, sizeof(endbr64)))
		b += sizeof(endbr64);
	if (b[0] != 0x48 || b[1] != 0x8b || b[2] != 0x87) {
		vlog("eval_frame getter has an unexpected instruction sequence; not cross-checked");
		return 0;
	}
	memcpy(&disp, b + 3, 4);
	if (disp != want) {
		snprintf(why, why_len,
			 "Python %s keeps eval_frame at offset %u, pyuprof's table says %u: "
			 "unsupported build", t->version, disp, want);
		return -EINVAL;
	}
	return 0;
}

/*
 * 3.13+: the offsets the interpreter publishes (_Py_DebugOffsets, at the start of _PyRuntime's
 * initialised data, so read from the file) against the table: a build whose layout moved, or
 * a free-threaded one (whose objects and frames the table does not describe), is refused.
 */
static int check_debug_offsets(struct elf_file *ef, struct py_target *t, char *why,
			       size_t why_len)
{
	char buf[2048], detail[256] = "";
	uint64_t vaddr;
	int err;

	if (t->major != 3 || t->minor < 13)
		return 0;
	if (elf_file__sym(ef, "_PyRuntime", &vaddr, NULL) ||
	    elf_file__read(ef, vaddr, buf, sizeof(buf))) {
		snprintf(why, why_len, "Python %s: cannot read its _PyRuntime, whose offsets pyuprof "
			 "checks its table against: unsupported build", t->version);
		return -EINVAL;
	}
	if (py_layouts__free_threaded(buf, sizeof(buf))) {
		snprintf(why, why_len, "Python %s is a free-threaded build (no GIL), which pyuprof does "
			 "not record: its staging area relies on the GIL to order the calls it "
			 "stages (docs/limits.md)", t->version);
		return -ENOTSUP;
	}
	err = py_layouts__check_debug_offsets(t->offsets, buf, sizeof(buf), detail,
					      sizeof(detail));
	/* the main interpreter, the runtime state's last member, where the build puts it: it
	 * moved within 3.13 (88352 in 3.13.0, 88424 in Debian's 3.13.18), and a wrong one is
	 * written through (hook.c's preinit) */
	if (!err && py_layouts__main_interpreter(buf, sizeof(buf), &t->main_interp_off)) {
		snprintf(why, why_len, "Python %s's own layout (_Py_DebugOffsets) gives no place for "
			 "its main interpreter: unsupported build", t->version);
		return -EINVAL;
	}
	if (err) {
		snprintf(why, why_len, "Python %s's own layout (_Py_DebugOffsets) does not match "
			 "pyuprof's table for %u.%u (%s): unsupported build", t->version, t->major,
			 t->minor, detail);
		return err == -ENOTSUP ? -ENOTSUP : -EINVAL;
	}
	return 0;
}

/* The addresses of the objects and functions C functions are recorded with (include/cfuncs.h),
 * those found. */
static void find_addrs(struct elf_file *ef, struct py_target *t)
{
	static const struct {
		const char *name;
		size_t at;
	} syms[] = {
		{ "PyCFunction_Type", offsetof(struct py_target, cfunction_type) },
		{ "PyCMethod_Type", offsetof(struct py_target, cmethod_type) },
		{ "PyMethodDescr_Type", offsetof(struct py_target, methoddescr_type) },
		{ "PyUnicode_Type", offsetof(struct py_target, unicode_type) },
		{ "PyType_Type", offsetof(struct py_target, type_type) },
		{ "PyModule_Type", offsetof(struct py_target, module_type) },
		{ "PyCode_Type", offsetof(struct py_target, code_type) },
		{ "PyBaseObject_Type", offsetof(struct py_target, object_type) },
		{ "PyFunction_Type", offsetof(struct py_target, function_type) },
		{ "PyUnicode_InternFromString", offsetof(struct py_target, api.intern) },
		{ "_PyType_Lookup", offsetof(struct py_target, api.type_lookup) },
		{ "_PyInstrumentation_MISSING", offsetof(struct py_target, missing_addr) },
		{ "PySys_GetObject", offsetof(struct py_target, api.sys_getobject) },
		{ "PyObject_GetAttrString", offsetof(struct py_target, api.getattr) },
		{ "PyLong_FromLong", offsetof(struct py_target, api.long_from) },
		{ "PyObject_Vectorcall", offsetof(struct py_target, api.vectorcall) },
		{ "Py_DecRef", offsetof(struct py_target, api.decref) },
		{ "PyErr_GetRaisedException", offsetof(struct py_target, api.get_exc) },
		{ "PyErr_SetRaisedException", offsetof(struct py_target, api.set_exc) },
	};
	uint64_t vaddr;

	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++)
		if (!elf_file__sym(ef, syms[i].name, &vaddr, NULL))
			*(uint64_t *)((char *)t + syms[i].at) = t->bias + vaddr;
}

/*
 * A build stripped of _PyPerfTrampoline_Init (a local symbol: Debian's 3.14 and 3.15 have
 * only .dynsym): the entry of each copy the compiler made of it (Debian's libpython3.14 has
 * two), which reads the interpreter's eval_frame to refuse a hook that is not its own before
 * it raises "a custom eval frame is already present". Found from that string's loads: the
 * function around each (the call frame information's entry, which starts with the return
 * address alone on the stack, not a part split off a function) that loads eval_frame before
 * it. At the entry, not the load: a probed instruction runs before the signal that stops the
 * thread for pyuprof is taken. Returns how many were put into offs (file offsets): 0 where
 * the build raises no such error, -ENOENT where no copy is found.
 */
static int find_perf_checks(struct elf_file *ef, const struct py_target *t, uint64_t *offs,
			    int max)
{
	uint64_t refs[PERF_CHECKS_MAX], start, end, *loads;
	int nrefs, i, j, n = 0, nl;
	int64_t cfa;

	nrefs = elf_file__string_refs(ef, "Trampoline cannot be initialized as a custom eval "
				      "frame is already present", refs, PERF_CHECKS_MAX);
	if (nrefs <= 0)
		return 0; /* no such check (3.15: its trampoline runs the hook it finds) */
	for (i = 0; i < nrefs && n < max; i++) {
		if (elf_file__func_range(ef, refs[i], &start, &end) ||
		    elf_file__cfa_offset(ef, start, &cfa) || cfa != 8)
			continue;
		nl = elf_file__loads(ef, start, refs[i] - start,
				     t->offsets->bpf.PyInterpreterState_eval_frame, &loads);
		if (nl <= 0)
			continue;
		free(loads);
		for (j = 0; j < n; j++)
			if (offs[j] == start)
				break;
		if (j == n && !elf_file__vaddr_to_offset(ef, start, &offs[n]))
			n++;
	}
	return n ? n : -ENOENT;
}

/*
 * 3.11+: once the runtime is initialised, interpreters.main (after interpreters.head) points at
 * the main interpreter: it must be where pyuprof writes its hook and compares each call's
 * interpreter with. Before (launch mode, at the interpreter's mapping) it is NULL.
 */
static int check_main_interpreter(const struct py_target *t, char *why, size_t why_len)
{
	uint64_t main = 0;

	if (!t->main_interp_off || !t->runtime_addr ||
	    proc__read(t->pid, t->runtime_addr + t->offsets->PyRuntime_interpreters_head + 8, &main,
		       sizeof(main)) || !main || main == t->runtime_addr + t->main_interp_off)
		return 0;
	snprintf(why, why_len, "Python %s's main interpreter is at _PyRuntime+%lld, where pyuprof "
		 "reads +%llu: unsupported build", t->version,
		 (long long)(main - t->runtime_addr), (unsigned long long)t->main_interp_off);
	return -EINVAL;
}

/*
 * 3.13: the call that makes the object in CALL_ALLOC_AND_ENTER_INIT, which then runs __init__
 * inline (target/inline_init.h), found in the eval function [eval, eval + size). Not found:
 * no probe (try_object says so with -v).
 */
static void find_inline_init(struct elf_file *ef, struct py_target *t, uint64_t eval,
			     uint64_t size)
{
	uint32_t off = t->offsets->PyHeapTypeObject_spec_cache_init;
	struct inline_init s;

	if (!inline_init__find(ef, eval, size, off, &s) &&
	    !elf_file__vaddr_to_offset(ef, s.vaddr, &t->inline_init_offset)) {
		t->inline_init_reg = s.reg;
		return;
	}
	t->inline_init_offset = 0;
}

/*
 * The sites found by sweeping machine code (Debian's 3.11: ~30 ms, most of it the moves of
 * inline_subscr.c and probe_site.c, which read the whole eval function): the eval function's ret
 * instructions, 3.11's inline __getitem__ path, 3.13's inline __init__ call. Returns 0 or
 * -ENOMEM.
 */
static int sweep_sites(struct elf_file *ef, struct py_target *t, uint64_t vaddr, uint64_t size)
{
	struct inline_subscr getitem;

	/* 3.11: the path of the __getitem__ calls it runs inline whatever the hook says */
	if (t->major == 3 && t->minor == 11 &&
	    !inline_subscr__find(ef, vaddr, size, t->offsets->bpf.frame_back, &getitem) &&
	    !elf_file__vaddr_to_offset(ef, getitem.vaddr, &t->inline_getitem_offset))
		t->inline_getitem_reg = getitem.reg;
	/* 3.13: the __init__ calls its specialised class calls run inline whatever the hook says */
	if (t->offsets->PyHeapTypeObject_spec_cache_init)
		find_inline_init(ef, t, vaddr, size);
	/* only --exits ret needs them: a function that cannot be swept whole has none */
	t->nret = elf_file__ret_sites(ef, vaddr, size, &t->ret_offsets);
	if (t->nret < 0)
		t->nret = 0;
	/* a .cold part split off by GCC would hold more exits; none of ours has a ret (8.1) */
	if (t->nret && !elf_file__sym(ef, EVAL_SYM ".cold", &vaddr, &size) && size) {
		uint64_t *cold = NULL, *all;
		int nc = elf_file__ret_sites(ef, vaddr, size, &cold);

		if (nc < 0) {
			t->nret = 0; /* exits there would go unseen */
		} else if (nc > 0) {
			all = realloc(t->ret_offsets, (t->nret + nc) * sizeof(*all));
			if (!all) {
				free(cold);
				return -ENOMEM;
			}
			memcpy(all + t->nret, cold, nc * sizeof(*all));
			t->ret_offsets = all;
			t->nret += nc;
		}
		free(cold);
	}
	return 0;
}

#define SITES_KIND "interpreter-sites"
#define SITES_MAX_RET 128 /* ret sites a cached line holds at most */

/* t's swept sites as a cache value: "GETITEM REG INIT REG NRET RET...", hex. */
static void sites_put(const struct py_target *t, const char *key)
{
	char value[SITES_MAX_RET * 17 + 64];
	int n, i;

	if (t->nret > SITES_MAX_RET)
		return;
	n = snprintf(value, sizeof(value), "%llx %x %llx %x %x",
		     (unsigned long long)t->inline_getitem_offset, t->inline_getitem_reg,
		     (unsigned long long)t->inline_init_offset, t->inline_init_reg, t->nret);
	for (i = 0; i < t->nret; i++)
		n += snprintf(value + n, sizeof(value) - n, " %llx",
			      (unsigned long long)t->ret_offsets[i]);
	cache__put(SITES_KIND, key, value);
}

/* t's swept sites from a cache value: 0, or -EINVAL (then nothing of t is changed). */
static int sites_get(struct py_target *t, const char *value)
{
	unsigned long long getitem, init, ret;
	unsigned reg, init_reg, nret;
	uint64_t *offsets;
	int used;

	if (sscanf(value, "%llx %x %llx %x %x%n", &getitem, &reg, &init, &init_reg, &nret,
		   &used) != 5 ||
	    nret > SITES_MAX_RET)
		return -EINVAL;
	offsets = nret ? calloc(nret, sizeof(*offsets)) : NULL;
	if (nret && !offsets)
		return -EINVAL;
	value += used;
	for (unsigned i = 0; i < nret; i++, value += used) {
		if (sscanf(value, " %llx%n", &ret, &used) != 1) {
			free(offsets);
			return -EINVAL;
		}
		offsets[i] = ret;
	}
	t->inline_getitem_offset = getitem;
	t->inline_getitem_reg = reg;
	t->inline_init_offset = init;
	t->inline_init_reg = init_reg;
	t->nret = (int)nret;
	t->ret_offsets = offsets;
	return 0;
}

/* The swept sites of the interpreter file at path: kept per file (base/cache.h), swept for one
 * not seen before. Returns 0 or -ENOMEM. */
static int swept_sites(struct elf_file *ef, struct py_target *t, const char *path, uint64_t vaddr,
		       uint64_t size)
{
	char key[PATH_MAX + 256], id[160], value[SITES_MAX_RET * 17 + 64];
	int err;

	/* (bench/inline_probes.sh's sites as they were are not kept) */
	if (getenv("PYUPROF_BENCH_SINGLE_STEP") || cache__file_id(t->path, id, sizeof(id)))
		return sweep_sites(ef, t, vaddr, size);
	snprintf(key, sizeof(key), "%s %s", id, path);
	if (!cache__get(SITES_KIND, key, value, sizeof(value)) && !sites_get(t, value))
		return 0;
	err = sweep_sites(ef, t, vaddr, size);
	if (!err)
		sites_put(t, key);
	return err;
}

/* Tries one mapped object; returns 0 if it holds the interpreter (and fills t), else -ENOEXEC. */
static int try_object(struct py_target *t, const struct mapping *maps, int n,
		      const struct mapping *m, char *why, size_t why_len)
{
	uint64_t vaddr, size, start = UINT64_MAX;
	const char *path = m->path;
	struct elf_file *ef;
	int i, err;

	/* the mapping itself: in another root (a chroot, a container) its path is not one here */
	if (proc_root__mapped_file(t->pid, m->start, m->end, m->path, t->path, sizeof(t->path)))
		return -ENOEXEC;
	ef = elf_file__open(t->path);
	if (!ef)
		return -ENOEXEC;
	if (!elf_file__has_sym(ef, "PyEval_EvalFrameEx")) {
		elf_file__close(ef);
		return -ENOEXEC;
	}
	proc_root__describe(t->pid, m->path, t->path, t->shown, sizeof(t->shown));
	path = t->shown;
	detect_version(ef, t);
	t->offsets = py_layouts__find(t->major, t->minor, t->patch);
	if (!t->offsets) {
		snprintf(why, why_len, "Python %s is not supported (supported: %s)", t->version,
			 py_layouts__supported());
		err = -ENOTSUP;
		goto out;
	}
	/* first: a free-threaded build would fail the other checks less clearly */
	err = check_debug_offsets(ef, t, why, why_len);
	if (err)
		goto out;
	for (i = 0; i < n; i++)
		if (!strcmp(maps[i].path, m->path) && maps[i].offset == 0 && maps[i].start < start)
			start = maps[i].start;
	if (start == UINT64_MAX) {
		snprintf(why, why_len, "cannot find where %s is loaded", path);
		err = -ENOEXEC;
		goto out;
	}
	t->bias = start - elf_file__base_vaddr(ef);

	err = elf_file__sym(ef, EVAL_SYM, &vaddr, &size);
	if (!err)
		err = elf_file__vaddr_to_offset(ef, vaddr, &t->eval_offset);
	if (err) {
		snprintf(why, why_len, "%s has no usable %s symbol", path, EVAL_SYM);
		goto out;
	}
	t->eval_addr = t->bias + vaddr;
	/* from the file: the trampoline replays the first instruction (a probe may sit on it in
	 * memory) */
	if (elf_file__read(ef, vaddr, t->eval_head, sizeof(t->eval_head)))
		memset(t->eval_head, 0, sizeof(t->eval_head));
	err = swept_sites(ef, t, path, vaddr, size);
	if (err)
		goto out;
	/* such calls that call another Python function are recovered from the frame chain, and
	 * the summary counts them */
	if (t->offsets->PyHeapTypeObject_spec_cache_init && !t->inline_init_offset)
		vlog("%s: the path of the __init__ calls Python %s runs inline (a specialised class "
		     "call) is not found: those that call no other Python function are not seen",
		     path, t->version);
	if (t->offsets->bpf.PyInterpreterState_eval_frame &&
	    !elf_file__sym(ef, "_PyInterpreterState_SetEvalFrameFunc", &vaddr, &size) &&
	    !elf_file__vaddr_to_offset(ef, vaddr, &t->setter_offset)) {
		t->nsetter_ret = elf_file__ret_sites(ef, vaddr, size, &t->setter_ret_offsets);
		if (t->nsetter_ret <= 0) {
			t->nsetter_ret = 0;
			t->setter_offset = 0;
		}
	}
	if (!elf_file__sym(ef, "_PyRuntime", &vaddr, NULL))
		t->runtime_addr = t->bias + vaddr;
	if (!t->main_interp_off) /* before 3.13: the table's (3.11, 3.12: checked by gen-py-offsets) */
		t->main_interp_off = t->offsets->PyRuntime_main_interpreter;
	err = check_main_interpreter(t, why, why_len);
	if (err)
		goto out;
	if (!elf_file__sym(ef, "_Py_NoneStruct", &vaddr, NULL))
		t->none_addr = t->bias + vaddr;
	if (!elf_file__sym(ef, "PyErr_SetString", &vaddr, NULL))
		t->seterr_addr = t->bias + vaddr;
	if (!elf_file__sym(ef, "PyExc_RecursionError", &vaddr, NULL))
		t->recursion_error_addr = t->bias + vaddr;
	find_addrs(ef, t);
	if (t->setter_offset && !elf_file__sym(ef, "_PyPerfTrampoline_Init", &vaddr, &size) &&
	    !elf_file__vaddr_to_offset(ef, vaddr, &t->perf_init_offset)) {
		t->nperf_ret = elf_file__ret_sites(ef, vaddr, size, &t->perf_ret_offsets);
		if (t->nperf_ret <= 0) {
			t->nperf_ret = 0;
			t->perf_init_offset = 0;
		}
	} else if (t->setter_offset && t->minor >= 12) {
		t->nperf_check = find_perf_checks(ef, t, t->perf_check_offsets, PERF_CHECKS_MAX);
		if (t->nperf_check < 0)
			vlog("%s: its perf trampoline's check of the eval_frame hook is not found: "
			     "-X perf and sys.activate_stack_trampoline() refuse to start while "
			     "recorded", path);
		if (t->nperf_check < 0)
			t->nperf_check = 0;
	}

	/* 3.12+: how calls CPython would run inline reach the hook (a table too large for the
	 * trampoline leaves the budget as any hook does, which is said) */
	if (t->offsets->eval_c_units && inline_paths__find(ef, t->minor, t->bias, &t->paths))
		wlog("%s: too many call sites in CPython's call machinery: calls are not given back "
		     "the C recursion budget the hook takes (deep recursions may raise "
		     "RecursionError earlier than natively)", path);

	/* 3.11 built with USDT probes (Debian): frame exits, inline ones included */
	if (t->major == 3 && t->minor == 11)
		elf_file__usdt(ef, "python", "function__return", &t->exit_probe);

	err = check_eval_frame_offset(ef, t, why, why_len);
out:
	elf_file__close(ef);
	return err;
}

static int likely_first(const char *path, const char *exe)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strcmp(path, exe) || !strncmp(base, "libpython", 9);
}

int py_target__find(pid_t pid, struct py_target *t, char *why, size_t why_len)
{
	char link[64], exe[PATH_MAX] = "";
	struct mapping *maps = NULL;
	int n, i, pass, err = -ENOEXEC;
	ssize_t len;

	memset(t, 0, sizeof(*t));
	t->pid = pid;
	if (proc__alive(pid)) {
		snprintf(why, why_len, "no process with pid %d", pid);
		return -ESRCH;
	}
	n = proc__maps(pid, &maps);
	if (n < 0) {
		snprintf(why, why_len, "cannot read /proc/%d/maps: %s", pid, strerror(-n));
		return n;
	}
	snprintf(link, sizeof(link), "/proc/%d/exe", pid);
	len = readlink(link, exe, sizeof(exe) - 1);
	exe[len > 0 ? len : 0] = 0;

	/* the executable and libpython* first: big libraries (torch) are slow to scan */
	for (pass = 0; pass < 2 && err == -ENOEXEC; pass++) {
		for (i = 0; i < n && err == -ENOEXEC; i++) {
			/* (a file deleted since it was mapped is opened as mapped, too) */
			if (maps[i].offset || likely_first(maps[i].path, exe) != !pass)
				continue;
			err = try_object(t, maps, n, &maps[i], why, why_len);
		}
	}
	free(maps);
	if (!err) {
		char libc_why[300];

		t->libc = thread_block__libc(pid, libc_why, sizeof(libc_why));
		thread_block__main_stack(pid, &t->main_stack_low, &t->main_stack_span);
	}
	if (err == -ENOEXEC && !*why)
		snprintf(why, why_len, "pid %d is not a Python process (no CPython interpreter is "
			 "loaded in it)", pid);
	if (err)
		py_target__free(t);
	return err;
}

void py_target__free(struct py_target *t)
{
	free(t->ret_offsets);
	free(t->setter_ret_offsets);
	free(t->perf_ret_offsets);
	t->ret_offsets = t->setter_ret_offsets = t->perf_ret_offsets = NULL;
	t->nret = t->nsetter_ret = t->nperf_ret = 0;
}

uint64_t py_target__current_frame(const struct py_target *t, uint64_t tstate)
{
	const struct py_offsets_entry *o = t->offsets;
	uint64_t frame = 0, cframe = 0;

	if (o->PyThreadState_frame)
		proc__read(t->pid, tstate + o->PyThreadState_frame, &frame, sizeof(frame));
	else if (o->bpf.caller_mode == CALLER_FROM_TSTATE)
		proc__read(t->pid, tstate + o->bpf.PyThreadState_current_frame, &frame,
			  sizeof(frame));
	else if (!proc__read(t->pid, tstate + o->bpf.PyThreadState_cframe, &cframe,
			    sizeof(cframe)) && cframe)
		proc__read(t->pid, cframe + o->bpf.PyCFrame_current_frame, &frame, sizeof(frame));
	return frame;
}

uint64_t py_target__frame_code(const struct py_target *t, uint64_t frame)
{
	const struct py_offsets *o = &t->offsets->bpf;
	uint64_t code;

	if (proc__read(t->pid, frame + o->frame_code, &code, sizeof(code)))
		return 0;
	return code & ~(uint64_t)o->stackref_tags;
}

/* A str's characters, raw, as the BPF side copies them (copy_str in pyuprof.bpf.c). */
uint8_t py_target__read_str(const struct py_target *t, uint64_t str, char *dst, size_t cap,
			    uint32_t *len_out)
{
	const struct py_offsets *o = &t->offsets->bpf;
	uint32_t state, kind;
	uint64_t data;
	int64_t len;
	size_t n;

	*len_out = 0;
	if (proc__read(t->pid, str + o->PyUnicode_length, &len, sizeof(len)) ||
	    proc__read(t->pid, str + o->PyUnicode_state, &state, sizeof(state)) || len < 0 ||
	    !(state & (1 << 5)))
		return STR_UNREADABLE;
	kind = (state >> 2) & 7;
	if (state & (1 << 6)) {
		data = str + o->PyASCIIObject_size;
		kind = STR_ASCII;
	} else {
		data = str + o->PyCompactUnicodeObject_size;
	}
	n = (size_t)len * (kind ? kind : 1);
	if (n > cap)
		n = cap;
	*len_out = (__u32)len;
	if (n && proc__read(t->pid, data, dst, n))
		return STR_UNREADABLE;
	return (uint8_t)kind;
}

/* 1 if code's type is named "code", 0 if not, -1 if unreadable. */
static int is_code(const struct py_target *t, uint64_t code)
{
	const struct py_offsets_entry *o = t->offsets;
	uint64_t type, name;
	char buf[5];

	if (!code || proc__read(t->pid, code + o->PyObject_ob_type, &type, sizeof(type)) ||
	    proc__read(t->pid, type + o->PyTypeObject_tp_name, &name, sizeof(name)) ||
	    proc__read(t->pid, name, buf, sizeof(buf)))
		return -1;
	return !memcmp(buf, "code", 5);
}

int py_target__check_live(const struct py_target *t, char *why, size_t why_len)
{
	const struct py_offsets_entry *o = t->offsets;
	uint64_t interp = 0, tstate = 0, frame, code;
	unsigned char owner;
	int n, depth, ok;

	if (!t->runtime_addr ||
	    proc__read(t->pid, t->runtime_addr + o->PyRuntime_interpreters_head, &interp,
		      sizeof(interp)) || !interp ||
	    proc__read(t->pid, interp + o->PyInterpreterState_threads_head, &tstate,
		      sizeof(tstate)))
		return 0;
	/* the threads are running: a frame may change under us, so only a clear answer counts */
	for (n = 0; tstate && n < 64; n++) {
		frame = py_target__current_frame(t, tstate);
		for (depth = 0; frame && depth < 16; depth++) {
			owner = 0;
			if (o->bpf.frame_owner)
				proc__read(t->pid, frame + o->bpf.frame_owner, &owner, 1);
			code = 0;
			if (owner < 3 && /* not a C-stack shim frame (3.12+) */
			    (code = py_target__frame_code(t, frame))) {
				ok = is_code(t, code);
				if (ok == 1)
					return 0;
				if (ok == 0) {
					snprintf(why, why_len, "the frames of pid %d do not hold code "
						 "objects where pyuprof's layout for Python %s says: "
						 "unsupported build", t->pid, t->version);
					return -EINVAL;
				}
			}
			if (proc__read(t->pid, frame + o->bpf.frame_back, &frame, sizeof(frame)))
				break;
		}
		if (proc__read(t->pid, tstate + o->PyThreadState_next, &tstate, sizeof(tstate)))
			break;
	}
	return 0;
}
