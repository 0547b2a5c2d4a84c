// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Run by the build before pyuprof is linked: fails it when an entry of the layout table puts a
 * field past the window the BPF programs read it through (py_layouts__check_windows). Offsets
 * are rodata set at load, so the BPF compiler cannot check them, and the verifier only sees
 * FIELD's mask: a misfit would load and run, reading the wrong bytes.
 */
#include <stdio.h>
#include "target/py_layouts.h"

int main(void)
{
	const struct py_offsets_entry *e;
	char why[160];
	size_t i;
	int bad = 0;

	for (i = 0; (e = py_layouts__at(i)); i++) {
		if (py_layouts__check_windows(&e->bpf, why, sizeof(why))) {
			fprintf(stderr, "user/target/py_layouts.c: the %u.%u entry: %s\n", e->major,
				e->minor, why);
			bad = 1;
		}
	}
	return bad;
}
