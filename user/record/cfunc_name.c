// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cProfile names a C function once, at its first call (_lsprof.c, normalizeUserObj): bound to
 * nothing, "<module.name>" ("<name>" for builtins or no module); bound to an object, the repr
 * of what the object's type finds under the function's name (for a method of a C type, its
 * method descriptor: "<method 'name' of 'owner' objects>"; for a type's __new__, type's own
 * __new__ bound to type), else "<built-in method module.name>" or "<built-in method name>".
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "record/cfunc_name.h"
#include "target/pystr.h"

/* A C string copied by the BPF side, bounded by its buffer. */
static const char *bounded(const char *s, size_t cap, char *buf)
{
	size_t n = strnlen(s, cap);

	memcpy(buf, s, n);
	buf[n] = 0;
	return buf;
}

size_t cfunc_name__format(const struct ev_cfunc *e, char *out, size_t len)
{
	char name[CFUNC_NAME_BYTES + 1], owner[CFUNC_NAME_BYTES + 1];
	char module[CFUNC_NAME_BYTES * 4 + 8] = "";
	bool has_module = e->module_kind != STR_UNREADABLE;
	int n;

	bounded(e->name, sizeof(e->name), name);
	bounded(e->owner, sizeof(e->owner), owner);
	if (has_module)
		pystr__to_utf8(e->module, sizeof(e->module), e->module_len, e->module_kind, module,
			       sizeof(module));
	switch (e->kind) {
	case CFUNC_MODULE:
		if (has_module && strcmp(module, "builtins"))
			n = snprintf(out, len, "<%s.%s>", module, name);
		else
			n = snprintf(out, len, "<%s>", name);
		break;
	case CFUNC_METHOD:
		n = snprintf(out, len, "<method '%s' of '%s' objects>", name, owner);
		break;
	case CFUNC_TYPE_NEW:
		n = snprintf(out, len, "<built-in method %s of type object at %#llx>", name,
			     (unsigned long long)e->type_addr);
		break;
	case CFUNC_BUILTIN:
		if (has_module)
			n = snprintf(out, len, "<built-in method %s.%s>", module, name);
		else
			n = snprintf(out, len, "<built-in method %s>", name);
		break;
	default: /* (its callable could not be read) */
		n = snprintf(out, len, "<C function at %#llx>", (unsigned long long)e->key);
		break;
	}
	if (n < 0)
		n = 0;
	return (size_t)n < len ? (size_t)n : len ? len - 1 : 0;
}
