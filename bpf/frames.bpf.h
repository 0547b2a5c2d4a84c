/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Reading frames and code objects: each code object's identity sent once (and remembered in a
 * per-CPU cache before the map), a starting thread's Thread object, where a frame's callee
 * starts (3.11) and which frame was running when the eval function was entered.
 */
#ifndef __PYUPROF_FRAMES_BPF_H
#define __PYUPROF_FRAMES_BPF_H

const volatile __u32 ob_type_off = 8, tp_name_off = 24; /* PyObject.ob_type, tp_name */
/* 3.11: words of a _PyInterpreterFrame before its locals (CPython's FRAME_SPECIALS_SIZE) */
const volatile __u32 frame_specials = 0;
const volatile __u32 localsplus_off = 0; /* the frame's first local (self of a method) */
const volatile __u32 qualname_off = 0; /* 3.11+: PyCodeObject.co_qualname; 0 = none */
/* The code object of a frame read into fw (3.14+: f_executable's tag bits cleared). */
static __always_inline __u64 frame_code(const void *fw)
{
	return FIELD(fw, off.frame_code, __u64) & ~(__u64)off.stackref_tags;
}

/* threading's _bootstrap and _bootstrap_inner, once seen (note_code): their self is sent */
__u64 bootstrap_codes[2] = {};

/* code object address -> tag of its identity fields, to notice a new object at an old address */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MAX_CODE_OBJECTS);
	__type(key, __u64);
	__type(value, __u64);
} codes SEC(".maps");

/*
 * A per-CPU direct-mapped cache in front of codes: an entry
 * looks up three code objects (its own, its caller's, their caller's), and a hash-map lookup
 * (hashing, bucket walk, LRU bookkeeping) costs several times an array access, which the
 * verifier inlines. A slot holds an address and its tag; a hit is what codes would answer.
 */
#define CODE_CACHE_SLOTS 512
struct entry_cache {
	__u64 addr[CODE_CACHE_SLOTS];
	__u64 tag[CODE_CACHE_SLOTS];
	struct {
		__u64 tstate, ns;
	} hook; /* the last thread state whose interpreter had a hook, and when it was read */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct entry_cache);
} entry_cache SEC(".maps");

static __always_inline __u32 cache_slot(__u64 addr)
{
	/* code objects are 16-byte aligned heap objects */
	return (__u32)((addr >> 4) ^ (addr >> 13)) & (CODE_CACHE_SLOTS - 1);
}

static __always_inline struct entry_cache *get_cache(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&entry_cache, &zero);
}

/* A tag of the fields that make up a code object's identity. */
static __always_inline __u64 code_tag(const void *cw)
{
	return FIELD(cw, off.PyCodeObject_co_filename, __u64) * 31 ^
	       FIELD(cw, off.PyCodeObject_co_name, __u64) * 7 ^
	       (__u64)FIELD(cw, off.PyCodeObject_co_firstlineno, __s32);
}

/* A Thread's class -> how its name is read (struct thread_name_path), from user space */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u64);
	__type(value, struct thread_name_path);
} thread_name_paths SEC(".maps");

#define SCAN_ENTRIES 64 /* a Thread has about 20 attributes */

struct scan_ctx {
	__u64 entries, key, value;
	__u32 n, size, key_at, value_at;
};

/* bpf_loop's: entry i of the table, key or not (1 stops the loop) */
static long scan_entry(__u32 i, void *arg)
{
	struct scan_ctx *c = arg;
	__u64 at = c->entries + (__u64)i * c->size, k;

	if (i >= c->n || read_user(&k, sizeof(k), at + c->key_at))
		return 1;
	if (k != c->key)
		return 0;
	if (read_user(&c->value, sizeof(c->value), at + c->value_at))
		c->value = 0;
	return 1;
}

/* <= 3.10: the value of key p->key in the entries of a dict's own keys (0 if not there); in
 * bpf_loop, whose callback the verifier goes through once */
static __always_inline __u64 scan_keys(const struct thread_name_path *p, __u64 keys)
{
	struct scan_ctx c = { .key = p->key, .size = p->scan_entry_size,
			      .key_at = p->scan_entry_key, .value_at = p->scan_entry_value };
	__s64 size = 0, n = 0;

	if (!p->scan_entry_size || read_user(&size, sizeof(size), keys + p->scan_size_at) ||
	    size <= 0 || size > (1 << 20) ||
	    read_user(&n, sizeof(n), keys + p->scan_nentries_at) || n <= 0)
		return 0;
	c.entries = keys + p->scan_indices_at +
		    size * (size <= 0xff ? 1 : size <= 0xffff ? 2 : 4);
	c.n = n < SCAN_ENTRIES ? (__u32)n : SCAN_ENTRIES;
	bpf_loop(SCAN_ENTRIES, scan_entry, &c, 0);
	return c.value;
}

/* The Thread self's name into e, by the path its class has (include/pyuprof.h); false if
 * there is none or a step fails. */
