/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Per-version CPython layout table: what the BPF side reads (struct py_offsets) plus what only
 * user space needs to walk interpreters and threads and to sanity-check a live target.
 */
#ifndef __PYUPROF_PY_LAYOUTS_H
#define __PYUPROF_PY_LAYOUTS_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "py_offsets.h" /* the shared struct, not this file */

struct py_offsets_entry {
	unsigned major, minor, patch_min, patch_max;
	struct py_offsets bpf;

	unsigned PyInterpreterState_hook; /* eval_frame on every version: the trampoline's slot */
	unsigned PyObject_ob_type;
	unsigned PyTypeObject_tp_name;
	unsigned PyRuntime_interpreters_head;  /* offset inside _PyRuntime */
	unsigned PyRuntime_main_interpreter;   /* 3.11+: the main interpreter is embedded here */
	unsigned PyInterpreterState_next;
	unsigned PyInterpreterState_threads_head;
	unsigned PyThreadState_next;
	unsigned PyThreadState_native_thread_id; /* 0 before 3.11 (no such field) */
	unsigned PyThreadState_thread_id;	  /* pthread_self(): the thread's FS base (glibc) */
	unsigned PyThreadState_frame;		  /* <= 3.10: tstate->frame; 0 otherwise */
	unsigned PyInterpreterFrame_size;	  /* 3.11+: sizeof(_PyInterpreterFrame) */
	unsigned PyCodeObject_co_qualname;	  /* 3.11+ */
	unsigned PyHeapTypeObject_spec_cache_init; /* 3.13: __init__ of a specialised class call */
	unsigned PyFunctionObject_func_code;	  /* 3.13, with the field above */
	unsigned PyCodeObject_co_version;	  /* 3.12+: from a counter at creation (0: it wrapped) */
	/* 3.12+: the Python depth and the C recursion budget, which the trampoline reads and hands
	 * back per call (tramp_build.c); eval_c_units is what one activation of the eval function takes */
	unsigned PyThreadState_py_recursion_remaining;
	unsigned PyThreadState_py_recursion_limit;
	unsigned PyThreadState_c_recursion_remaining;
	unsigned eval_c_units;
	/* 3.12+: a generator's gi_frame_state and its frame (gi_iframe), which the trampoline
	 * reads where the frame returns (tramp_build.c) */
	unsigned PyGenObject_gi_frame_state;
	unsigned PyGenObject_gi_iframe;
	/* 3.12+: the lowest gi_frame_state of a generator that returned rather than yielded
	 * (FRAME_COMPLETED; 3.15 has none: FRAME_CLEARED) */
	unsigned PyGenObject_finished_state;

	/* A threading.Thread's name (thread_name.c): self in its frame, then `_name` */
	unsigned dict_kind; /* enum dict_kind: where an instance keeps its attributes */
	unsigned PyFrame_localsplus; /* f_localsplus (<= 3.10) or localsplus (3.11+) */
	unsigned PyTypeObject_tp_basicsize;
	unsigned PyTypeObject_tp_dictoffset;
	unsigned PyTypeObject_tp_flags; /* 3.11+: Py_TPFLAGS_MANAGED_DICT, _INLINE_VALUES */
	unsigned PyHeapTypeObject_ht_cached_keys; /* 3.11+: the keys an instance's values use */
	unsigned PyDictObject_ma_keys;
	unsigned PyDictObject_ma_values;
	unsigned PyDictKeysObject_dk_size;	      /* <= 3.10 */
	unsigned PyDictKeysObject_dk_log2_index_bytes; /* 3.11+ */
	unsigned PyDictKeysObject_dk_kind;	      /* 3.11+ */
	unsigned PyDictKeysObject_dk_nentries;
	unsigned PyDictKeysObject_dk_indices;
	unsigned PyDictKeyEntry_size;
	unsigned PyDictKeyEntry_me_key;
	unsigned PyDictKeyEntry_me_value;
	unsigned PyDictUnicodeEntry_size; /* 3.11+: entries of str-only keys have no hash */
	unsigned PyDictUnicodeEntry_me_key;
	unsigned PyDictUnicodeEntry_me_value;
	unsigned PyDictValues_values; /* 3.11+; 3.13 puts a header before the values */

