/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Unit tests for user/target/py_layouts.c: the table's shape (sorted, no overlapping patch ranges, the
 * lookups and their ENOTSUP), the per-version rules on which fields must be 0, and the 3.13
 * _Py_DebugOffsets check, run on the real struct read from the 3.13.0 libpython ELF file and on
 * copies of it with one field changed. The numbers themselves are checked against the builds by
 * scripts/gen-py-offsets.py --check.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <glob.h>
#include <libelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* By path: with -Iinclude first, a bare name could find the shared BPF header. */
#include "target/py_layouts.h"

#define DEBUG_SIZE 584 /* sizeof(_Py_DebugOffsets) in 3.13.0 */

static int n_run, n_failed;
static int case_failed;

#define CHECK(cond)                                                                        \
	do {                                                                               \
		if (!(cond)) {                                                             \
			printf("#   %s:%d: failed: %s\n", __FILE__, __LINE__, #cond);         \
			case_failed = 1;                                                   \
		}                                                                          \
	} while (0)

static void report(const char *name, const char *skip)
{
	n_run++;
	n_failed += case_failed;
	printf("%s %d - %s%s%s\n", case_failed ? "not ok" : "ok", n_run, name,
	       skip ? " # SKIP " : "", skip ? skip : "");
	case_failed = 0;
	fflush(stdout);
}

static int vcmp(const struct py_offsets_entry *a, const struct py_offsets_entry *b)
{
	if (a->major != b->major)
		return a->major < b->major ? -1 : 1;
	if (a->minor != b->minor)
		return a->minor < b->minor ? -1 : 1;
	if (a->patch_min != b->patch_min)
		return a->patch_min < b->patch_min ? -1 : 1;
	return 0;
}

static void test_sorted(void)
{
	size_t i, n = py_layouts__count();

	CHECK(n >= 6);
	for (i = 0; i < n; i++) {
		const struct py_offsets_entry *e = py_layouts__at(i);

		CHECK(e != NULL);
		if (!e)
			return;
		CHECK(e->patch_min <= e->patch_max);
		if (i)
			CHECK(vcmp(py_layouts__at(i - 1), e) < 0);
	}
	CHECK(py_layouts__at(n) == NULL);
}

static void test_no_overlap(void)
{
	size_t i, j, n = py_layouts__count();

	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++) {
			const struct py_offsets_entry *a = py_layouts__at(i);
			const struct py_offsets_entry *b = py_layouts__at(j);

			if (a->major == b->major && a->minor == b->minor)
				CHECK(a->patch_max < b->patch_min || b->patch_max < a->patch_min);
		}
}

static void test_find_supported(void)
{
	static const unsigned patches[] = { 0, 1, 2, 7, 13, 18, 255 };
	unsigned minor;
	size_t i;

	for (minor = 8; minor <= 13; minor++)
		for (i = 0; i < sizeof(patches) / sizeof(patches[0]); i++) {
			const struct py_offsets_entry *e = py_layouts__find(3, minor, patches[i]);

			CHECK(e != NULL);
			if (e)
				CHECK(e->major == 3 && e->minor == minor &&
				      e->patch_min <= patches[i] && patches[i] <= e->patch_max);
		}
	/* The builds the numbers were read from, and Debian's 3.11.2. */
	CHECK(py_layouts__find(3, 11, 2) == py_layouts__find(3, 11, 7));
}

static void test_find_unsupported(void)
{
	static const unsigned versions[][3] = {
		{ 2, 7, 18 }, { 3, 6, 15 }, { 3, 7, 16 }, { 3, 14, 0 }, { 3, 15, 0 },
		{ 3, 0, 0 },  { 4, 8, 0 },  { 0, 0, 0 },  { 3, 13, 256 },
	};
	size_t i;

	for (i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		errno = 0;
		CHECK(py_layouts__find(versions[i][0], versions[i][1], versions[i][2]) == NULL);
		CHECK(errno == ENOTSUP);
	}
}

static void test_supported_string(void)
{
	CHECK(!strcmp(py_layouts__supported(), "3.8, 3.9, 3.10, 3.11, 3.12, 3.13"));
}

/* Which argument holds what, and how the caller frame is found (cpython-internals.md 1, 9.3). */
static void test_calling_convention(void)
{
	unsigned minor;

	for (minor = 8; minor <= 13; minor++) {
		const struct py_offsets *b = &py_layouts__find(3, minor, 0)->bpf;

		CHECK(b->eval_frame_arg == (minor >= 9 ? 1u : 0u));
		CHECK(b->has_tstate_arg == (minor >= 9 ? 1u : 0u));
		CHECK(b->interp_frame == (minor >= 11 ? 1u : 0u));
		if (minor <= 10)
			CHECK(b->caller_mode == CALLER_FROM_F_BACK);
		else if (minor <= 12)
			CHECK(b->caller_mode == CALLER_FROM_CFRAME);
		else
			CHECK(b->caller_mode == CALLER_FROM_TSTATE);
	}
}

