/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The line a frame is running, as CPython itself computes it (PyFrame_GetLineNumber): from
 * the frame's last instruction through its code's line table, whose format changed twice
 * (co_lnotab up to 3.9, co_linetable in 3.10, the location table from 3.11 on). Also where
 * that instruction and the GIL's holder are, per minor version: only `pyuprof dump` needs
 * them, so they live here rather than in the layout table (py_layouts.c).
 */
#ifndef __PYUPROF_PY_LINES_H
#define __PYUPROF_PY_LINES_H

#include <stddef.h>
#include <stdint.h>

struct py_line_layout {
	unsigned minor;
	/* <= 3.10: PyFrameObject.f_lasti (int: bytes to 3.9, code units in 3.10); 3.11, 3.12:
	 * _PyInterpreterFrame.prev_instr; 3.13+: .instr_ptr (pointers into the code) */
	unsigned frame_instr;
	unsigned code_table;	/* co_lnotab (<= 3.9) or co_linetable: a bytes object */
	unsigned code_adaptive; /* 3.11+: co_code_adaptive, the first instruction */
	unsigned runtime_gil;	/* <= 3.11: _PyRuntime.ceval.gil (struct _gil_runtime_state) */
	unsigned interp_gil;	/* 3.12+: PyInterpreterState.ceval.gil, a pointer to it */
};

/* In struct _gil_runtime_state (3.8-3.15): the last thread state to take it, and whether it
 * is taken now. */
#define GIL_LAST_HOLDER 8
#define GIL_LOCKED 16
/* PyBytesObject: ob_size, ob_sval (3.8-3.15) */
#define BYTES_SIZE 16
#define BYTES_DATA 32
#define LINE_TABLE_MAX (1 << 20) /* bytes of a line table we read at most */

/* The layout for 3.minor, or NULL. */
const struct py_line_layout *py_lines__layout(unsigned minor);

/*
 * The line of the instruction at byte offset addr of a code object starting at line first,
 * from its line table tab (n bytes) in the format of 3.minor; addr < 0 (not started) gives
 * first. Returns the line, or -1 where the table says the instruction has none.
 */
int py_lines__line(unsigned minor, const uint8_t *tab, size_t n, int first, int addr);

#endif /* __PYUPROF_PY_LINES_H */
