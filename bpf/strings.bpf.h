/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Python strings: a code object's names copied raw, and the names that mark a thread's start. */
#ifndef __PYUPROF_STRINGS_BPF_H
#define __PYUPROF_STRINGS_BPF_H

/* Copies a str's characters raw (ASCII/Latin-1/UCS-2/UCS-4); returns the STR_* kind. */
static __always_inline __u8 copy_str(char *dst, __u32 cap, __u64 str, __u32 *len_out)
{
	__u64 sw[STR_WINDOW / 8];
	__u32 state, kind;
	__u64 data, n;
	__s64 len;

	*len_out = 0;
	if (read_user(sw, sizeof(sw), str))
		return STR_UNREADABLE;
	len = FIELD(sw, off.PyUnicode_length, __s64);
	state = FIELD(sw, off.PyUnicode_state, __u32);
	if (len < 0 || !(state & (1 << 5))) /* not compact: never seen for code names */
		return STR_UNREADABLE;
	kind = (state >> 2) & 7;
	if (state & (1 << 6)) {
		data = str + off.PyASCIIObject_size;
		kind = STR_ASCII;
	} else {
		data = str + off.PyCompactUnicodeObject_size;
	}
	n = (__u64)len * (kind ? kind : 1);
	*len_out = (__u32)len;
	if (n > cap)
		n = cap;
	/* re-check after the barrier, on the register the call uses, so the verifier sees
	 * the bound of the size it is given */
	barrier_var(n);
	if (n > cap)
		return STR_UNREADABLE;
	if (n && bpf_probe_read_user(dst, n, (void *)data)) {
		__sync_fetch_and_add(&stats.read_fail, 1);
		return STR_UNREADABLE;
	}
	return (__u8)kind;
}

/*
 * "_bootstrap" (slot 0) or "_bootstrap_inner" (slot 1) as copied, else -1. Only the name:
 * user space checks the file (threading.py) before it trusts what note_thread sends.
 */
static __always_inline int bootstrap_slot(const char *name, __u32 len, __u8 kind)
{
	const char want[] = "_bootstrap_inner";
	int i;

	if (kind != STR_ASCII || (len != 10 && len != 16))
		return -1;
	for (i = 0; i < 16; i++)
		if (i < len && name[i] != want[i])
			return -1;
	return len == 10 ? 0 : 1;
}

#endif /* __PYUPROF_STRINGS_BPF_H */
