/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * C functions (include/cfuncs.h): a C function's identity, read at the flush that sends it,
 * while its callable and the object it is called on are alive (the thread is in the call).
 * cProfile names a C function by its object's type: repr(_PyType_Lookup(type(self), name)),
 * which for a method of a C type is that type's method descriptor, "<method 'name' of 'owner'
 * objects>", owner being the type of self's MRO that defines it; the page sends the PyMethodDef,
 * and the owner is the first type of the MRO whose method table (tp_methods) holds it.
 */
#ifndef __PYUPROF_CFUNCS_BPF_H
#define __PYUPROF_CFUNCS_BPF_H

#include "cfuncs.h"

/* the type objects a callable is told by (0: not found, and no such callable is read) */
const volatile __u64 cfunction_type = 0, cmethod_type = 0, methoddescr_type = 0;
const volatile __u64 unicode_type = 0, type_type = 0;

#define CF_MRO_MAX 16	   /* types of an MRO looked at */
#define CF_METHODS_MAX 4096 /* entries of a method table looked through (torch._C._TensorBase: ~700) */

/* The search's state (globals: one flush at a time, its thread holding the GIL) */
__u64 cf_ml = 0, cf_mro = 0, cf_owner = 0, cf_meths = 0;
__u32 cf_nmro = 0, cf_nmeths = 0;
bool cf_held = false;

/* bpf_loop's step over a method table's entries before cf_ml: one of them the terminator
 * (a NULL ml_name) means the table ends before it */
static long cf_entry_step(__u32 j, void *data)
{
	__u64 name = 0;

	if (j >= cf_nmeths)
		return 1;
	if (bpf_probe_read_user(&name, sizeof(name), (void *)(cf_meths + j * CF_ML_SIZE)) ||
	    !name) {
		cf_held = false;
		return 1;
	}
	return 0;
}

/* bpf_loop's step over the MRO: the first type whose method table holds cf_ml */
static long cf_mro_step(__u32 i, void *data)
{
	__u64 type = 0, meths = 0;

	if (i >= cf_nmro)
		return 1;
	if (bpf_probe_read_user(&type, sizeof(type), (void *)(cf_mro + CF_TUPLE_ITEMS + i * 8)) ||
	    !type ||
	    bpf_probe_read_user(&meths, sizeof(meths), (void *)(type + CF_TP_METHODS)) || !meths ||
	    meths > cf_ml || (cf_ml - meths) % CF_ML_SIZE ||
	    (cf_ml - meths) / CF_ML_SIZE >= CF_METHODS_MAX)
		return 0;
	cf_meths = meths;
	cf_nmeths = (__u32)((cf_ml - meths) / CF_ML_SIZE);
	cf_held = true;
	bpf_loop(CF_METHODS_MAX, cf_entry_step, NULL, 0);
	if (!cf_held)
		return 0;
	cf_owner = type;
	return 1;
}

/* Whether the C string at src is "__new__" */
static __always_inline bool cf_is_new(const char *name)
{
	return name[0] == '_' && name[1] == '_' && name[2] == 'n' && name[3] == 'e' &&
	       name[4] == 'w' && name[5] == '_' && name[6] == '_' && !name[7];
}

/*
 * Sends the identity of the C function key (its PyMethodDef) called through callable (a
 * PyCFunction, or a method descriptor called on self_arg): CFUNC_UNREAD if that is not what
 * it finds.
 */
static __noinline void send_cfunc(__u64 key, __u64 callable, __u64 self_arg, __u32 tid,
				  __u64 now)
{
	__u64 type = 0, ml = 0, self = 0, module = 0, w[3], mtype = 0, flags = 0, name = 0;
	struct ev_cfunc *e;

	if (read_user(&type, sizeof(type), callable + ob_type_off))
		type = 0;
	if (type && (type == cfunction_type || type == cmethod_type) &&
	    !read_user(w, sizeof(w), callable + CF_M_ML)) {
		ml = w[0];
		self = w[1];
		module = w[2];
	} else if (type && type == methoddescr_type &&
		   !read_user(&ml, sizeof(ml), callable + CF_D_METHOD)) {
		self = self_arg;
	}
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&stats.lost_codes, 1);
		return;
	}
	e->type = EV_CFUNC;
	e->tid = tid;
	e->ts_ns = now;
	e->key = key;
	e->type_addr = 0;
	e->kind = CFUNC_UNREAD;
	e->module_len = 0;
	e->module_kind = STR_UNREADABLE;
	__builtin_memset(e->pad, 0, sizeof(e->pad));
	e->name[0] = 0;
	e->owner[0] = 0;
	e->module[0] = 0;
	if (ml != key || read_user(&name, sizeof(name), ml + CF_ML_NAME) ||
	    bpf_probe_read_user_str(e->name, sizeof(e->name), (void *)name) <= 0)
		goto out;
	if (module && !bpf_probe_read_user(&mtype, sizeof(mtype), (void *)(module + ob_type_off)) &&
	    mtype == unicode_type)
		e->module_kind = copy_str(e->module, sizeof(e->module), module, &e->module_len);
	if (!self) {
		e->kind = CFUNC_MODULE;
		goto out;
	}
	e->kind = CFUNC_BUILTIN;
	if (read_user(&type, sizeof(type), self + ob_type_off) ||
	    read_user(&flags, sizeof(flags), type + CF_TP_FLAGS))
		goto out;
	/* a type's __new__: found as type's own, bound to `type` */
	if ((flags & CF_TPFLAGS_TYPE) && cf_is_new(e->name)) {
		e->kind = CFUNC_TYPE_NEW;
		e->type_addr = type_type;
		goto out;
	}
	cf_ml = ml;
	cf_owner = 0;
	cf_nmro = 0;
	if (read_user(&cf_mro, sizeof(cf_mro), type + CF_TP_MRO) || !cf_mro ||
	    read_user(&w[0], sizeof(w[0]), cf_mro + CF_TUPLE_SIZE))
		goto out;
	cf_nmro = w[0] < CF_MRO_MAX ? (__u32)w[0] : CF_MRO_MAX;
	bpf_loop(CF_MRO_MAX, cf_mro_step, NULL, 0);
	if (cf_owner && !read_user(&name, sizeof(name), cf_owner + tp_name_off) &&
	    bpf_probe_read_user_str(e->owner, sizeof(e->owner), (void *)name) > 0)
		e->kind = CFUNC_METHOD;
out:
	bpf_ringbuf_submit(e, wakeup_flags(RB_BYTES(sizeof(*e))));
}

#endif /* __PYUPROF_CFUNCS_BPF_H */
