/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The trampoline page's template as tramp_build.c fills it in and tramp.c reads it back from a
 * target: tramp_code.S's symbols, its parameter block and the page's identity.
 */
#ifndef __PYUPROF_TRAMP_LAYOUT_H
#define __PYUPROF_TRAMP_LAYOUT_H

#include <stddef.h>
#include <stdint.h>
#include "cfuncs.h"
#include "inject/tramp.h"
#include "inject/tramp_cfuncs.h"

/* the page's identity, one more whenever what a page and its staging area mean to each other
 * changes (3: the batch's generation and STAGE_TOP; 4: records by their first word's tag; 5:
 * STAGE_ON_PERCALL, the resume record, STAGE_TOP put back only if it was the caller): a
 * staging area is shared only with a page of the same identity (find_stage) */
#define IDENT "pyuprof-tramp 5"
/* tramp_code.S: the code and parameters copied into the page (never run in pyuprof) */
extern const uint8_t tramp_code[], tramp_code_end[], tramp_head_push[], tramp_head_call[],
	tramp_return_nop[], tramp_body_budget[], tramp_body_plain[], tramp_replay[], tramp_params[],
	tramp_batch[], tramp_batch_call[], tramp_batch_budget[], tramp_flush[], tramp_guard[],
	tramp_stack_nop[], tramp_mon_call[], tramp_mon_ret[], tramp_mon_obj_call[],
	tramp_mon_obj_ret[], tramp_mon_def[], tramp_mon_name[], tramp_mon_meth[];

/* tramp_code.S's parameter block, field for field */
struct tramp_params {
	uint64_t slot;
	uint64_t eval_start, eval_len, cold_start, cold_len;
	uint32_t units, c_off, limit_off, remaining_off, depth_cap, pad;
	char ident[16];
	uint64_t ident_eval;
	uint64_t pad2;
	/* the stack guard's, the hook's */
	uint64_t margin, main_floor, main_room, main_low, main_span, exc, seterr, hook_unset;
	uint32_t blk_off, stk_mode, hook_interp_off, hook_slot;
	char msg[40];
	/* the batch path's (TRAMP_BATCH) */
	uint64_t stage, main_interp, none, code_mask;
	uint32_t interp_off, frame_arg, tid_off, code_off, back_off, owner_off, mode, cframe_off,
		cfcur_off, cur_off, flags_off, name_off, file_off, line_off, hash_off, len_off,
		data_off, chains;
	int32_t gen_state;
	uint32_t version_off, gen_done;
	/* C functions (include/cfuncs.h) */
	uint32_t cf_mode, pfunc_off, use_mode, use_off, fframe_off, pobj_off;
	uint64_t tstate_cur;
	uint64_t cfunction_type, cmethod_type, methoddescr_type, missing, code_type;
	uint32_t gil_off, holder_off;
	uint32_t unit_off, unit_flags, ip_off;
	int32_t kw_at;
	uint32_t kw_op, warm_mode, call_op, init_on;
	uint64_t module_type, unicode_type, type_type, object_type, function_type, intern,
		type_lookup, shim_words;
	uint32_t ds_top_off, ds_limit_off;
	struct cf_page cf;
	/* (tramp_params is 64-aligned, p_walk 16-aligned in tramp_code.S) */
	struct inline_site walk[INLINE_SITES_MAX + 1] __attribute__((aligned(16)));
};

/* Offset of a symbol of tramp_code.S in the page. */
static inline size_t at(const uint8_t *sym)
{
	return (size_t)(sym - tramp_code);
}

#endif /* __PYUPROF_TRAMP_LAYOUT_H */
