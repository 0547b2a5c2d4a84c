/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Records that cross the ring buffer from bpf/pyuprof.bpf.c to user space, and the counters the
 * BPF side keeps in .bss. Declared once, for both compilers; no #include (see style.md 2.3).
 */
#ifndef __PYUPROF_H
#define __PYUPROF_H

#define FILENAME_BYTES 1024 /* bytes of co_filename carried per code object */
#define FUNCNAME_BYTES 256  /* bytes of co_name carried per code object */
#define MAX_CODE_OBJECTS (1 << 17) /* code objects whose identity BPF remembers */
#define MAX_INTERPRETERS 256
#define REQUEST_RETRY_NS 20000000ULL /* ask again if a request is not done after 20 ms */
#define DEFAULT_RINGBUF_MB 16
/* the records that write the ring's pages once before a recording (bpf/ring_warm.bpf.h) */
#define RING_WARM_REC (64 << 10)

enum ev_type {
	EV_CALL = 1,
	EV_RETURN = 2,
	EV_CODE = 3,
	EV_REQUEST = 4,
	EV_INLINE_CALL = 5, /* struct ev_call of a call CPython runs inline: code only */
	EV_EXIT = 6,	    /* struct ev_call of a frame exit (USDT): frame, code, chain[0] = caller */
	EV_THREAD = 7,	    /* struct ev_thread: a thread enters threading's bootstrap */
	EV_BATCH = 8,	    /* struct ev_batch: records staged by the trampoline (stage.h) */
	/* struct ev_return of a generator's or coroutine's frame that returned, not yielded (the
	 * batch mode, 3.12+: from STAGE_EXIT_DONE), and of one that returned None */
	EV_RETURN_DONE = 9,
	EV_RETURN_DONE_NONE = 10,
	/* struct ev_resume: the frame the thread's next return is of, where its stack switched
	 * since that frame's last event (greenlet): a staged resume record, or a return probe's
	 * frame (the head keeps it) that is not the one the thread entered or returned to last */
	EV_RESUME = 11,
	/* C functions (include/cfuncs.h): a C function's identity (struct ev_cfunc), sent at its
	 * first call; its calls and returns (struct ev_ccall: a return's key is 0), and a sync of
	 * a thread's open C calls (struct ev_return: they returned unseen) */
	EV_CFUNC = 12,
	EV_CCALL = 13,
	EV_CRETURN = 14,
	EV_CSYNC = 15,
};

/* Which probe fired: the attach cookie of each probe (one program serves them all). */
enum probe_role {
	PROBE_EVAL_ENTRY = 1,	 /* _PyEval_EvalFrameDefault's entry */
	PROBE_EVAL_RETURN = 2,	 /* each of its ret instructions */
	PROBE_FRAME_EXIT = 3,	 /* USDT python:function__return, instead of the ret sites */
	PROBE_SETTER = 4,	 /* _PyInterpreterState_SetEvalFrameFunc's entry */
	PROBE_SETTER_RET = 5,	 /* its ret instructions */
	PROBE_PERF_INIT = 6,	 /* _PyPerfTrampoline_Init's entry */
	PROBE_PERF_INIT_RET = 7, /* its ret instructions */
	PROBE_INLINE_INIT = 8,	 /* _PyType_NewManagedObject (3.13.0's inline __init__) */
	/*
	 * With the trampoline (or --exits uretprobe): _PyEval_EvalFrameDefault's own entry, which
	 * only calls that bypass the trampoline reach (a foreign PEP 523 hook calling it, or every
	 * call where no trampoline is placed), and the uretprobe that ends them. The trampoline's
	 * two probes are PROBE_EVAL_ENTRY and PROBE_EVAL_RETURN.
	 */
	PROBE_EVAL_DIRECT = 9,
	PROBE_EVAL_URETURN = 10,
	PROBE_STAGE_FLUSH = 11, /* the trampoline's flush nop (--exits batch) */
	PROBE_INLINE_GETITEM = 12, /* 3.11's inline __getitem__ path (user/target/inline_subscr.h) */
	PROBE_STACK_LOW = 13, /* the trampoline's stack guard: a call raises RecursionError */
	/* a build stripped of _PyPerfTrampoline_Init: its check of the eval_frame hook, in each
	 * copy (user/target/py_target.c's find_perf_checks) */
	PROBE_PERF_CHECK = 14,
};

/* The register that holds the frame at PROBE_INLINE_GETITEM (callee-saved in the eval loop) */
enum frame_reg {
	FRAME_REG_BX = 1,
	FRAME_REG_BP = 2,
	FRAME_REG_R12 = 3,
	FRAME_REG_R13 = 4,
	FRAME_REG_R14 = 5,
	FRAME_REG_R15 = 6,
};