static __always_inline bool read_thread_name(struct ev_thread *e, __u64 self)
{
	struct thread_name_path *p;
	__u64 type, w = 0, keys = 0, values, v;
	__u8 valid = 0;

	if (read_user(&type, sizeof(type), self + ob_type_off))
		return false;
	p = bpf_map_lookup_elem(&thread_name_paths, &type);
	if (!p || (p->type_word_at && (read_user(&w, sizeof(w), type + p->type_word_at) ||
				       w != p->type_word)) ||
	    read_user(&w, sizeof(w), type + p->flags_at) || (w & p->flags) != p->flags)
		return false;
	if (p->how == NAME_VALUES_INLINE) {
		if (read_user(&w, sizeof(w), self + p->zero_at) || w ||
		    read_user(&valid, sizeof(valid), self + p->valid_at) || !valid)
			return false;
		values = self + p->slot;
	} else {
		if (read_user(&w, sizeof(w), self + p->slot) || !w)
			return false;
		values = w;
		if (p->how == NAME_VALUES_TAGGED) {
			if (!(w & 1))
				return false;
			values = w + 1;
		} else if (p->how == NAME_SPLIT_DICT) {
			if (read_user(&keys, sizeof(keys), w + p->dict_keys_at) ||
			    read_user(&values, sizeof(values), w + p->dict_values_at))
				return false;
		} else if (p->how != NAME_VALUES_AT) {
			return false;
		}
	}
	if (p->how != NAME_SPLIT_DICT &&
	    read_user(&keys, sizeof(keys), type + p->cached_keys_at))
		return false;
	if (p->how == NAME_SPLIT_DICT && !values) {
		v = scan_keys(p, keys); /* the dict's own table */
	} else if (!keys || keys != p->keys || read_user(&v, sizeof(v), keys + p->key_at) ||
		   v != p->key || read_user(&v, sizeof(v), values + p->value_at)) {
		return false;
	}
	if (!v || read_user(&w, sizeof(w), v + ob_type_off) || w != p->str_type)
		return false;
	e->name_kind = copy_str(e->name, THREAD_NAME_BYTES, v, &e->name_len);
	return e->name_kind != STR_UNREADABLE;
}

/*
 * A thread entering threading's bootstrap: its Thread (self) is sent at once, and the
 * consumer woken, with its name if the BPF side can read it here (the thread holds the GIL,
 * its frame the Thread: nothing changes under the read). Returns 1 if the name went with it;
 * else user space reads it from self, while the object still exists (a short thread is gone
 * long before a batched wake-up). A global function: gone through once by the verifier.
 */
__noinline int send_thread(__u64 frame, __u64 code, __u32 tid, __u64 now)
{
	struct ev_thread *e;
	__u64 self;
	int named;

	if (bpf_probe_read_user(&self, sizeof(self), (void *)(frame + localsplus_off)))
		return 0;
	self &= ~(__u64)off.stackref_tags; /* 3.14+: a _PyStackRef */
	if (!self)
		return 0;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		/* counted with the calls: struct pyuprof_stats is part of the raw format */
		__sync_fetch_and_add(&stats.lost_calls, 1);
		return 0;
	}
	e->type = EV_THREAD;
	e->tid = tid;
	e->ts_ns = now;
	e->code = code;
	e->self = self;
	e->name_len = 0;
	e->name_kind = STR_UNREADABLE;
	named = read_thread_name(e, self);
	if (!named)
		e->name_kind = STR_UNREADABLE;
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
	return named;
}

/* A code object's window, as a type of its own: a global function's pointer argument needs a
 * size the verifier knows. */
struct code_window {
	__u64 w[CODE_WINDOW / 8];
};

/*
 * Sends the identity of the code object at addr (window cw already read), then remembers it.
 * A global function, gone through once by the verifier: static, it was gone through again at
 * each of its six callers' states (with its string copies, a third of on_probe's verification).
 */
