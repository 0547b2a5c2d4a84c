// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Reading a threading.Thread's `_name` from outside. The Thread is the first local of its
 * thread's _bootstrap and _bootstrap_inner frames (both are methods: localsplus[0] is self);
 * its attributes sit in a dict, or from 3.11 on in a values array that uses the shared keys
 * cached on the class (py_offsets.h, enum dict_kind). Every read is checked and bounded: the
 * target keeps running, so anything may change under us, and a failure only means "no name".
 */
#include <errno.h>
#include <linux/types.h>
#include <string.h>
#include "base/proc.h"
#include "pyuprof.h"
#include "target/pystr.h"
#include "target/thread_name.h"

#define MAX_ATTRS 128	/* Thread has about 15 attributes; subclasses add a few */
#define ATTR_MAX 16	/* bytes of the attribute names we look up */
#define LONG_DIGITS 24	/* offsetof(PyLongObject, ob_digit) (long_value.ob_digit in 3.12+) */
#define LONG_SHIFT 30	/* bits per digit: a tid fits in one */
#define WORD 8
#define TPFLAGS_INLINE_VALUES (1ull << 2) /* 3.13 */
#define TPFLAGS_MANAGED_DICT (1ull << 4)  /* 3.11+ */

bool thread_name__is_bootstrap(const char *filename, const char *name)
{
	size_t n = strlen(filename), m = strlen("threading.py");

	if (n < m || strcmp(filename + n - m, "threading.py") ||
	    (n > m && filename[n - m - 1] != '/'))
		return false;
	return !strcmp(name, "_bootstrap") || !strcmp(name, "_bootstrap_inner");
}

static int rd(const struct py_target *t, uint64_t addr, void *buf, size_t len)
{
	/* a NULL or tagged-away pointer would only make a failing syscall */
	if (addr < 4096)
		return -EFAULT;
	return proc__read(t->pid, addr, buf, len) ? -EFAULT : 0;
}

static uint64_t rd_ptr(const struct py_target *t, uint64_t addr)
{
	uint64_t v = 0;

	rd(t, addr, &v, sizeof(v));
	return v;
}

/* 1 if the str at key is attr (attribute names are interned ASCII strs). */
static int is_key(const struct py_target *t, uint64_t key, const char *attr)
{
	char buf[ATTR_MAX];
	uint32_t len;

	return py_target__read_str(t, key, buf, sizeof(buf), &len) == STR_ASCII &&
	       len == strlen(attr) && !memcmp(buf, attr, len);
}

/* Looks attr up in keys; the value is in the entry, or values[i] for a split table. */
static int keys_lookup(const struct py_target *t, uint64_t keys, uint64_t values,
		       const char *attr, uint64_t *value, struct thread_name_path *path)
{
	const struct py_offsets_entry *o = t->offsets;
	unsigned esize = o->PyDictKeyEntry_size, koff = o->PyDictKeyEntry_me_key;
	unsigned voff = o->PyDictKeyEntry_me_value;
	unsigned char entries[MAX_ATTRS * 24];
	uint64_t index_bytes, key;
	int64_t nentries, size;
	uint8_t log2, kind;
	int64_t i;

	if (rd(t, keys + o->PyDictKeysObject_dk_nentries, &nentries, sizeof(nentries)))
		return -EFAULT;
	if (nentries <= 0 || nentries > MAX_ATTRS)
		return -ENOENT;
	if (o->PyDictKeysObject_dk_size) {
		/* <= 3.10: the index width follows the table size (DK_IXSIZE) */
		if (rd(t, keys + o->PyDictKeysObject_dk_size, &size, sizeof(size)) || size <= 0 ||
		    size > (1 << 20))
			return -EFAULT;
		index_bytes = size * (size <= 0xff ? 1 : size <= 0xffff ? 2 : 4);
	} else {
		if (rd(t, keys + o->PyDictKeysObject_dk_log2_index_bytes, &log2, 1) || log2 > 24 ||
		    rd(t, keys + o->PyDictKeysObject_dk_kind, &kind, 1))
			return -EFAULT;
		index_bytes = 1ull << log2;
		if (kind) { /* 3.11+ DICT_KEYS_UNICODE or SPLIT: entries without a hash */
			esize = o->PyDictUnicodeEntry_size;
			koff = o->PyDictUnicodeEntry_me_key;
			voff = o->PyDictUnicodeEntry_me_value;
		}
	}
	if (!esize || esize * (uint64_t)nentries > sizeof(entries) ||
	    rd(t, keys + o->PyDictKeysObject_dk_indices + index_bytes, entries, esize * nentries))
		return -EFAULT;
	for (i = 0; i < nentries; i++) {
		memcpy(&key, entries + i * esize + koff, sizeof(key));
		if (!key || !is_key(t, key, attr))
			continue;
		if (path) { /* (a combined table's value is the entry's: no path) */
			path->keys = values ? keys : 0;
			path->key = key;
			path->key_at = o->PyDictKeysObject_dk_indices + index_bytes + i * esize + koff;
			path->value_at = o->PyDictValues_values + i * WORD;
		}
		if (values)
			return rd(t, values + i * WORD, value, sizeof(*value));
		memcpy(value, entries + i * esize + voff, sizeof(*value));
		return 0;
	}
	return -ENOENT;
}