/* A field a version does not have must be 0: the BPF side and the hook code test for 0. */
static void test_zero_fields(void)
{
	unsigned minor;

	for (minor = 8; minor <= 13; minor++) {
		const struct py_offsets_entry *e = py_layouts__find(3, minor, 0);
		const struct py_offsets *b = &e->bpf;
		int iframe = minor >= 11, cframe = minor == 11 || minor == 12;

		CHECK(!b->frame_owner == !iframe);
		/* Writing eval_frame on <= 3.10 would clobber another field: it must stay 0. */
		CHECK(!b->PyInterpreterState_eval_frame == !iframe);
		CHECK(!e->PyThreadState_native_thread_id == !iframe);
		/* Before 3.11 the main interpreter is a heap object, not part of _PyRuntime. */
		CHECK(!e->PyRuntime_main_interpreter == !iframe);
		CHECK(!e->PyThreadState_frame == !!iframe);
		CHECK(!e->PyInterpreterFrame_size == !iframe);
		CHECK(!e->PyCodeObject_co_qualname == !iframe);
		CHECK(!b->PyThreadState_cframe == !cframe);
		if (!cframe)
			CHECK(b->PyCFrame_current_frame == 0); /* 3.12's is 0 legitimately */
		CHECK(!b->PyThreadState_current_frame == (minor != 13));
		/* the C recursion budget the trampoline hands back: 3.12+ */
		CHECK(!e->PyThreadState_c_recursion_remaining == (minor < 12));
		CHECK(!e->PyThreadState_py_recursion_remaining == (minor < 12));
		CHECK(!e->PyThreadState_py_recursion_limit == (minor < 12));
		CHECK(e->eval_c_units == (minor < 12 ? 0 : 2));
		/* Always present. */
		CHECK(b->frame_back && b->PyCodeObject_co_name && b->PyCodeObject_co_filename);
		CHECK(b->PyCodeObject_co_flags && b->PyCodeObject_co_firstlineno);
		CHECK(b->PyUnicode_length && b->PyUnicode_state && b->PyASCIIObject_size);
		CHECK(b->PyCompactUnicodeObject_size > b->PyASCIIObject_size);
		CHECK(b->PyThreadState_interp && e->PyThreadState_next);
		CHECK(e->PyObject_ob_type && e->PyTypeObject_tp_name);
		CHECK(e->PyRuntime_interpreters_head && e->PyInterpreterState_threads_head);
	}
}

/* The numbers a wrong value of would corrupt the target rather than just mislabel a frame. */
static void test_write_targets(void)
{
	CHECK(py_layouts__find(3, 11, 7)->bpf.PyInterpreterState_eval_frame == 1424);
	CHECK(py_layouts__find(3, 12, 1)->bpf.PyInterpreterState_eval_frame == 1744);
	CHECK(py_layouts__find(3, 13, 0)->bpf.PyInterpreterState_eval_frame == 8472);
	CHECK(py_layouts__find(3, 12, 1)->PyThreadState_c_recursion_remaining == 36);
	CHECK(py_layouts__find(3, 13, 0)->PyThreadState_c_recursion_remaining == 52);
	CHECK(py_layouts__find(3, 12, 1)->PyThreadState_py_recursion_remaining == 28);
	CHECK(py_layouts__find(3, 13, 0)->PyThreadState_py_recursion_limit == 48);
}

/* Every entry's window fields fit (what the build checks); one byte past a window is caught. */
static void test_windows(void)
{
	struct py_offsets b;
	char why[160] = "";
	size_t i;

	for (i = 0; i < py_layouts__count(); i++)
		CHECK(py_layouts__check_windows(&py_layouts__at(i)->bpf, why, sizeof(why)) == 0);
	b = py_layouts__find(3, 11, 0)->bpf;
	b.frame_owner = FRAME_WINDOW - 1; /* the last byte: a 1-byte field fits */
	CHECK(py_layouts__check_windows(&b, why, sizeof(why)) == 0);
	b.frame_owner = FRAME_WINDOW;
	CHECK(py_layouts__check_windows(&b, why, sizeof(why)) == -ERANGE);
	CHECK(strstr(why, "frame_owner at 72") && strstr(why, "FRAME_WINDOW"));
	b = py_layouts__find(3, 8, 0)->bpf;
	b.PyCodeObject_co_name = CODE_WINDOW - 4; /* an 8-byte pointer half outside */
	CHECK(py_layouts__check_windows(&b, why, sizeof(why)) == -ERANGE);
	CHECK(strstr(why, "PyCodeObject_co_name") != NULL);
	b = py_layouts__find(3, 13, 0)->bpf;
	b.PyUnicode_state = STR_WINDOW;
	CHECK(py_layouts__check_windows(&b, why, sizeof(why)) == -ERANGE);
}