__noinline int send_code(__u64 addr, const struct code_window *cw, __u32 tid, __u64 now)
{
	__u32 slot = cache_slot(addr);
	struct entry_cache *cc;
	struct ev_code *e;
	__u64 tag, type;
	int bslot;

	if (!cw)
		return 0;
	tag = code_tag(cw);
	cc = get_cache();

	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		/* not remembered: the next entry of this code object tries again */
		__sync_fetch_and_add(&stats.lost_codes, 1);
		return 0;
	}
	e->type = EV_CODE;
	e->tid = tid;
	e->ts_ns = now;
	e->code = addr;
	e->firstlineno = FIELD(cw, off.PyCodeObject_co_firstlineno, __s32);
	e->co_flags = FIELD(cw, off.PyCodeObject_co_flags, __u32);
	/* for user space's check that the layout fits: the type, while the object is alive */
	__builtin_memset(e->type_name, 0, sizeof(e->type_name));
	if (!bpf_probe_read_user(&type, sizeof(type), (void *)(addr + ob_type_off)) &&
	    !bpf_probe_read_user(&type, sizeof(type), (void *)(type + tp_name_off)))
		bpf_probe_read_user_str(e->type_name, sizeof(e->type_name), (void *)type);
	e->filename_kind = copy_str(e->filename, FILENAME_BYTES,
				    FIELD(cw, off.PyCodeObject_co_filename, __u64), &e->filename_len);
	e->name_kind = copy_str(e->name, FUNCNAME_BYTES, FIELD(cw, off.PyCodeObject_co_name, __u64),
				&e->name_len);
	/* beyond CODE_WINDOW, and read once per code object: a read of its own */
	e->qualname_len = 0;
	e->qualname_kind = STR_UNREADABLE;
	if (qualname_off && !read_user(&type, sizeof(type), addr + qualname_off))
		e->qualname_kind = copy_str(e->qualname, FUNCNAME_BYTES, type, &e->qualname_len);
	bslot = bootstrap_slot(e->name, e->name_len, e->name_kind);
	if (bslot >= 0)
		bootstrap_codes[bslot] = addr;
	/* submit before remembering, so an entry naming this code never precedes its identity */
	bpf_ringbuf_submit(e, wakeup_flags(RB_BYTES(sizeof(*e))));
	bpf_map_update_elem(&codes, &addr, &tag, BPF_ANY);
	if (cc) {
		cc->addr[slot] = addr;
		cc->tag[slot] = tag;
	}
	return 0;
}

/* Sends the identity of the code object at addr unless it was sent (and its tag is the same). */
static __always_inline void note_code(__u64 addr, const void *cw, __u32 tid, __u64 now,
				      struct entry_cache *cc)
{
	__u64 tag = code_tag(cw), *known;
	__u32 slot = cache_slot(addr);

	if (cc && cc->addr[slot] == addr && cc->tag[slot] == tag)
		return;
	known = bpf_map_lookup_elem(&codes, &addr);
	if (known && *known == tag) {
		if (cc) {
			cc->addr[slot] = addr;
			cc->tag[slot] = tag;
		}
		return;
	}
	send_code(addr, cw, tid, now);
}

/* Whether the identity of the code object at addr was sent (its tag unchecked). */
static __always_inline bool code_known(__u64 addr, struct entry_cache *cc)
{
	__u32 slot = cache_slot(addr);

	if (cc && cc->addr[slot] == addr)
		return true;
	if (!bpf_map_lookup_elem(&codes, &addr))
		return false;
	if (cc) { /* its tag is not known here: the entry's own check refreshes it */
		cc->addr[slot] = addr;
		cc->tag[slot] = 0;
	}
	return true;
}

/*
 * 3.11: where the next frame pushed on the thread's data stack would start, were it pushed
 * while this one (read into fw, its code into cw) is the last there: CPython's own size,
 * co_nlocalsplus + co_stacksize + the frame's fixed part, in words. 0 for a frame elsewhere (a
 * generator's), and on every other version: 3.12+ clears a returning frame inside its
 * activation, after pointing the thread at the activation's entry shim, so a __del__ run by
 * that clearing starts where a call from the frame would, called from the shim (seen in the
 * threads and asyncio fixtures); before 3.11 there is no data stack.
 */
/* co_flags of a generator, a coroutine or an async generator (internals 2.1) */
#define CO_GENERATOR_KINDS 0x3a0

/* Whether code (read from the target) is a generator's, a coroutine's or an async generator's. */
static __always_inline bool is_gen_code(__u64 code)
{
	__u32 flags = 0;

	return code && !read_user(&flags, sizeof(flags), code + off.PyCodeObject_co_flags) &&
	       (flags & CO_GENERATOR_KINDS);
}

static __always_inline __u64 next_frame(__u64 frame, const void *fw, const void *cw)
{
	__s64 words;

	if (!off.PyCodeObject_co_nlocalsplus || FIELD(fw, off.frame_owner, __u8) != 0)
		return 0;
	words = (__s64)FIELD(cw, off.PyCodeObject_co_nlocalsplus, __s32) +
		FIELD(cw, off.PyCodeObject_co_stacksize, __s32) + frame_specials;
	return words > 0 ? frame + words * 8 : 0;
}

/* The frame that was running when the eval function was entered (internals 9.3). */
static __always_inline __u64 caller_frame(const void *fw, const void *tw)
{
	__u64 cframe, caller = 0;

	switch (off.caller_mode) {
	case CALLER_FROM_F_BACK:
		return FIELD(fw, off.frame_back, __u64);
	case CALLER_FROM_TSTATE:
		return FIELD(tw, off.PyThreadState_current_frame, __u64);
	default:
		cframe = FIELD(tw, off.PyThreadState_cframe, __u64);
		if (cframe)
			read_user(&caller, sizeof(caller), cframe + off.PyCFrame_current_frame);
		return caller;
	}
}

#endif /* __PYUPROF_FRAMES_BPF_H */