static int dict_lookup(const struct py_target *t, uint64_t dict, const char *attr,
		       uint64_t *value, struct thread_name_path *path)
{
	const struct py_offsets_entry *o = t->offsets;
	uint64_t keys = rd_ptr(t, dict + o->PyDictObject_ma_keys);
	uint64_t values = rd_ptr(t, dict + o->PyDictObject_ma_values);

	if (!keys)
		return -EFAULT;
	if (path) {
		path->how = NAME_SPLIT_DICT;
		path->dict_keys_at = o->PyDictObject_ma_keys;
		path->dict_values_at = o->PyDictObject_ma_values;
		if (o->PyDictKeysObject_dk_size) { /* <= 3.10: a table of its own is searched */
			path->scan_size_at = o->PyDictKeysObject_dk_size;
			path->scan_nentries_at = o->PyDictKeysObject_dk_nentries;
			path->scan_indices_at = o->PyDictKeysObject_dk_indices;
			path->scan_entry_size = o->PyDictKeyEntry_size;
			path->scan_entry_key = o->PyDictKeyEntry_me_key;
			path->scan_entry_value = o->PyDictKeyEntry_me_value;
		}
	}
	return keys_lookup(t, keys, values ? values + o->PyDictValues_values : 0, attr, value,
			   path);
}

/* An instance's values without a dict (3.11+): keyed by its class's cached shared keys. */
static int values_lookup(const struct py_target *t, uint64_t type, uint64_t values,
			 const char *attr, uint64_t *value, struct thread_name_path *path)
{
	uint64_t keys = rd_ptr(t, type + t->offsets->PyHeapTypeObject_ht_cached_keys);

	if (!keys)
		return -ENOENT;
	if (path)
		path->cached_keys_at = t->offsets->PyHeapTypeObject_ht_cached_keys;
	return keys_lookup(t, keys, values + t->offsets->PyDictValues_values, attr, value, path);
}

/* The attribute attr of the instance obj; with path, how it was found (how 0: not by a path
 * struct thread_name_path can take). */
static int attr_lookup(const struct py_target *t, uint64_t obj, const char *attr,
		       uint64_t *value, struct thread_name_path *path)
{
	const struct py_offsets_entry *o = t->offsets;
	uint64_t type = rd_ptr(t, obj + o->PyObject_ob_type), dict, values;
	int64_t off = 0, basicsize = 0;
	uint64_t flags = 0;
	uint8_t valid = 0;

	if (!type || rd(t, type + o->PyTypeObject_tp_flags, &flags, sizeof(flags)))
		return -EFAULT;
	/* the words before an object are its own only if its class says so */
	if (o->dict_kind != DICT_AT_OFFSET && !(flags & TPFLAGS_MANAGED_DICT))
		return -ENOENT;
	if (path) {
		memset(path, 0, sizeof(*path));
		path->flags_at = o->PyTypeObject_tp_flags;
		if (o->dict_kind != DICT_AT_OFFSET)
			path->flags = TPFLAGS_MANAGED_DICT;
	}
	switch (o->dict_kind) {
	case DICT_AT_OFFSET:
		if (rd(t, type + o->PyTypeObject_tp_dictoffset, &off, sizeof(off)) || off <= 0 ||
		    off > 4096)
			return -ENOENT;
		dict = rd_ptr(t, obj + off);
		if (path) {
			path->slot = (int32_t)off;
			path->type_word_at = o->PyTypeObject_tp_dictoffset;
			path->type_word = (uint64_t)off;
		}
		return dict ? dict_lookup(t, dict, attr, value, path) : -ENOENT;
	case DICT_MANAGED:
		values = rd_ptr(t, obj - 4 * WORD);
		if (path) {
			path->how = NAME_VALUES_AT;
			path->slot = -4 * WORD;
		}
		if (values)
			return values_lookup(t, type, values, attr, value, path);
		dict = rd_ptr(t, obj - 3 * WORD);
		if (path)
			path->slot = -3 * WORD;
		return dict ? dict_lookup(t, dict, attr, value, path) : -ENOENT;
	case DICT_OR_VALUES:
		dict = rd_ptr(t, obj - 3 * WORD);
		if (path) {
			path->how = NAME_VALUES_TAGGED;
			path->slot = -3 * WORD;
		}
		if (dict & 1) /* values are stored minus one, so that the word is odd */
			return values_lookup(t, type, dict + 1, attr, value, path);
		return dict ? dict_lookup(t, dict, attr, value, path) : -ENOENT;
	case DICT_INLINE_VALUES:
		dict = rd_ptr(t, obj - 3 * WORD);
		if (path)
			path->slot = -3 * WORD;
		if (dict)
			return dict_lookup(t, dict, attr, value, path);
		/* PyDictValues after the object: capacity, size, embedded, valid */
		if (!(flags & TPFLAGS_INLINE_VALUES) ||
		    rd(t, type + o->PyTypeObject_tp_basicsize, &basicsize, sizeof(basicsize)) ||
		    basicsize <= 0 || basicsize > 4096 || rd(t, obj + basicsize + 3, &valid, 1))
			return -EFAULT;
		if (path) {
			path->how = NAME_VALUES_INLINE;
			path->slot = (int32_t)basicsize;
			path->zero_at = -3 * WORD;
			path->valid_at = (uint32_t)basicsize + 3;
			path->flags |= TPFLAGS_INLINE_VALUES;
			path->type_word_at = o->PyTypeObject_tp_basicsize;
			path->type_word = (uint64_t)basicsize;
		}
		return valid ? values_lookup(t, type, obj + basicsize, attr, value, path) :
			       -ENOENT;
	}
	return -ENOENT;
}