/* The kernel's limit of pending uretprobes per thread (MAX_URETPROBE_DEPTH): a call entered
 * deeper than this returns without a probe hit */
#define URETPROBE_DEPTH_MAX 64

/* ev_call.flags */
#define CALL_GEN_CREATE (1u << 0)  /* 3.11+: the frame that only creates a generator: not a call */
/*
 * 3.12+: entered while the calling activation's own frame was being cleared after it returned
 * (a __del__, a generator's finally:, a weakref callback run by that clearing). The chain
 * starts at the frame below it, the caller in cProfile's terms; that activation's ret is still
 * to come.
 */
#define CALL_AFTER_RETURN (1u << 1)
/* Entered past the uretprobe depth limit: no return will be seen, user space closes it from
 * the caller chain at the thread's next event */
#define CALL_NO_RETURN (1u << 2)
/*
 * 3.11+: chain[i] (CALL_CHAIN_GEN(0), (1)) is a generator's or coroutine's frame. A throw into
 * a generator that delegates (yield from, await) links the delegating generators' frames into
 * the chain without running them, and throws into the innermost: such a frame that was not
 * entered is no call and no caller (cProfile's caller is the thrower).
 */
#define CALL_CHAIN_GEN(i) (1u << (3 + (i)))

#define CHAIN_LEN 2 /* ancestors of the entered frame reported with their code objects */

/*
 * One entry into the eval function. chain[0] is the frame that was running when this one was
 * entered (its caller), chain[1] that frame's caller, with their code objects, and back the
 * frame below chain[1]. User space resynchronises its shadow stack against them and recovers
 * up to CHAIN_LEN frames that ran without an event (cpython-internals.md 9.3).
 */
struct ev_call {
	__u32 type;
	__u32 tid;
	__u64 ts_ns;
	__u64 code;
	__u64 frame;
	__u64 chain[CHAIN_LEN];
	__u64 chain_code[CHAIN_LEN];
	__u64 back;
	__u32 flags;
	__u32 pad;
};
_Static_assert(sizeof(struct ev_call) == 80, "ev_call layout");

/* One exit from the eval function (any ret instruction). */
struct ev_return {
	__u32 type;
	__u32 tid;
	__u64 ts_ns;
};
_Static_assert(sizeof(struct ev_return) == 16, "ev_return layout");

/* The frame a thread's next return is of (EV_RESUME). */
struct ev_resume {
	__u32 type;
	__u32 tid;
	__u64 frame;
};
_Static_assert(sizeof(struct ev_resume) == 16, "ev_resume layout");

/* The Thread object (self) of a frame of threading's _bootstrap(_inner), sent on entry. */
#define THREAD_NAME_BYTES 256 /* of a Thread's name, copied raw by the BPF side (as thread_name.c) */
struct ev_thread {
	__u32 type;
	__u32 tid;
	__u64 ts_ns;
	__u64 code;
	__u64 self;
	/* the name, read by the BPF side where a struct thread_name_path told it how (name_kind a
	 * STR_* kind), else STR_UNREADABLE: user space reads it from self */
	__u32 name_len; /* characters */
	__u8 name_kind;
	__u8 pad[3];
	char name[THREAD_NAME_BYTES];
};
_Static_assert(sizeof(struct ev_thread) == 296, "ev_thread layout");

/*
 * How the BPF side reads the name of a Thread of one class (the thread_name_paths map, keyed
 * by the class), at its thread's entry into threading's _bootstrap, where the thread holds the
 * GIL and its frame holds the Thread: so the thread need not stand while user space reads it.
 * User space finds the path in a Thread it has read itself (user/target/thread_name.c), and
 * every step is checked again at each read: a class whose instances keep their attributes
 * elsewhere, or whose keys changed, makes the read fail, and the thread stands as before.
 * From the Thread: the word at slot (how NAME_VALUES_AT: the values; NAME_VALUES_TAGGED: the
 * values less one, odd; NAME_SPLIT_DICT: the dict, with split values), or the values inline
 * at slot (NAME_VALUES_INLINE, whose dict word at zero_at must be NULL and byte valid_at not
 * 0); the keys they follow (the class's cached keys, or the dict's) must be keys, whose key at
 * key_at must be key (the interned "_name"); the name is the word at value_at in the values,
 * a str (its type str_type).
 */
