/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Unit tests for user/target/py_layouts.c: the table's shape (sorted, no overlapping patch ranges, the
 * lookups and their ENOTSUP), the per-version rules on which fields must be 0, and the
 * _Py_DebugOffsets check (3.13+), run on the real struct read from the ELF file of pyenv's 3.13
 * libpython and of Debian's 3.14 and 3.15 (the sid root, scripts/install-sid-root.sh), and on
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

#define DEBUG_MAX 1024 /* sizeof(_Py_DebugOffsets) is 584 in 3.13, 760 in 3.14, 888 in 3.15 */
#define LAST_MINOR 15   /* the newest minor version supported */

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

	for (minor = 8; minor <= LAST_MINOR; minor++)
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
		{ 2, 7, 18 }, { 3, 6, 15 }, { 3, 7, 16 }, { 3, 16, 0 }, { 3, 17, 0 },
		{ 3, 0, 0 },  { 4, 8, 0 },  { 0, 0, 0 },  { 3, 13, 256 }, { 3, 15, 256 },
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
	CHECK(!strcmp(py_layouts__supported(), "3.8, 3.9, 3.10, 3.11, 3.12, 3.13, 3.14, 3.15"));
}

/* Which argument holds what, and how the caller frame is found (cpython-internals.md 1, 9.3). */
static void test_calling_convention(void)
{
	unsigned minor;

	for (minor = 8; minor <= LAST_MINOR; minor++) {
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

	for (minor = 8; minor <= LAST_MINOR; minor++) {
		const struct py_offsets_entry *e = py_layouts__find(3, minor, 0);
		const struct py_offsets *b = &e->bpf;
		int iframe = minor >= 11, cframe = minor == 11 || minor == 12;
		int budget = minor == 12 || minor == 13; /* 3.14 checks the C stack's address */

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
		CHECK(!b->PyThreadState_current_frame == (minor < 13));
		/* the C recursion budget the trampoline hands back: 3.12 and 3.13 */
		CHECK(!e->PyThreadState_c_recursion_remaining == !budget);
		CHECK(!e->PyThreadState_py_recursion_remaining == !budget);
		CHECK(!e->PyThreadState_py_recursion_limit == !budget);
		CHECK(e->eval_c_units == (budget ? 2 : 0));
		/* 3.14+: f_executable is a _PyStackRef (two tag bits in the GIL build) */
		CHECK(b->stackref_tags == (minor >= 14 ? 3u : 0u));
		/* a generator that returned: FRAME_COMPLETED (1), 3.15: FRAME_CLEARED (5) */
		CHECK(e->PyGenObject_finished_state == (minor < 12 ? 0u : minor < 15 ? 1u : 5u));
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
	CHECK(py_layouts__find(3, 14, 10)->bpf.PyInterpreterState_eval_frame == 8520);
	CHECK(py_layouts__find(3, 15, 2)->bpf.PyInterpreterState_eval_frame == 8472);
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
	CHECK(strstr(why, "frame_owner at 80") && strstr(why, "FRAME_WINDOW"));
	b = py_layouts__find(3, 8, 0)->bpf;
	b.PyCodeObject_co_name = CODE_WINDOW - 4; /* an 8-byte pointer half outside */
	CHECK(py_layouts__check_windows(&b, why, sizeof(why)) == -ERANGE);
	CHECK(strstr(why, "PyCodeObject_co_name") != NULL);
	b = py_layouts__find(3, 13, 0)->bpf;
	b.PyUnicode_state = STR_WINDOW;
	CHECK(py_layouts__check_windows(&b, why, sizeof(why)) == -ERANGE);
}

/* ---- _Py_DebugOffsets (3.13+) ------------------------------------------------------------ */

/*
 * Per version: where the compared fields sit (gdb: ptype /o struct _Py_DebugOffsets of pyenv's
 * 3.13.0 and of the -dev headers of Debian's 3.14.10 and 3.15.2), and the build read.
 */
static const struct debug_case {
	unsigned minor, size;
	unsigned compared[40];	/* 0-terminated */
} cases[] = {
	{ 13, 584, { 40, 64, 72, 168, 176, 184, 192, 200, 224, 232, 240, 256, 264, 280, 288, 296,
		     312, 360, 376, 392, 456, 464, 544, 552, 560 } },
	{ 14, 760, { 40, 64, 72, 192, 200, 208, 216, 224, 248, 256, 264, 280, 288, 320, 328, 336,
		     352, 408, 424, 440, 536, 544, 624, 632, 640, 680, 688 } },
	{ 15, 888, { 40, 64, 72, 192, 200, 208, 240, 248, 312, 320, 328, 344, 352, 384, 392, 400,
		     416, 472, 488, 504, 512, 520, 536, 632, 640, 720, 728, 736, 744, 808, 816 } },
};

static char paths[sizeof(cases) / sizeof(cases[0])][4096]; /* each build's file, found */

static int compared(const struct debug_case *c, unsigned pos)
{
	for (size_t i = 0; c->compared[i]; i++)
		if (c->compared[i] == pos)
			return 1;
	return 0;
}

/* 3.13: pyenv's libpython (PYUPROF_LIBPYTHON313 overrides); 3.14, 3.15: Debian's executable in
 * the sid root ($PYUPROF_SID_ROOT, else $PYUPROF_ROOTS/sid, where install-sid-root.sh puts it). */
static int find_build(unsigned minor, char *out, size_t len)
{
	const char *env = getenv("PYUPROF_LIBPYTHON313");
	const char *root = getenv("PYENV_ROOT");
	const char *sid = getenv("PYUPROF_SID_ROOT");
	const char *home = getenv("HOME");
	char pattern[4096], home_root[1024];
	glob_t g;

	if (minor != 13) {
		const char *roots = getenv("PYUPROF_ROOTS");

		if (sid && *sid)
			snprintf(out, len, "%s/usr/bin/python3.%u", sid, minor);
		else
			snprintf(out, len, "%s/sid/usr/bin/python3.%u",
				 roots && *roots ? roots : "/var/lib/pyuprof/roots", minor);
		return access(out, R_OK) ? -ENOENT : 0;
	}
	if (env) {
		snprintf(out, len, "%s", env);
		return 0;
	}
	if (!root && home) {
		snprintf(home_root, sizeof(home_root), "%s/.pyenv", home);
		root = home_root;
	}
	if (!root || strlen(root) > 1024)
		return -ENOENT;
	snprintf(out, len, "%s/versions/3.13.0/lib/libpython3.13.so.1.0", root);
	if (access(out, R_OK) == 0)
		return 0;
	/* Any 3.13 pyenv build will do: the layout is chosen by the version inside the struct. */
	snprintf(pattern, sizeof(pattern), "%s/versions/3.13.*/lib/libpython3.13.so.1.0", root);
	if (glob(pattern, 0, NULL, &g) == 0 && g.gl_pathc) {
		snprintf(out, len, "%s", g.gl_pathv[0]);
		globfree(&g);
		return 0;
	}
	return -ENOENT;
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

static void test_debug_offsets_real(const struct debug_case *c, const unsigned char *real)
{
	const struct py_offsets_entry *e = py_layouts__find(3, c->minor, 0);
	unsigned char buf[DEBUG_MAX];
	uint64_t main;
	unsigned pos;
	int err;

	CHECK(!memcmp(real, "xdebugpy", 8));
	CHECK((get_u64(real, 8) >> 16) == 0x0300 + c->minor);
	err = check(e, real, c->size);
	if (err)
		printf("#   3.%u: %d: %s\n", c->minor, err, why);
	CHECK(err == 0);
	/* More bytes than the struct (callers read a fixed-size chunk) are fine. */
	memcpy(buf, real, c->size);
	memset(buf + c->size, 0xa5, sizeof(buf) - c->size);
	CHECK(check(e, buf, sizeof(buf)) == 0);
	/* Every compared field is really compared, and no other field is */
	for (pos = 24; pos < c->size; pos += 8) {
		memcpy(buf, real, c->size);
		put_u64(buf, pos, get_u64(buf, pos) + 8);
		err = check(e, buf, c->size);
		if (compared(c, pos) ? err != -EINVAL : err != 0)
			printf("#   3.%u: a change at %u gave %d (%s)\n", c->minor, pos, err, why);
		CHECK(compared(c, pos) ? err == -EINVAL && why[0] : err == 0);
	}
	/* The main interpreter: the runtime state's last member, where the table has it for the
	 * build the table came from; a runtime state grown by 72 (Debian's 3.13.18) moves it */
	CHECK(py_layouts__main_interpreter(real, c->size, &main) == 0 &&
	      main == e->PyRuntime_main_interpreter);
	memcpy(buf, real, c->size);
	put_u64(buf, 24, get_u64(buf, 24) + 72);
	CHECK(py_layouts__main_interpreter(buf, c->size, &main) == 0 &&
	      main == e->PyRuntime_main_interpreter + 72);
	put_u64(buf, 24, get_u64(buf, 48)); /* no room */
	CHECK(py_layouts__main_interpreter(buf, c->size, &main) == -EINVAL);
	/* Another minor version's entry does not describe this runtime. */
	CHECK(check(py_layouts__find(3, c->minor - 1, 0), real, c->size) == -EINVAL);
}

static void test_debug_offsets_rejects(const struct debug_case *c, const unsigned char *real)
{
	const struct py_offsets_entry *e = py_layouts__find(3, c->minor, 0);
	unsigned char buf[DEBUG_MAX];

	memcpy(buf, real, c->size);
	buf[0] = 'X';
	CHECK(check(e, buf, c->size) == -ENODATA);
	CHECK(!py_layouts__free_threaded(buf, c->size));
	memset(buf, 0, c->size);
	CHECK(check(e, buf, c->size) == -ENODATA);
	CHECK(check(e, real, 4) == -ENODATA);
	CHECK(check(e, real, c->size - 8) == -ENODATA);
	/* Versions with no layout known here (3.12 has no struct, 3.16 is not out) */
	memcpy(buf, real, c->size);
	put_u64(buf, 8, 0x031000f0);
	CHECK(check(e, buf, c->size) == -ENOTSUP);
	put_u64(buf, 8, 0x030c01f0);
	CHECK(check(e, buf, c->size) == -ENOTSUP);
	/* The layout is chosen by major.minor: a later patch release parses as this one. */
	put_u64(buf, 8, 0x030000f0 | (c->minor << 16) | (30 << 8));
	CHECK(check(e, buf, c->size) == 0);
	/* Free-threaded builds have another object header: told, and never compared. */
	memcpy(buf, real, c->size);
	CHECK(!py_layouts__free_threaded(buf, c->size));
	put_u64(buf, 16, 1);
	CHECK(py_layouts__free_threaded(buf, c->size));
	CHECK(check(e, buf, c->size) == -ENOTSUP);
}

int main(void)
{
	unsigned char real[DEBUG_MAX];

	test_sorted();
	report("table sorted by version", NULL);
	test_no_overlap();
	report("no overlapping patch ranges", NULL);
	test_find_supported();
	report("lookups for 3.8-3.15 succeed", NULL);
	test_find_unsupported();
	report("2.7, 3.6, 3.7, 3.16 fail with ENOTSUP", NULL);
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

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct debug_case *c = &cases[i];
		const char *skip = NULL;
		char name[160];
		int err;

		err = find_build(c->minor, paths[i], sizeof(paths[i]));
		if (!err)
			err = read_pyruntime(paths[i], real, c->size);
		if (err) {
			printf("#   cannot read 3.%u's _PyRuntime from %s: %s\n", c->minor,
			       paths[i][0] ? paths[i] : "(no build)", strerror(-err));
			/* In CI a skipped test is one that cannot fail. */
			if (getenv("CI") && !strcmp(getenv("CI"), "true"))
				case_failed = 1;
			else
				skip = c->minor == 13 ? "no pyenv 3.13 build (set PYUPROF_LIBPYTHON313)"
						      : "no sid root (scripts/install-sid-root.sh)";
		} else {
			test_debug_offsets_real(c, real);
		}
		snprintf(name, sizeof(name), "3.%u _Py_DebugOffsets: real bytes accepted, each "
			 "altered field rejected, no other", c->minor);
		report(name, skip);
		if (!err)
			test_debug_offsets_rejects(c, real);
		else if (!skip)
			case_failed = 1;
		snprintf(name, sizeof(name), "3.%u _Py_DebugOffsets without cookie, short, other "
			 "version, free-threaded", c->minor);
		report(name, skip);
	}

	printf("%d passed, %d failed\n", n_run - n_failed, n_failed);
	return n_failed ? 1 : 0;
}