/* ---- 3.13 _Py_DebugOffsets ------------------------------------------------------------- */

/* Where the compared fields sit in 3.13.0's struct (gdb: ptype /o struct _Py_DebugOffsets). */
static const unsigned compared_pos[] = {
	40,			/* runtime_state.interpreters_head */
	64, 72,			/* interpreter_state.next, threads_head */
	168, 176, 184, 200,	/* thread_state.next, interp, current_frame, native_thread_id */
	224, 232, 240, 264,	/* interpreter_frame.size, previous, executable, owner */
	280, 288, 296, 312,	/* code_object.filename, name, qualname, firstlineno */
	360, 376,		/* pyobject.ob_type, type_object.tp_name */
	544, 552, 560,		/* unicode_object.state, length, asciiobject_size */
};

/* Fields the table has no counterpart for: changing them must not matter. */
static const unsigned other_pos[] = {
	24, 56, 152, 160, 192, 248, 256, 272, 320, 352, 368, 384, 536, 568, 576,
};

static char libpython313[4096];

static const char *find_libpython313(void)
{
	const char *env = getenv("PYUPROF_LIBPYTHON313");
	const char *root = getenv("PYENV_ROOT");
	const char *home = getenv("HOME");
	char pattern[sizeof(libpython313)], home_root[1024];
	glob_t g;

	if (env)
		return env;
	if (!root && home) {
		snprintf(home_root, sizeof(home_root), "%s/.pyenv", home);
		root = home_root;
	}
	if (!root || strlen(root) > 1024)
		return NULL;
	snprintf(libpython313, sizeof(libpython313),
		 "%s/versions/3.13.0/lib/libpython3.13.so.1.0", root);
	if (access(libpython313, R_OK) == 0)
		return libpython313;
	/* Any 3.13 pyenv build will do: the layout is chosen by the version inside the struct. */
	snprintf(pattern, sizeof(pattern), "%s/versions/3.13.*/lib/libpython3.13.so.1.0", root);
	if (glob(pattern, 0, NULL, &g) == 0 && g.gl_pathc) {
		snprintf(libpython313, sizeof(libpython313), "%s", g.gl_pathv[0]);
		globfree(&g);
		return libpython313;
	}
	return NULL;
}

/* Reads the first len bytes of _PyRuntime (initialised data) from the ELF file. */
static int read_pyruntime(const char *path, unsigned char *buf, size_t len)
{
	Elf_Scn *scn = NULL;
	Elf *elf = NULL;
	int fd, err = -ENOENT;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && err == -ENOENT && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh, target;
		Elf_Data *data;
		off_t at;
		size_t i;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB)
			continue;
		data = elf_getdata(scn, NULL);
		for (i = 0; data && sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(data, i, &sym))
				break;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || strcmp(name, "_PyRuntime") || sym.st_shndx == SHN_UNDEF)
				continue;
			if (!gelf_getshdr(elf_getscn(elf, sym.st_shndx), &target) ||
			    target.sh_type != SHT_PROGBITS || sym.st_size < len) {
				err = -ENODATA;
				break;
			}
			at = target.sh_offset + (sym.st_value - target.sh_addr);
			err = pread(fd, buf, len, at) == (ssize_t)len ? 0 : -EIO;
			break;
		}
	}
	elf_end(elf);
	close(fd);
	return err;
}

static char why[256]; /* the checker's reason, printed on unexpected results */

static int check(const struct py_offsets_entry *e, const void *buf, size_t len)
{
	why[0] = 0;
	return py_layouts__check_debug_offsets(e, buf, len, why, sizeof(why));
}

static void put_u64(unsigned char *buf, unsigned pos, uint64_t v)
{
	memcpy(buf + pos, &v, sizeof(v));
}

static uint64_t get_u64(const unsigned char *buf, unsigned pos)
{
	uint64_t v;

	memcpy(&v, buf + pos, sizeof(v));
	return v;
}