/* 1 if obj's type is named name (up to 7 bytes), 0 if not, -EFAULT if unreadable. */
static int type_is(const struct py_target *t, uint64_t obj, const char *name)
{
	uint64_t type, tp_name;
	char buf[8] = "";

	if (!(type = rd_ptr(t, obj + t->offsets->PyObject_ob_type)) ||
	    !(tp_name = rd_ptr(t, type + t->offsets->PyTypeObject_tp_name)) ||
	    rd(t, tp_name, buf, strlen(name) + 1))
		return -EFAULT;
	return !memcmp(buf, name, strlen(name) + 1);
}

/*
 * -ESTALE if the Thread has set its _native_id (first thing in _bootstrap_inner) to another
 * thread's: a frame or Thread read late may already belong to a later thread (3.8-3.10 reuse
 * a code object's frame; freed objects and data stacks are reused).
 */
static int check_native_id(const struct py_target *t, uint64_t obj, uint32_t tid)
{
	uint64_t id = 0;
	uint32_t digit = 0;

	if (attr_lookup(t, obj, "_native_id", &id, NULL) || !id || type_is(t, id, "int") != 1)
		return 0; /* not set yet (None), or a threading without it */
	if (rd(t, id + LONG_DIGITS, &digit, sizeof(digit)))
		return -EFAULT;
	return (digit & ((1u << LONG_SHIFT) - 1)) == tid ? 0 : -ESTALE;
}

int thread_name__of_object_path(const struct py_target *t, uint64_t obj, uint32_t tid,
				char *out, size_t out_len, struct thread_name_path *path,
				uint64_t *type)
{
	char raw[THREAD_NAME_BYTES]; /* 64 characters of 4 bytes: more than a name gets */
	uint64_t str = 0;
	uint32_t len;
	uint8_t kind;
	int err;

	err = tid ? check_native_id(t, obj, tid) : 0;
	if (!err)
		err = attr_lookup(t, obj, "_name", &str, path);
	if (err)
		return err;
	err = str ? type_is(t, str, "str") : -EFAULT;
	if (err <= 0) /* 0: a subclass may store anything there */
		return err ? err : -EINVAL;
	kind = py_target__read_str(t, str, raw, sizeof(raw), &len);
	if (kind == STR_UNREADABLE)
		return -EFAULT;
	pystr__to_utf8(raw, sizeof(raw), len, kind, out, out_len);
	if (path) {
		/* a path needs values the keys give the places of, or (<= 3.10) a table of the
		 * dict's own to search */
		path->str_type = rd_ptr(t, str + t->offsets->PyObject_ob_type);
		*type = rd_ptr(t, obj + t->offsets->PyObject_ob_type);
		if ((!path->keys && !path->scan_entry_size) || !path->how || !path->key ||
		    !path->str_type || !*type)
			path->how = 0;
	}
	return 0;
}

int thread_name__of_object(const struct py_target *t, uint64_t obj, uint32_t tid, char *out,
			   size_t out_len)
{
	return thread_name__of_object_path(t, obj, tid, out, out_len, NULL, NULL);
}

int thread_name__read(const struct py_target *t, uint64_t frame, uint64_t code, uint32_t tid,
		      char *out, size_t out_len)
{
	uint64_t self;

	/* a frame that has returned is reused by other calls: it must still run the bootstrap */
	if (py_target__frame_code(t, frame) != code)
		return -ESTALE;
	/* 3.14+: a _PyStackRef, like the code */
	self = rd_ptr(t, frame + t->offsets->PyFrame_localsplus) &
	       ~(uint64_t)t->offsets->bpf.stackref_tags;
	if (!self)
		return -ESTALE;
	return thread_name__of_object(t, self, tid, out, out_len);
}