enum name_how {
	NAME_VALUES_AT = 1,	/* 3.11 */
	NAME_VALUES_TAGGED = 2, /* 3.12 */
	NAME_VALUES_INLINE = 3, /* 3.13+ */
	NAME_SPLIT_DICT = 4,	/* <= 3.10, and a dict whose values are split */
};
struct thread_name_path {
	__u64 keys;
	__u64 key;
	__u64 str_type;
	/* the class is the one the path was found in, not another one since at its address: its
	 * word at type_word_at (0: none) is type_word (<= 3.10 tp_dictoffset, 3.13+ with values
	 * inline tp_basicsize), and its tp_flags (at flags_at) hold flags (3.11+:
	 * Py_TPFLAGS_MANAGED_DICT; 3.13+ with values inline, Py_TPFLAGS_INLINE_VALUES too) */
	__u64 type_word;
	__u64 flags;
	__s32 slot;
	__u32 how;
	__u32 key_at;
	__u32 value_at;
	__s32 zero_at;
	__u32 valid_at;
	__u32 cached_keys_at; /* the class's ht_cached_keys */
	__u32 dict_keys_at;   /* a dict's ma_keys and ma_values */
	__u32 dict_values_at;
	/* <= 3.10 (NAME_SPLIT_DICT): a dict whose values are not split (a table of its own, as a
	 * Thread's soon is) has its entries searched for key: the keys' dk_size (the width of
	 * their indices follows it), dk_nentries, dk_indices, and an entry's size, key and value;
	 * scan_entry_size 0: not searched */
	__u32 scan_size_at;
	__u32 scan_nentries_at;
	__u32 scan_indices_at;
	__u32 scan_entry_size;
	__u32 scan_entry_key;
	__u32 scan_entry_value;
	__u32 type_word_at;
	__u32 flags_at;
	__u32 pad;
};
_Static_assert(sizeof(struct thread_name_path) == 112, "thread_name_path layout");

/* Records staged by the trampoline (include/stage.h), as it wrote them, all of one thread;
 * bytes of them follow, from offset from of the staging buffer. A chunk may end inside a
 * record, which the next chunk of the same copy, from where it ended, goes on with. A copy
 * begins at a record's head (first): a record an earlier chunk ended inside, whose copy then
 * found no room for the rest, was lost, even if this chunk starts at the offset it ended at. */
struct ev_batch {
	__u32 type;
	__u32 tid;
	__u32 bytes;
	__u32 from;
	__u32 first; /* the copy's first chunk */
	__u32 pad;
	__u64 pad2;
};
_Static_assert(sizeof(struct ev_batch) == 32, "ev_batch layout");

/* str_kind values: bytes per character of the copied string, 1 = ASCII or Latin-1 */
#define STR_ASCII 0
#define STR_LATIN1 1
#define STR_UCS2 2
#define STR_UCS4 4
#define STR_UNREADABLE 255

/*
 * The identity of a code object, sent the first time it is entered (and again if another code
 * object appears at the same address). Strings are copied raw; user space converts to UTF-8.
 */
struct ev_code {
	__u32 type;
	__u32 tid;
	__u64 ts_ns;
	__u64 code;
	__s32 firstlineno;
	__u32 co_flags;
	__u32 filename_len; /* characters in the str (may exceed what was copied) */
	__u32 name_len;
	__u32 qualname_len; /* 0 where the version has no co_qualname (before 3.11) */
	__u8 filename_kind; /* STR_* */
	__u8 name_kind;
	__u8 qualname_kind;
	__u8 pad;
	char type_name[8]; /* the object's type name, read while it was alive: "code" */
	char filename[FILENAME_BYTES];
	char name[FUNCNAME_BYTES];
	char qualname[FUNCNAME_BYTES]; /* co_qualname: for the pictures; the .prof keeps name */
};
_Static_assert(sizeof(struct ev_code) == 56 + FILENAME_BYTES + 2 * FUNCNAME_BYTES,
	       "ev_code layout");

/* How cProfile names a C function (user/cfunc_name.c), from what the BPF side found */
enum cfunc_kind {
	CFUNC_UNREAD = 0, /* its callable could not be read: named by its address */
	CFUNC_MODULE = 1, /* bound to nothing: "<module.name>", "<name>" (module builtins or none) */
	CFUNC_METHOD = 2, /* its object's type defines it (in its MRO, owner): "<method 'name' of
			   * 'owner' objects>" */
	CFUNC_TYPE_NEW = 3, /* __new__ bound to a type: "<built-in method __new__ of type object
			     * at 0x..>" (type_addr: the type object `type`, where it is found) */
	CFUNC_BUILTIN = 4, /* bound, its object's type does not define it: "<built-in method
			    * module.name>", "<built-in method name>" */
};

#define CFUNC_NAME_BYTES 128

/* A C function's identity: key is its PyMethodDef (cProfile's key too); sent at the first
 * call of it the page has not sent yet. The first one sent for a key names it, as in cProfile. */
