/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * struct py_offsets: the CPython layout facts the BPF programs read through, one instance per
 * supported minor version (filled from user/target/py_layouts.c into the program's rodata).
 * Names follow CPython's own (Type_field) so they can be grepped for in its sources.
 * Offsets are in bytes; 0 in an "optional" field means "this version has no such field".
 * No #include here: the includer supplies __u32/__s32 (vmlinux.h or <linux/types.h>).
 */
#ifndef __PY_OFFSETS_H
#define __PY_OFFSETS_H

/* How the caller's frame is found at eval-function entry (cpython-internals.md 9.3). */
enum caller_mode {
	CALLER_FROM_F_BACK = 0,	     /* <= 3.10: frame->f_back is already linked */
	CALLER_FROM_CFRAME = 1,	     /* 3.11, 3.12: tstate->cframe->current_frame */
	CALLER_FROM_TSTATE = 2,	     /* 3.13: tstate->current_frame */
};

struct py_offsets {
	__u32 eval_frame_arg;	     /* which argument holds the frame: 0 (<= 3.8) or 1 (3.9+) */
	__u32 interp_frame;	     /* 1 on 3.11+ (_PyInterpreterFrame), 0 for PyFrameObject */
	__u32 caller_mode;	     /* enum caller_mode */
	__u32 has_tstate_arg;	     /* 1 on 3.9+: arg0 is the PyThreadState */

	/* frame: PyFrameObject (<= 3.10) or _PyInterpreterFrame (3.11+) */
	__u32 frame_code;	     /* f_code (PyFrameObject, _PyInterpreterFrame), 3.13+ f_executable */
	__u32 frame_back;	     /* f_back / previous */
	__u32 frame_owner;	     /* 3.11+ only: owner (char); 0 = none */
	/* 3.14+: f_executable and the locals are _PyStackRefs, a pointer with tag bits below it
	 * (pycore_stackref.h's Py_TAG_BITS), cleared before it is used as one; 0 before */
	__u32 stackref_tags;

	/* PyCodeObject */
	__u32 PyCodeObject_co_flags;
	__u32 PyCodeObject_co_firstlineno;
	__u32 PyCodeObject_co_filename;
	__u32 PyCodeObject_co_name;
	__u32 PyCodeObject_co_nlocalsplus; /* 3.11 only: with co_stacksize and the frame's own */
	__u32 PyCodeObject_co_stacksize;   /* fields, the words it takes on the data stack */

	/* str (PyUnicodeObject, compact forms only; see 2.2) */
	__u32 PyUnicode_length;
	__u32 PyUnicode_state;
	__u32 PyASCIIObject_size;	     /* where ASCII characters start */
	__u32 PyCompactUnicodeObject_size; /* where non-ASCII characters start */

	/* PyThreadState / interpreter (3.9+, where the tstate is an argument) */
	__u32 PyThreadState_interp;
	__u32 PyThreadState_cframe;	     /* 3.11, 3.12 */
	__u32 PyCFrame_current_frame;	     /* 3.11, 3.12 */
	__u32 PyThreadState_current_frame;   /* 3.13 */
	__u32 PyInterpreterState_eval_frame; /* 3.11+: the PEP 523 hook we switch; 0 = never write */
};

/*
 * The BPF programs read a frame, a code object, a thread state and a str each through one
 * fixed window, and take the fields below out of it: every entry of the table must leave each
 * field inside its window. The build checks that (py_layouts__check_windows).
 */
#define FRAME_WINDOW 80	 /* frame_code, frame_back, frame_owner (74 in 3.14) */
#define CODE_WINDOW 128	 /* PyCodeObject_* */
#define TSTATE_WINDOW 80 /* PyThreadState_interp, _cframe, _current_frame */
#define STR_WINDOW 40	 /* PyUnicode_length, PyUnicode_state */

#endif /* __PY_OFFSETS_H */