	/* C functions (include/cfuncs.h). <= 3.11: the thread's profile slot; the flag that turns
	 * CPython's tracing on: the thread state's (3.8, 3.9), else the first member of the
	 * running activation's frame of C (3.10, 3.11: PyThreadState_trace_cframe); the thread
	 * that holds the GIL; the interpreter frame behind a frame object (3.11) */
	unsigned PyThreadState_c_profilefunc;
	unsigned PyThreadState_c_profileobj;
	unsigned PyThreadState_use_tracing;
	unsigned PyThreadState_trace_cframe;
	unsigned PyRuntime_tstate_current;
	unsigned PyFrameObject_f_frame;
	/* 3.12+: the page's sys.monitoring tool */
	unsigned PyInterpreterState_monitors;		 /* a byte of tools per event */
	unsigned PyInterpreterState_monitoring_callables; /* [tool][event] */
	unsigned PyInterpreterState_monitoring_tool_names; /* [tool] */
	/* 3.12+: the thread whose callback runs: the last holder of the interpreter's GIL */
	unsigned PyInterpreterState_ceval_gil; /* struct _gil_runtime_state * */
	unsigned gil_last_holder;
};

/*
 * Where an instance of a plain Python class keeps its attributes (checked in live processes
 * of each build: CPython's accessors for these are inline functions that DWARF does not show).
 */
enum dict_kind {
	DICT_AT_OFFSET = 0,	/* <= 3.10: a dict pointer at tp_dictoffset */
	DICT_MANAGED = 1,	/* 3.11: values pointer 4 words before the object, dict 3 before */
	DICT_OR_VALUES = 2,	/* 3.12: 3 words before: a dict, or values - 1 (odd: tagged) */
	DICT_INLINE_VALUES = 3, /* 3.13: dict 3 words before, else values at tp_basicsize */
};

/* Returns the entry for major.minor.patch, or NULL (errno = ENOTSUP) if unsupported. */
const struct py_offsets_entry *py_layouts__find(unsigned major, unsigned minor, unsigned patch);

/* "3.8, 3.9, ..., 3.15": for error messages. */
const char *py_layouts__supported(void);

/* Table access for tests: the number of entries and entry i. */
size_t py_layouts__count(void);
const struct py_offsets_entry *py_layouts__at(size_t i);

/*
 * 3.13+: compare the entry with the target's own _Py_DebugOffsets (the first bytes of
 * _PyRuntime, read from the live process or the ELF file into buf). Returns 0 when every
 * field that both describe agrees, -EINVAL on a disagreement (the first one is described in
 * why), -ENODATA when buf does not start with the "xdebugpy" cookie.
 */
int py_layouts__check_debug_offsets(const struct py_offsets_entry *e, const void *buf, size_t len,
				    char *why, size_t why_len);

/*
 * 3.13+: the main interpreter's offset in _PyRuntime, from the _Py_DebugOffsets in buf (as
 * above): the runtime state's size less the interpreter state's, since the main interpreter is
 * the runtime state's last member (3.13, 3.14, 3.15). 0, or -EINVAL when they give none.
 */
int py_layouts__main_interpreter(const void *buf, size_t len, uint64_t *off);

/* 3.13+: whether the _Py_DebugOffsets in buf (as above) are a free-threaded build's. */
bool py_layouts__free_threaded(const void *buf, size_t len);

/*
 * Whether every field the BPF programs take out of a window (include/py_offsets.h) lies inside
 * it: 0, or -ERANGE with the first field that does not described in why. The build runs it on
 * every entry (scripts/check-layouts.c): a field past its window would read a neighbour on the
 * BPF stack, or past FIELD's mask another offset, with no error anywhere.
 */
int py_layouts__check_windows(const struct py_offsets *o, char *why, size_t why_len);

#endif /* __PYUPROF_PY_LAYOUTS_H */