struct ev_cfunc {
	__u32 type;
	__u32 tid;
	__u64 ts_ns;
	__u64 key;
	__u64 type_addr;
	__u32 kind;	   /* enum cfunc_kind */
	__u32 module_len;  /* characters of module[] (the str may be longer) */
	__u8 module_kind;  /* STR_*; STR_UNREADABLE: no module name (none, or not a str) */
	__u8 pad[7];
	char name[CFUNC_NAME_BYTES];   /* ml_name, a C string */
	char owner[CFUNC_NAME_BYTES];  /* CFUNC_METHOD: the defining type's tp_name */
	char module[CFUNC_NAME_BYTES]; /* __module__ (m_module) if a str */
};
_Static_assert(sizeof(struct ev_cfunc) == 48 + 3 * CFUNC_NAME_BYTES, "ev_cfunc layout");

/* A C call: key is the C function's PyMethodDef, frame the calling frame as entries name
 * frames (0 if unknown). */
struct ev_ccall {
	__u32 type;
	__u32 tid;
	__u64 ts_ns;
	__u64 key;
	__u64 frame;
};
_Static_assert(sizeof(struct ev_ccall) == 32, "ev_ccall layout");

/* ev_request.what: a write into the target that the BPF side cannot do itself (BPF writes to
 * user memory are refused on kernels in lockdown). The thread that asks is sent REQUEST_SIGNAL,
 * which stops it (user space holds the target under ptrace) until user space has written. */
#define REQUEST_SIGNAL 23 /* SIGURG: ignored by default, should pyuprof vanish first */
enum request_kind {
	REQ_HOOK_ENTRY = 1,  /* an interpreter's eval_frame is NULL at an entry: switch it */
	REQ_HOOK_SETTER = 2, /* the target's own setter just stored NULL: switch it back */
	/* a thread entered threading's bootstrap (its EV_THREAD just sent, without its name:
	 * no path for its class yet): it waits until user space has read its name from its
	 * Thread, which a short thread drops at once */
	REQ_THREAD_NAME = 3,
	REQ_HOOK_YIELD = 4,  /* 3.12+: the perf trampoline starts and refuses any other hook */
	/* the batch mode: the ring had no room for the records a thread staged; it waits while
	 * user space reads them from the target (include/stage.h, STAGE_REST_*) */
	REQ_STAGE_REST = 5,
	/* the batch mode: the thread's key (its tid in glibc's thread block) is not its tid; it
	 * waits while user space sends every call to the per-call probes (STAGE_ON_PERCALL) */
	REQ_STAGE_KEY = 6,
};

struct ev_request {
	__u32 type;
	__u32 tid;
	__u64 ts_ns;
	__u64 addr;	 /* the interpreter, or the thread state */
	__u32 what;
	__u32 signalled; /* tid was sent REQUEST_SIGNAL and stops until the request is done */
};
_Static_assert(sizeof(struct ev_request) == 32, "ev_request layout");

/* A thread the target started, told to user space as it is made (bpf/thread_births.bpf.h) */
struct thread_birth {
	__u32 tid;
	__u32 creator;	 /* the thread that started it */
	__u64 self;	 /* the Thread it starts, if the creator's frame is a method's: its first
			  * local (Thread.start's self), else 0 */
	__u32 signalled; /* the creator was sent REQUEST_SIGNAL: it stands until this is taken */
	__u32 pad;
};
_Static_assert(sizeof(struct thread_birth) == 24, "thread_birth layout");

/* Counters kept by the BPF side; nothing it drops goes uncounted. */
struct pyuprof_stats {
	__u64 lost_calls;	/* ring buffer full (also an ev_thread's, and staged entries) */
	__u64 lost_returns;
	__u64 lost_codes;
	__u64 lost_requests;
	__u64 read_fail;	/* a read of the target's memory failed */
	__u64 exit_unverified;	/* frame exits whose frame register could not be confirmed */
	__u64 foreign_hook;	/* entries seen with someone else's eval_frame hook in place */
	__u64 lost_ccalls;	/* C calls and returns staged that found no room (cfuncs.h) */
	__u64 lost_creturns;
};

/* How the calls came in, and how requests were taken (not part of the raw format: a raw
 * recording has the flags) */
struct pyuprof_exit_stats {
	__u64 direct_calls; /* entries that bypassed the trampoline (PROBE_EVAL_DIRECT) */
	__u64 uret_lost;    /* of those, entered past URETPROBE_DEPTH_MAX: no return probe */
	__u64 signal_blocked; /* requests of a thread that blocks REQUEST_SIGNAL: not stopped */
	__u64 signal_unheld;  /* requests of a thread pyuprof did not trace yet: not stopped */
	__u64 stack_low;      /* calls that raised RecursionError at the trampoline's guard */
	__u64 stack_low_size; /* the smallest C stack of a thread where one did (0: the main) */
	__u64 key_bad;	      /* batch flushes by a thread whose key is not its tid */
	__u32 key_bad_tid, key_bad_key; /* the first such thread, and what its key held */
};

#endif /* __PYUPROF_H */
