// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Line tables, decoded as CPython's PyCode_Addr2Line does in each version (Objects/codeobject.c
 * and Objects/lnotab_notes.txt of 3.8, 3.10 and 3.11), and the layout facts around them.
 * The offsets were read from the DWARF of the pyenv builds (gdb: `print
 * (int)&((PyFrameObject*)0)->f_lasti` and so on, 3.8.18, 3.9.18, 3.10.13, 3.11.7, 3.12.1,
 * 3.13.0); Debian's 3.11.2 agrees (tests/dump.bats compares lines on it). 3.14 and 3.15 below.
 */
#include <stddef.h>
#include "target/py_lines.h"

static const struct py_line_layout layouts[] = {
	{ .minor = 8, .frame_instr = 104, .code_table = 120, .runtime_gil = 1152 },
	{ .minor = 9, .frame_instr = 104, .code_table = 120, .runtime_gil = 352 },
	{ .minor = 10, .frame_instr = 96, .code_table = 120, .runtime_gil = 352 },
	{ .minor = 11, .frame_instr = 56, .code_table = 136, .code_adaptive = 184,
	  .runtime_gil = 360 },
	{ .minor = 12, .frame_instr = 56, .code_table = 136, .code_adaptive = 192,
	  .interp_gil = 384 },
	{ .minor = 13, .frame_instr = 56, .code_table = 136, .code_adaptive = 200,
	  .interp_gil = 16 },
	/* 3.14, 3.15: the _Py_DebugOffsets of Debian's 3.14.10 and 3.15.2 (interpreter_frame.
	 * instr_ptr, code_object.linetable and co_code_adaptive, interpreter_state.ceval_gil;
	 * gil_runtime_state_holder and _locked 8 and 16 past gil_runtime_state; bytes_object) */
	{ .minor = 14, .frame_instr = 56, .code_table = 136, .code_adaptive = 208,
	  .interp_gil = 16 },
	{ .minor = 15, .frame_instr = 56, .code_table = 136, .code_adaptive = 208,
	  .interp_gil = 16 },
};

const struct py_line_layout *py_lines__layout(unsigned minor)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].minor == minor)
			return &layouts[i];
	return NULL;
}

/* <= 3.9, co_lnotab: (bytecode increment, signed line increment) pairs. */
static int lnotab(const uint8_t *t, size_t n, int line, int addr)
{
	int at = 0;

	for (size_t i = 0; i + 1 < n; i += 2) {
		at += t[i];
		if (at > addr)
			break;
		line += (int8_t)t[i + 1];
	}
	return line;
}

/* 3.10, co_linetable: (bytes in the range, signed line delta; -128: no line) pairs. */
static int linetable_310(const uint8_t *t, size_t n, int line, int addr)
{
	int start = 0, end, cur;

	for (size_t i = 0; i + 1 < n; i += 2) {
		end = start + t[i];
		if ((int8_t)t[i + 1] == -128) {
			cur = -1;
		} else {
			line += (int8_t)t[i + 1];
			cur = line;
		}
		if (start <= addr && addr < end)
			return cur;
		start = end;
	}
	return -1;
}

/* 6-bit chunks, low first, bit 6 set on all but the last (3.11 location table). */
static unsigned varint(const uint8_t *t, size_t n, size_t *i)
{
	unsigned v = 0, shift = 0;
	uint8_t b;

	do {
		if (*i >= n)
			return v;
		b = t[(*i)++];
		v |= (unsigned)(b & 63) << shift;
		shift += 6;
	} while ((b & 64) && shift < 32);
	return v;
}

/*
 * 3.11+, the location table: entries of a first byte (bit 7 set; code in bits 3-6; code units
 * covered minus one in bits 0-2) and the code's data. Codes: 15 no location, 14 long form
 * (signed varint line delta, then end line, columns), 13 no columns (signed varint line
 * delta), 10-12 one line form (line delta code - 10), 0-9 short form (same line).
 */
static int locations(const uint8_t *t, size_t n, int line, int addr)
{
	int start = 0, end, cur;
	size_t i = 0;
	unsigned code, v;

	while (i < n) {
		if (!(t[i] & 128)) { /* not an entry's first byte: the table is damaged */
			i++;
			continue;
		}
		code = (t[i] >> 3) & 15;
		end = start + ((t[i] & 7) + 1) * 2;
		i++;
		if (code == 13 || code == 14) {
			v = varint(t, n, &i);
			line += v & 1 ? -(int)(v >> 1) : (int)(v >> 1);
		} else if (code >= 10 && code <= 12) {
			line += (int)code - 10;
		}
		cur = code == 15 ? -1 : line;
		if (start <= addr && addr < end)
			return cur;
		/* the rest of the entry: columns, end line */
		while (i < n && !(t[i] & 128))
			i++;
		start = end;
	}
	return -1;
}

int py_lines__line(unsigned minor, const uint8_t *tab, size_t n, int first, int addr)
{
	if (addr < 0)
		return first;
	if (minor <= 9)
		return lnotab(tab, n, first, addr);
	if (minor == 10)
		return linetable_310(tab, n, first, addr);
	return locations(tab, n, first, addr);
}