static void test_debug_offsets_real(const unsigned char *real)
{
	const struct py_offsets_entry *e313 = py_layouts__find(3, 13, 0);
	unsigned char buf[DEBUG_SIZE];
	size_t i;
	int err;

	CHECK(!memcmp(real, "xdebugpy", 8));
	CHECK((get_u64(real, 8) >> 16) == 0x030d);
	err = check(e313, real, DEBUG_SIZE);
	if (err)
		printf("#   %d: %s\n", err, why);
	CHECK(err == 0);
	/* More bytes than the struct (callers read a fixed-size chunk) are fine. */
	{
		unsigned char big[DEBUG_SIZE + 1024];

		memcpy(big, real, DEBUG_SIZE);
		memset(big + DEBUG_SIZE, 0xa5, 1024);
		CHECK(check(e313, big, sizeof(big)) == 0);
	}
	/* Every compared field is really compared ... */
	for (i = 0; i < sizeof(compared_pos) / sizeof(compared_pos[0]); i++) {
		memcpy(buf, real, DEBUG_SIZE);
		put_u64(buf, compared_pos[i], get_u64(buf, compared_pos[i]) + 8);
		err = check(e313, buf, DEBUG_SIZE);
		if (err != -EINVAL)
			printf("#   change at %u not noticed (%d)\n", compared_pos[i], err);
		CHECK(err == -EINVAL);
		CHECK(why[0] != 0);
	}
	/* ... and only those. */
	for (i = 0; i < sizeof(other_pos) / sizeof(other_pos[0]); i++) {
		memcpy(buf, real, DEBUG_SIZE);
		put_u64(buf, other_pos[i], get_u64(buf, other_pos[i]) + 8);
		CHECK(check(e313, buf, DEBUG_SIZE) == 0);
	}
	/* The 3.12 entry does not describe a 3.13 runtime. */
	CHECK(check(py_layouts__find(3, 12, 1), real, DEBUG_SIZE) == -EINVAL);
}

static void test_debug_offsets_rejects(const unsigned char *real)
{
	const struct py_offsets_entry *e313 = py_layouts__find(3, 13, 0);
	unsigned char buf[DEBUG_SIZE];

	memcpy(buf, real, DEBUG_SIZE);
	buf[0] = 'X';
	CHECK(check(e313, buf, DEBUG_SIZE) == -ENODATA);
	memset(buf, 0, DEBUG_SIZE);
	CHECK(check(e313, buf, DEBUG_SIZE) == -ENODATA);
	CHECK(check(e313, real, 4) == -ENODATA);
	CHECK(check(e313, real, DEBUG_SIZE - 8) == -ENODATA);
	/* Other minor versions have other layouts (3.14 inserted fields): not ours to parse. */
	memcpy(buf, real, DEBUG_SIZE);
	put_u64(buf, 8, 0x030e00f0);
	CHECK(check(e313, buf, DEBUG_SIZE) == -ENOTSUP);
	put_u64(buf, 8, 0x030c01f0);
	CHECK(check(e313, buf, DEBUG_SIZE) == -ENOTSUP);
	/* The layout is chosen by major.minor: a later 3.13 patch release parses as 3.13.0. */
	put_u64(buf, 8, 0x030d07f0);
	CHECK(check(e313, buf, DEBUG_SIZE) == 0);
	/* Free-threaded builds have another object header. */
	memcpy(buf, real, DEBUG_SIZE);
	put_u64(buf, 16, 1);
	CHECK(check(e313, buf, DEBUG_SIZE) == -ENOTSUP);
}

int main(void)
{
	unsigned char real[DEBUG_SIZE];
	const char *lib = find_libpython313();
	const char *skip = NULL;
	int err = -ENOENT;

	test_sorted();
	report("table sorted by version", NULL);
	test_no_overlap();
	report("no overlapping patch ranges", NULL);
	test_find_supported();
	report("lookups for 3.8-3.13 succeed", NULL);
	test_find_unsupported();
	report("2.7, 3.6, 3.7, 3.14 fail with ENOTSUP", NULL);
	test_supported_string();
	report("supported versions string", NULL);
	test_calling_convention();
	report("eval function arguments and caller mode", NULL);
	test_zero_fields();
	report("fields a version lacks are 0", NULL);
	test_write_targets();
	report("offsets pyuprof writes through", NULL);
	test_windows();
	report("fields fit the windows the BPF programs read", NULL);

	if (lib)
		err = read_pyruntime(lib, real, sizeof(real));
	if (err) {
		printf("#   cannot read _PyRuntime from %s: %s\n", lib ? lib : "(no 3.13 build)",
		       strerror(-err));
		/* In CI a skipped test is one that cannot fail. */
		if (getenv("CI") && !strcmp(getenv("CI"), "true"))
			case_failed = 1;
		else
			skip = "no pyenv 3.13 build (set PYUPROF_LIBPYTHON313)";
	} else {
		test_debug_offsets_real(real);
	}
	report("3.13.0 _Py_DebugOffsets: real bytes accepted, each altered field rejected", skip);
	if (!err)
		test_debug_offsets_rejects(real);
	else if (!skip)
		case_failed = 1;
	report("_Py_DebugOffsets without cookie, short, other version, free-threaded", skip);

	printf("%d passed, %d failed\n", n_run - n_failed, n_failed);
	return n_failed ? 1 : 0;
}
