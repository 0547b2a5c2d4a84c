/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The CPython layout table: one entry per supported minor version (a patch range each), looked
 * up by version and never written. The array is the output of scripts/gen-py-offsets.py (--update
 * rewrites it; the rest of this file is hand-written), which reads the DWARF of the pyenv builds
 * (3.8-3.13) and of Debian's -dev headers (3.14, 3.15: no debug symbols of those builds are at
 * hand) and checks it again against their machine code and Debian's; `gen-py-offsets.py --check`
 * fails when this file and the builds disagree. From 3.13 on, the target's own _Py_DebugOffsets
 * are compared with its entry at attach (py_layouts__check_debug_offsets). One file although long:
 * the table is most of it, one entry per version read side by side.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "target/py_layouts.h"

/*
 * Patch ranges span the whole minor version: CPython keeps these structs stable within a minor
 * release as far as we have seen (Debian's 3.11.2 and pyenv's 3.11.7 agree on every field we can
 * check). A change inside a minor version gets its own entry with a narrower range. The C
 * recursion budget's size changed within 3.12 (1500 in 3.12.1, larger from the gh-112215
 * backport on); the trampoline only hands back what each call takes (eval_c_units), so the
 * size itself is not in the table.
 */
static const struct py_offsets_entry table[] = {
	{
		/* 3.8: DWARF of pyenv 3.8.18 */
		.major = 3, .minor = 8, .patch_min = 0, .patch_max = 255,
		.bpf = {
			/* gdb: whatis _PyEval_EvalFrameDefault: frame is arg0 */
			.eval_frame_arg = 0,
			.interp_frame = 0, /* gdb: the frame arg is PyFrameObject * */
			/* PyFrameObject: f_back is set before the call */
			.caller_mode = CALLER_FROM_F_BACK,
			.has_tstate_arg = 0, /* gdb: arg0 is PyFrameObject * */
			.frame_code = 32, /* gdb: offsetof(PyFrameObject, f_code) */
			.frame_back = 24, /* gdb: offsetof(PyFrameObject, f_back) */
			.frame_owner = 0, /* no _PyInterpreterFrame before 3.11 */
			.stackref_tags = 0, /* f_executable/f_code is a plain pointer before 3.14 */
			.PyCodeObject_co_flags = 36, /* gdb: offsetof(PyCodeObject, co_flags) */
			/* gdb: offsetof(PyCodeObject, co_firstlineno) */
			.PyCodeObject_co_firstlineno = 40,
			/* gdb: offsetof(PyCodeObject, co_filename) */
			.PyCodeObject_co_filename = 104,
			.PyCodeObject_co_name = 112, /* gdb: offsetof(PyCodeObject, co_name) */
			.PyCodeObject_co_nlocalsplus = 0, /* used on 3.11 only (next_frame) */
			.PyCodeObject_co_stacksize = 0, /* used on 3.11 only (next_frame) */
			.PyUnicode_length = 16, /* gdb: offsetof(PyASCIIObject, length) */
			.PyUnicode_state = 32, /* gdb: offsetof(PyASCIIObject, state) */
			.PyASCIIObject_size = 48, /* gdb: sizeof(PyASCIIObject) */
			.PyCompactUnicodeObject_size = 72, /* gdb: sizeof(PyCompactUnicodeObject) */
			.PyThreadState_interp = 16, /* gdb: offsetof(PyThreadState, interp) */
			/* frames hang off cframe in 3.11 and 3.12 only */
			.PyThreadState_cframe = 0,
			/* _PyCFrame holds the frame in 3.11 and 3.12 only */
			.PyCFrame_current_frame = 0,
			.PyThreadState_current_frame = 0, /* tstate->current_frame is 3.13+ */
			/* never written: no inlining, so no deopt, before 3.11 */
			.PyInterpreterState_eval_frame = 0,
		},
		.PyInterpreterState_hook = 568, /* gdb: offsetof(PyInterpreterState, eval_frame) */
		.PyObject_ob_type = 8, /* gdb: offsetof(PyObject, ob_type) */
		.PyTypeObject_tp_name = 24, /* gdb: offsetof(PyTypeObject, tp_name) */
		/* gdb: offsetof(_PyRuntimeState, interpreters.head) */
		.PyRuntime_interpreters_head = 32,
		/* the main interpreter is a heap object before 3.11 */
		.PyRuntime_main_interpreter = 0,
		.PyInterpreterState_next = 0, /* gdb: offsetof(PyInterpreterState, next) */
		/* gdb: offsetof(PyInterpreterState, tstate_head) */
		.PyInterpreterState_threads_head = 8,
		.PyThreadState_next = 8, /* gdb: offsetof(PyThreadState, next) */
		.PyThreadState_native_thread_id = 0, /* no native_thread_id before 3.11 */
		.PyThreadState_thread_id = 176, /* gdb: offsetof(PyThreadState, thread_id) */
		.PyThreadState_frame = 24, /* gdb: offsetof(PyThreadState, frame) */
		.PyInterpreterFrame_size = 0, /* no _PyInterpreterFrame before 3.11 */
		.PyCodeObject_co_qualname = 0, /* no co_qualname before 3.11 */
		.PyHeapTypeObject_spec_cache_init = 0, /* no inlined class call before 3.13 */
		.PyFunctionObject_func_code = 0, /* only needed for the 3.13 class-call hole */
		.PyCodeObject_co_version = 0, /* no co_version before 3.12 */
		.PyThreadState_py_recursion_remaining = 0, /* no C recursion budget before 3.12 */
		.PyThreadState_py_recursion_limit = 0, /* no C recursion budget before 3.12 */
		.PyThreadState_c_recursion_remaining = 0, /* no C recursion budget before 3.12 */
		.eval_c_units = 0, /* no C recursion budget before 3.12 */
		.PyGenObject_gi_frame_state = 0, /* used on 3.12+ only (an await's return) */
		.PyGenObject_gi_iframe = 0, /* used on 3.12+ only (an await's return) */
		.PyGenObject_finished_state = 0, /* used on 3.12+ only (an await's return) */
		/* gdb: no PyDictValues: the dict is at tp_dictoffset */
		.dict_kind = DICT_AT_OFFSET,
		.PyFrame_localsplus = 360, /* gdb: offsetof(PyFrameObject, f_localsplus) */
		.PyTypeObject_tp_basicsize = 32, /* gdb: offsetof(PyTypeObject, tp_basicsize) */
		.PyTypeObject_tp_dictoffset = 288, /* gdb: offsetof(PyTypeObject, tp_dictoffset) */
		.PyTypeObject_tp_flags = 168, /* gdb: offsetof(PyTypeObject, tp_flags) */
		/* instance dicts are found through tp_dictoffset before 3.11 */
		.PyHeapTypeObject_ht_cached_keys = 0,
		.PyDictObject_ma_keys = 32, /* gdb: offsetof(PyDictObject, ma_keys) */
		.PyDictObject_ma_values = 40, /* gdb: offsetof(PyDictObject, ma_values) */
		.PyDictKeysObject_dk_size = 8, /* gdb: offsetof(PyDictKeysObject, dk_size) */
		.PyDictKeysObject_dk_log2_index_bytes = 0, /* dk_size before 3.11 */
		.PyDictKeysObject_dk_kind = 0, /* one entry layout before 3.11 */
		/* gdb: offsetof(PyDictKeysObject, dk_nentries) */
		.PyDictKeysObject_dk_nentries = 32,
		.PyDictKeysObject_dk_indices = 40, /* gdb: offsetof(PyDictKeysObject, dk_indices) */
		.PyDictKeyEntry_size = 24, /* gdb: sizeof(PyDictKeyEntry) */
		.PyDictKeyEntry_me_key = 8, /* gdb: offsetof(PyDictKeyEntry, me_key) */
		.PyDictKeyEntry_me_value = 16, /* gdb: offsetof(PyDictKeyEntry, me_value) */
		.PyDictUnicodeEntry_size = 0, /* no str-only entries before 3.11 */
		.PyDictUnicodeEntry_me_key = 0, /* no str-only entries before 3.11 */
		.PyDictUnicodeEntry_me_value = 0, /* no str-only entries before 3.11 */
		.PyDictValues_values = 0, /* ma_values is a plain PyObject ** before 3.11 */
		.PyThreadState_c_profilefunc = 56, /* gdb: offsetof(PyThreadState, c_profilefunc) */
		.PyThreadState_c_profileobj = 72, /* gdb: offsetof(PyThreadState, c_profileobj) */
		.PyThreadState_use_tracing = 48, /* gdb: offsetof(PyThreadState, use_tracing) */
		/* use_tracing is the thread state's before 3.10, gone in 3.12 */
		.PyThreadState_trace_cframe = 0,
		/* gdb: offsetof(_PyRuntimeState, gilstate.tstate_current) */
		.PyRuntime_tstate_current = 1368,
		/* a frame object is the frame before 3.11; unused from 3.12 */
		.PyFrameObject_f_frame = 0,
		.PyInterpreterState_monitors = 0, /* no sys.monitoring before 3.12 */
		.PyInterpreterState_monitoring_callables = 0, /* no sys.monitoring before 3.12 */
		.PyInterpreterState_monitoring_tool_names = 0, /* no sys.monitoring before 3.12 */
		/* used on 3.12+ only (sys.monitoring's callbacks) */
		.PyInterpreterState_ceval_gil = 0,
		.gil_last_holder = 0, /* used on 3.12+ only (sys.monitoring's callbacks) */
	},
	{
		/* 3.9: DWARF of pyenv 3.9.18 */
		.major = 3, .minor = 9, .patch_min = 0, .patch_max = 255,
		.bpf = {
			/* gdb: whatis _PyEval_EvalFrameDefault: frame is arg1 */
			.eval_frame_arg = 1,
			.interp_frame = 0, /* gdb: the frame arg is PyFrameObject * */
			/* PyFrameObject: f_back is set before the call */
			.caller_mode = CALLER_FROM_F_BACK,
			.has_tstate_arg = 1, /* gdb: arg0 is PyThreadState * */
			.frame_code = 32, /* gdb: offsetof(PyFrameObject, f_code) */
			.frame_back = 24, /* gdb: offsetof(PyFrameObject, f_back) */
			.frame_owner = 0, /* no _PyInterpreterFrame before 3.11 */
			.stackref_tags = 0, /* f_executable/f_code is a plain pointer before 3.14 */
			.PyCodeObject_co_flags = 36, /* gdb: offsetof(PyCodeObject, co_flags) */
			/* gdb: offsetof(PyCodeObject, co_firstlineno) */
			.PyCodeObject_co_firstlineno = 40,
			/* gdb: offsetof(PyCodeObject, co_filename) */
			.PyCodeObject_co_filename = 104,
			.PyCodeObject_co_name = 112, /* gdb: offsetof(PyCodeObject, co_name) */
			.PyCodeObject_co_nlocalsplus = 0, /* used on 3.11 only (next_frame) */
			.PyCodeObject_co_stacksize = 0, /* used on 3.11 only (next_frame) */
			.PyUnicode_length = 16, /* gdb: offsetof(PyASCIIObject, length) */
			.PyUnicode_state = 32, /* gdb: offsetof(PyASCIIObject, state) */
			.PyASCIIObject_size = 48, /* gdb: sizeof(PyASCIIObject) */
			.PyCompactUnicodeObject_size = 72, /* gdb: sizeof(PyCompactUnicodeObject) */
			.PyThreadState_interp = 16, /* gdb: offsetof(PyThreadState, interp) */
			/* frames hang off cframe in 3.11 and 3.12 only */
			.PyThreadState_cframe = 0,
			/* _PyCFrame holds the frame in 3.11 and 3.12 only */
			.PyCFrame_current_frame = 0,
			.PyThreadState_current_frame = 0, /* tstate->current_frame is 3.13+ */
			/* never written: no inlining, so no deopt, before 3.11 */
			.PyInterpreterState_eval_frame = 0,
		},
		.PyInterpreterState_hook = 1400, /* gdb: offsetof(PyInterpreterState, eval_frame) */
		.PyObject_ob_type = 8, /* gdb: offsetof(PyObject, ob_type) */
		.PyTypeObject_tp_name = 24, /* gdb: offsetof(PyTypeObject, tp_name) */
		/* gdb: offsetof(_PyRuntimeState, interpreters.head) */
		.PyRuntime_interpreters_head = 32,
		/* the main interpreter is a heap object before 3.11 */
		.PyRuntime_main_interpreter = 0,
		.PyInterpreterState_next = 0, /* gdb: offsetof(PyInterpreterState, next) */
		/* gdb: offsetof(PyInterpreterState, tstate_head) */
		.PyInterpreterState_threads_head = 8,
		.PyThreadState_next = 8, /* gdb: offsetof(PyThreadState, next) */
		.PyThreadState_native_thread_id = 0, /* no native_thread_id before 3.11 */
		.PyThreadState_thread_id = 176, /* gdb: offsetof(PyThreadState, thread_id) */
		.PyThreadState_frame = 24, /* gdb: offsetof(PyThreadState, frame) */
		.PyInterpreterFrame_size = 0, /* no _PyInterpreterFrame before 3.11 */
		.PyCodeObject_co_qualname = 0, /* no co_qualname before 3.11 */
		.PyHeapTypeObject_spec_cache_init = 0, /* no inlined class call before 3.13 */
		.PyFunctionObject_func_code = 0, /* only needed for the 3.13 class-call hole */
		.PyCodeObject_co_version = 0, /* no co_version before 3.12 */
		.PyThreadState_py_recursion_remaining = 0, /* no C recursion budget before 3.12 */
		.PyThreadState_py_recursion_limit = 0, /* no C recursion budget before 3.12 */
		.PyThreadState_c_recursion_remaining = 0, /* no C recursion budget before 3.12 */
		.eval_c_units = 0, /* no C recursion budget before 3.12 */
		.PyGenObject_gi_frame_state = 0, /* used on 3.12+ only (an await's return) */
		.PyGenObject_gi_iframe = 0, /* used on 3.12+ only (an await's return) */
		.PyGenObject_finished_state = 0, /* used on 3.12+ only (an await's return) */
		/* gdb: no PyDictValues: the dict is at tp_dictoffset */
		.dict_kind = DICT_AT_OFFSET,
		.PyFrame_localsplus = 360, /* gdb: offsetof(PyFrameObject, f_localsplus) */
		.PyTypeObject_tp_basicsize = 32, /* gdb: offsetof(PyTypeObject, tp_basicsize) */
		.PyTypeObject_tp_dictoffset = 288, /* gdb: offsetof(PyTypeObject, tp_dictoffset) */
		.PyTypeObject_tp_flags = 168, /* gdb: offsetof(PyTypeObject, tp_flags) */
		/* instance dicts are found through tp_dictoffset before 3.11 */
		.PyHeapTypeObject_ht_cached_keys = 0,
		.PyDictObject_ma_keys = 32, /* gdb: offsetof(PyDictObject, ma_keys) */
		.PyDictObject_ma_values = 40, /* gdb: offsetof(PyDictObject, ma_values) */
		.PyDictKeysObject_dk_size = 8, /* gdb: offsetof(PyDictKeysObject, dk_size) */
		.PyDictKeysObject_dk_log2_index_bytes = 0, /* dk_size before 3.11 */
		.PyDictKeysObject_dk_kind = 0, /* one entry layout before 3.11 */
		/* gdb: offsetof(PyDictKeysObject, dk_nentries) */
		.PyDictKeysObject_dk_nentries = 32,
		.PyDictKeysObject_dk_indices = 40, /* gdb: offsetof(PyDictKeysObject, dk_indices) */
		.PyDictKeyEntry_size = 24, /* gdb: sizeof(PyDictKeyEntry) */
		.PyDictKeyEntry_me_key = 8, /* gdb: offsetof(PyDictKeyEntry, me_key) */
		.PyDictKeyEntry_me_value = 16, /* gdb: offsetof(PyDictKeyEntry, me_value) */
		.PyDictUnicodeEntry_size = 0, /* no str-only entries before 3.11 */
		.PyDictUnicodeEntry_me_key = 0, /* no str-only entries before 3.11 */
		.PyDictUnicodeEntry_me_value = 0, /* no str-only entries before 3.11 */
		.PyDictValues_values = 0, /* ma_values is a plain PyObject ** before 3.11 */
		.PyThreadState_c_profilefunc = 56, /* gdb: offsetof(PyThreadState, c_profilefunc) */
		.PyThreadState_c_profileobj = 72, /* gdb: offsetof(PyThreadState, c_profileobj) */
		.PyThreadState_use_tracing = 48, /* gdb: offsetof(PyThreadState, use_tracing) */
		/* use_tracing is the thread state's before 3.10, gone in 3.12 */
		.PyThreadState_trace_cframe = 0,
		/* gdb: offsetof(_PyRuntimeState, gilstate.tstate_current) */
		.PyRuntime_tstate_current = 568,
		/* a frame object is the frame before 3.11; unused from 3.12 */
		.PyFrameObject_f_frame = 0,
		.PyInterpreterState_monitors = 0, /* no sys.monitoring before 3.12 */
		.PyInterpreterState_monitoring_callables = 0, /* no sys.monitoring before 3.12 */
		.PyInterpreterState_monitoring_tool_names = 0, /* no sys.monitoring before 3.12 */
		/* used on 3.12+ only (sys.monitoring's callbacks) */
		.PyInterpreterState_ceval_gil = 0,
		.gil_last_holder = 0, /* used on 3.12+ only (sys.monitoring's callbacks) */
	},
	{
		/* 3.10: DWARF of pyenv 3.10.13 */
		.major = 3, .minor = 10, .patch_min = 0, .patch_max = 255,
		.bpf = {
			/* gdb: whatis _PyEval_EvalFrameDefault: frame is arg1 */
			.eval_frame_arg = 1,
			.interp_frame = 0, /* gdb: the frame arg is PyFrameObject * */
			/* PyFrameObject: f_back is set before the call */
			.caller_mode = CALLER_FROM_F_BACK,
			.has_tstate_arg = 1, /* gdb: arg0 is PyThreadState * */
			.frame_code = 32, /* gdb: offsetof(PyFrameObject, f_code) */
			.frame_back = 24, /* gdb: offsetof(PyFrameObject, f_back) */
			.frame_owner = 0, /* no _PyInterpreterFrame before 3.11 */
			.stackref_tags = 0, /* f_executable/f_code is a plain pointer before 3.14 */
			.PyCodeObject_co_flags = 36, /* gdb: offsetof(PyCodeObject, co_flags) */
			/* gdb: offsetof(PyCodeObject, co_firstlineno) */
			.PyCodeObject_co_firstlineno = 40,
			/* gdb: offsetof(PyCodeObject, co_filename) */
			.PyCodeObject_co_filename = 104,
			.PyCodeObject_co_name = 112, /* gdb: offsetof(PyCodeObject, co_name) */
			.PyCodeObject_co_nlocalsplus = 0, /* used on 3.11 only (next_frame) */
			.PyCodeObject_co_stacksize = 0, /* used on 3.11 only (next_frame) */
			.PyUnicode_length = 16, /* gdb: offsetof(PyASCIIObject, length) */
			.PyUnicode_state = 32, /* gdb: offsetof(PyASCIIObject, state) */
			.PyASCIIObject_size = 48, /* gdb: sizeof(PyASCIIObject) */
			.PyCompactUnicodeObject_size = 72, /* gdb: sizeof(PyCompactUnicodeObject) */
			.PyThreadState_interp = 16, /* gdb: offsetof(PyThreadState, interp) */
			/* frames hang off cframe in 3.11 and 3.12 only */
			.PyThreadState_cframe = 0,
			/* _PyCFrame holds the frame in 3.11 and 3.12 only */
			.PyCFrame_current_frame = 0,
			.PyThreadState_current_frame = 0, /* tstate->current_frame is 3.13+ */
			/* never written: no inlining, so no deopt, before 3.11 */
			.PyInterpreterState_eval_frame = 0,
		},
		.PyInterpreterState_hook = 1368, /* gdb: offsetof(PyInterpreterState, eval_frame) */
		.PyObject_ob_type = 8, /* gdb: offsetof(PyObject, ob_type) */
		.PyTypeObject_tp_name = 24, /* gdb: offsetof(PyTypeObject, tp_name) */
		/* gdb: offsetof(_PyRuntimeState, interpreters.head) */
		.PyRuntime_interpreters_head = 32,
		/* the main interpreter is a heap object before 3.11 */
		.PyRuntime_main_interpreter = 0,
		.PyInterpreterState_next = 0, /* gdb: offsetof(PyInterpreterState, next) */
		/* gdb: offsetof(PyInterpreterState, tstate_head) */
		.PyInterpreterState_threads_head = 8,
		.PyThreadState_next = 8, /* gdb: offsetof(PyThreadState, next) */
		.PyThreadState_native_thread_id = 0, /* no native_thread_id before 3.11 */
		.PyThreadState_thread_id = 176, /* gdb: offsetof(PyThreadState, thread_id) */
		.PyThreadState_frame = 24, /* gdb: offsetof(PyThreadState, frame) */
		.PyInterpreterFrame_size = 0, /* no _PyInterpreterFrame before 3.11 */
		.PyCodeObject_co_qualname = 0, /* no co_qualname before 3.11 */
		.PyHeapTypeObject_spec_cache_init = 0, /* no inlined class call before 3.13 */
		.PyFunctionObject_func_code = 0, /* only needed for the 3.13 class-call hole */
		.PyCodeObject_co_version = 0, /* no co_version before 3.12 */
		.PyThreadState_py_recursion_remaining = 0, /* no C recursion budget before 3.12 */
		.PyThreadState_py_recursion_limit = 0, /* no C recursion budget before 3.12 */
		.PyThreadState_c_recursion_remaining = 0, /* no C recursion budget before 3.12 */
		.eval_c_units = 0, /* no C recursion budget before 3.12 */
		.PyGenObject_gi_frame_state = 0, /* used on 3.12+ only (an await's return) */
		.PyGenObject_gi_iframe = 0, /* used on 3.12+ only (an await's return) */
		.PyGenObject_finished_state = 0, /* used on 3.12+ only (an await's return) */
		/* gdb: no PyDictValues: the dict is at tp_dictoffset */
		.dict_kind = DICT_AT_OFFSET,
		.PyFrame_localsplus = 352, /* gdb: offsetof(PyFrameObject, f_localsplus) */
		.PyTypeObject_tp_basicsize = 32, /* gdb: offsetof(PyTypeObject, tp_basicsize) */
		.PyTypeObject_tp_dictoffset = 288, /* gdb: offsetof(PyTypeObject, tp_dictoffset) */
		.PyTypeObject_tp_flags = 168, /* gdb: offsetof(PyTypeObject, tp_flags) */
		/* instance dicts are found through tp_dictoffset before 3.11 */
		.PyHeapTypeObject_ht_cached_keys = 0,
		.PyDictObject_ma_keys = 32, /* gdb: offsetof(PyDictObject, ma_keys) */
		.PyDictObject_ma_values = 40, /* gdb: offsetof(PyDictObject, ma_values) */
		.PyDictKeysObject_dk_size = 8, /* gdb: offsetof(PyDictKeysObject, dk_size) */
		.PyDictKeysObject_dk_log2_index_bytes = 0, /* dk_size before 3.11 */
		.PyDictKeysObject_dk_kind = 0, /* one entry layout before 3.11 */
		/* gdb: offsetof(PyDictKeysObject, dk_nentries) */
		.PyDictKeysObject_dk_nentries = 32,
		.PyDictKeysObject_dk_indices = 40, /* gdb: offsetof(PyDictKeysObject, dk_indices) */
		.PyDictKeyEntry_size = 24, /* gdb: sizeof(PyDictKeyEntry) */
		.PyDictKeyEntry_me_key = 8, /* gdb: offsetof(PyDictKeyEntry, me_key) */
		.PyDictKeyEntry_me_value = 16, /* gdb: offsetof(PyDictKeyEntry, me_value) */
		.PyDictUnicodeEntry_size = 0, /* no str-only entries before 3.11 */
		.PyDictUnicodeEntry_me_key = 0, /* no str-only entries before 3.11 */
		.PyDictUnicodeEntry_me_value = 0, /* no str-only entries before 3.11 */
		.PyDictValues_values = 0, /* ma_values is a plain PyObject ** before 3.11 */
		.PyThreadState_c_profilefunc = 56, /* gdb: offsetof(PyThreadState, c_profilefunc) */
		.PyThreadState_c_profileobj = 72, /* gdb: offsetof(PyThreadState, c_profileobj) */
		.PyThreadState_use_tracing = 0, /* in the thread's cframe from 3.10 */
		.PyThreadState_trace_cframe = 48, /* gdb: offsetof(PyThreadState, cframe) */
		/* gdb: offsetof(_PyRuntimeState, gilstate.tstate_current) */
		.PyRuntime_tstate_current = 568,
		/* a frame object is the frame before 3.11; unused from 3.12 */
		.PyFrameObject_f_frame = 0,
		.PyInterpreterState_monitors = 0, /* no sys.monitoring before 3.12 */
		.PyInterpreterState_monitoring_callables = 0, /* no sys.monitoring before 3.12 */
		.PyInterpreterState_monitoring_tool_names = 0, /* no sys.monitoring before 3.12 */
		/* used on 3.12+ only (sys.monitoring's callbacks) */
		.PyInterpreterState_ceval_gil = 0,
		.gil_last_holder = 0, /* used on 3.12+ only (sys.monitoring's callbacks) */
	},
	{
		/* 3.11: DWARF of pyenv 3.11.7 */
		/* machine code and data of /usr/bin/python3.11 (3.11.2) agree */
		.major = 3, .minor = 11, .patch_min = 0, .patch_max = 255,
		.bpf = {
			/* gdb: whatis _PyEval_EvalFrameDefault: frame is arg1 */
			.eval_frame_arg = 1,
			.interp_frame = 1, /* gdb: the frame arg is _PyInterpreterFrame * */
			/* gdb: PyThreadState has cframe->current_frame */
			.caller_mode = CALLER_FROM_CFRAME,
			.has_tstate_arg = 1, /* gdb: arg0 is PyThreadState * */
			.frame_code = 32, /* gdb: offsetof(_PyInterpreterFrame, f_code) */
			.frame_back = 48, /* gdb: offsetof(_PyInterpreterFrame, previous) */
			.frame_owner = 69, /* gdb: offsetof(_PyInterpreterFrame, owner) */
			.stackref_tags = 0, /* f_executable/f_code is a plain pointer before 3.14 */
			.PyCodeObject_co_flags = 48, /* gdb: offsetof(PyCodeObject, co_flags) */
			/* gdb: offsetof(PyCodeObject, co_firstlineno) */
			.PyCodeObject_co_firstlineno = 72,
			/* gdb: offsetof(PyCodeObject, co_filename) */
			.PyCodeObject_co_filename = 112,
			.PyCodeObject_co_name = 120, /* gdb: offsetof(PyCodeObject, co_name) */
			/* gdb: offsetof(PyCodeObject, co_nlocalsplus) */
			.PyCodeObject_co_nlocalsplus = 76,
			/* gdb: offsetof(PyCodeObject, co_stacksize) */
			.PyCodeObject_co_stacksize = 68,
			.PyUnicode_length = 16, /* gdb: offsetof(PyASCIIObject, length) */
			.PyUnicode_state = 32, /* gdb: offsetof(PyASCIIObject, state) */
			.PyASCIIObject_size = 48, /* gdb: sizeof(PyASCIIObject) */
			.PyCompactUnicodeObject_size = 72, /* gdb: sizeof(PyCompactUnicodeObject) */
			.PyThreadState_interp = 16, /* gdb: offsetof(PyThreadState, interp) */
			.PyThreadState_cframe = 56, /* gdb: offsetof(PyThreadState, cframe) */
			.PyCFrame_current_frame = 8, /* gdb: offsetof(_PyCFrame, current_frame) */
			.PyThreadState_current_frame = 0, /* tstate->current_frame is 3.13+ */
			/* gdb: offsetof(PyInterpreterState, eval_frame) */
			.PyInterpreterState_eval_frame = 1424,
		},
		.PyInterpreterState_hook = 1424, /* gdb: offsetof(PyInterpreterState, eval_frame) */
		.PyObject_ob_type = 8, /* gdb: offsetof(PyObject, ob_type) */
		.PyTypeObject_tp_name = 24, /* gdb: offsetof(PyTypeObject, tp_name) */
		/* gdb: offsetof(_PyRuntimeState, interpreters.head) */
		.PyRuntime_interpreters_head = 40,
		/* gdb: offsetof(_PyRuntimeState, _main_interpreter) */
		.PyRuntime_main_interpreter = 58936,
		.PyInterpreterState_next = 0, /* gdb: offsetof(PyInterpreterState, next) */
		/* gdb: offsetof(PyInterpreterState, threads.head) */
		.PyInterpreterState_threads_head = 16,
		.PyThreadState_next = 8, /* gdb: offsetof(PyThreadState, next) */
		/* gdb: offsetof(PyThreadState, native_thread_id) */
		.PyThreadState_native_thread_id = 160,
		.PyThreadState_thread_id = 152, /* gdb: offsetof(PyThreadState, thread_id) */
		.PyThreadState_frame = 0, /* no tstate->frame since 3.11 */
		.PyInterpreterFrame_size = 80, /* gdb: sizeof(_PyInterpreterFrame) */
		.PyCodeObject_co_qualname = 128, /* gdb: offsetof(PyCodeObject, co_qualname) */
		.PyHeapTypeObject_spec_cache_init = 0, /* no inlined class call before 3.13 */
		.PyFunctionObject_func_code = 0, /* only needed for the 3.13 class-call hole */
		.PyCodeObject_co_version = 0, /* no co_version before 3.12 */
		.PyThreadState_py_recursion_remaining = 0, /* no C recursion budget before 3.12 */
		.PyThreadState_py_recursion_limit = 0, /* no C recursion budget before 3.12 */
		.PyThreadState_c_recursion_remaining = 0, /* no C recursion budget before 3.12 */
		.eval_c_units = 0, /* no C recursion budget before 3.12 */
		.PyGenObject_gi_frame_state = 0, /* used on 3.12+ only (an await's return) */
		.PyGenObject_gi_iframe = 0, /* used on 3.12+ only (an await's return) */
		.PyGenObject_finished_state = 0, /* used on 3.12+ only (an await's return) */
		/* gdb: PyDictValues, no PyDictOrValues: values/dict 4/3 words before */
		.dict_kind = DICT_MANAGED,
		.PyFrame_localsplus = 72, /* gdb: offsetof(_PyInterpreterFrame, localsplus) */
		.PyTypeObject_tp_basicsize = 32, /* gdb: offsetof(PyTypeObject, tp_basicsize) */
		.PyTypeObject_tp_dictoffset = 288, /* gdb: offsetof(PyTypeObject, tp_dictoffset) */
		.PyTypeObject_tp_flags = 168, /* gdb: offsetof(PyTypeObject, tp_flags) */
		/* gdb: offsetof(PyHeapTypeObject, ht_cached_keys) */
		.PyHeapTypeObject_ht_cached_keys = 872,
		.PyDictObject_ma_keys = 32, /* gdb: offsetof(PyDictObject, ma_keys) */
		.PyDictObject_ma_values = 40, /* gdb: offsetof(PyDictObject, ma_values) */
		.PyDictKeysObject_dk_size = 0, /* dk_log2_index_bytes since 3.11 */
		/* gdb: offsetof(PyDictKeysObject, dk_log2_index_bytes) */
		.PyDictKeysObject_dk_log2_index_bytes = 9,
		.PyDictKeysObject_dk_kind = 10, /* gdb: offsetof(PyDictKeysObject, dk_kind) */
		/* gdb: offsetof(PyDictKeysObject, dk_nentries) */
		.PyDictKeysObject_dk_nentries = 24,
		.PyDictKeysObject_dk_indices = 32, /* gdb: offsetof(PyDictKeysObject, dk_indices) */
		.PyDictKeyEntry_size = 24, /* gdb: sizeof(PyDictKeyEntry) */
		.PyDictKeyEntry_me_key = 8, /* gdb: offsetof(PyDictKeyEntry, me_key) */
		.PyDictKeyEntry_me_value = 16, /* gdb: offsetof(PyDictKeyEntry, me_value) */
		.PyDictUnicodeEntry_size = 16, /* gdb: sizeof(PyDictUnicodeEntry) */
		.PyDictUnicodeEntry_me_key = 0, /* gdb: offsetof(PyDictUnicodeEntry, me_key) */
		.PyDictUnicodeEntry_me_value = 8, /* gdb: offsetof(PyDictUnicodeEntry, me_value) */
		.PyDictValues_values = 0, /* gdb: offsetof(PyDictValues, values) */
		.PyThreadState_c_profilefunc = 64, /* gdb: offsetof(PyThreadState, c_profilefunc) */
		.PyThreadState_c_profileobj = 80, /* gdb: offsetof(PyThreadState, c_profileobj) */
		.PyThreadState_use_tracing = 0, /* in the thread's cframe from 3.10 */
		.PyThreadState_trace_cframe = 56, /* gdb: offsetof(PyThreadState, cframe) */
		/* gdb: offsetof(_PyRuntimeState, gilstate.tstate_current) */
		.PyRuntime_tstate_current = 576,
		.PyFrameObject_f_frame = 24, /* gdb: offsetof(PyFrameObject, f_frame) */
		.PyInterpreterState_monitors = 0, /* no sys.monitoring before 3.12 */
		.PyInterpreterState_monitoring_callables = 0, /* no sys.monitoring before 3.12 */
		.PyInterpreterState_monitoring_tool_names = 0, /* no sys.monitoring before 3.12 */
		/* used on 3.12+ only (sys.monitoring's callbacks) */
		.PyInterpreterState_ceval_gil = 0,
		.gil_last_holder = 0, /* used on 3.12+ only (sys.monitoring's callbacks) */
	},
	{
		/* 3.12: DWARF of pyenv 3.12.1 */
		.major = 3, .minor = 12, .patch_min = 0, .patch_max = 255,
		.bpf = {
			/* gdb: whatis _PyEval_EvalFrameDefault: frame is arg1 */
			.eval_frame_arg = 1,
			.interp_frame = 1, /* gdb: the frame arg is _PyInterpreterFrame * */
			/* gdb: PyThreadState has cframe->current_frame */
			.caller_mode = CALLER_FROM_CFRAME,
			.has_tstate_arg = 1, /* gdb: arg0 is PyThreadState * */
			.frame_code = 0, /* gdb: offsetof(_PyInterpreterFrame, f_code) */
			.frame_back = 8, /* gdb: offsetof(_PyInterpreterFrame, previous) */
			.frame_owner = 70, /* gdb: offsetof(_PyInterpreterFrame, owner) */
			.stackref_tags = 0, /* f_executable/f_code is a plain pointer before 3.14 */
			.PyCodeObject_co_flags = 48, /* gdb: offsetof(PyCodeObject, co_flags) */
			/* gdb: offsetof(PyCodeObject, co_firstlineno) */
			.PyCodeObject_co_firstlineno = 68,
			/* gdb: offsetof(PyCodeObject, co_filename) */
			.PyCodeObject_co_filename = 112,
			.PyCodeObject_co_name = 120, /* gdb: offsetof(PyCodeObject, co_name) */
			.PyCodeObject_co_nlocalsplus = 0, /* used on 3.11 only (next_frame) */
			.PyCodeObject_co_stacksize = 0, /* used on 3.11 only (next_frame) */
			.PyUnicode_length = 16, /* gdb: offsetof(PyASCIIObject, length) */
			.PyUnicode_state = 32, /* gdb: offsetof(PyASCIIObject, state) */
			.PyASCIIObject_size = 40, /* gdb: sizeof(PyASCIIObject) */
			.PyCompactUnicodeObject_size = 56, /* gdb: sizeof(PyCompactUnicodeObject) */
			.PyThreadState_interp = 16, /* gdb: offsetof(PyThreadState, interp) */
			.PyThreadState_cframe = 56, /* gdb: offsetof(PyThreadState, cframe) */
			.PyCFrame_current_frame = 0, /* gdb: offsetof(_PyCFrame, current_frame) */
			.PyThreadState_current_frame = 0, /* tstate->current_frame is 3.13+ */
			/* gdb: offsetof(PyInterpreterState, eval_frame) */
			.PyInterpreterState_eval_frame = 1744,
		},
		.PyInterpreterState_hook = 1744, /* gdb: offsetof(PyInterpreterState, eval_frame) */
		.PyObject_ob_type = 8, /* gdb: offsetof(PyObject, ob_type) */
		.PyTypeObject_tp_name = 24, /* gdb: offsetof(PyTypeObject, tp_name) */
		/* gdb: offsetof(_PyRuntimeState, interpreters.head) */
		.PyRuntime_interpreters_head = 40,
		/* gdb: offsetof(_PyRuntimeState, _main_interpreter) */
		.PyRuntime_main_interpreter = 76392,
		.PyInterpreterState_next = 0, /* gdb: offsetof(PyInterpreterState, next) */
		/* gdb: offsetof(PyInterpreterState, threads.head) */
		.PyInterpreterState_threads_head = 72,
		.PyThreadState_next = 8, /* gdb: offsetof(PyThreadState, next) */
		/* gdb: offsetof(PyThreadState, native_thread_id) */
		.PyThreadState_native_thread_id = 144,
		.PyThreadState_thread_id = 136, /* gdb: offsetof(PyThreadState, thread_id) */
		.PyThreadState_frame = 0, /* no tstate->frame since 3.11 */
		.PyInterpreterFrame_size = 80, /* gdb: sizeof(_PyInterpreterFrame) */
		.PyCodeObject_co_qualname = 128, /* gdb: offsetof(PyCodeObject, co_qualname) */
		.PyHeapTypeObject_spec_cache_init = 0, /* no inlined class call before 3.13 */
		.PyFunctionObject_func_code = 0, /* only needed for the 3.13 class-call hole */
		.PyCodeObject_co_version = 92, /* gdb: offsetof(PyCodeObject, co_version) */
		/* gdb: offsetof(PyThreadState, py_recursion_remaining) */
		.PyThreadState_py_recursion_remaining = 28,
		/* gdb: offsetof(PyThreadState, py_recursion_limit) */
		.PyThreadState_py_recursion_limit = 32,
		/* gdb: offsetof(PyThreadState, c_recursion_remaining) */
		.PyThreadState_c_recursion_remaining = 36,
		/* _PyEval_EvalFrameDefault: lea -2(...) stored to c_recursion_remaining */
		.eval_c_units = 2,
		.PyGenObject_gi_frame_state = 67, /* gdb: offsetof(PyGenObject, gi_frame_state) */
		.PyGenObject_gi_iframe = 72, /* gdb: offsetof(PyGenObject, gi_iframe) */
		.PyGenObject_finished_state = 1, /* gdb: print (int)FRAME_COMPLETED */
		/* gdb: PyDictOrValues: one tagged word 3 words before the object */
		.dict_kind = DICT_OR_VALUES,
		.PyFrame_localsplus = 72, /* gdb: offsetof(_PyInterpreterFrame, localsplus) */
		.PyTypeObject_tp_basicsize = 32, /* gdb: offsetof(PyTypeObject, tp_basicsize) */
		.PyTypeObject_tp_dictoffset = 288, /* gdb: offsetof(PyTypeObject, tp_dictoffset) */
		.PyTypeObject_tp_flags = 168, /* gdb: offsetof(PyTypeObject, tp_flags) */
		/* gdb: offsetof(PyHeapTypeObject, ht_cached_keys) */
		.PyHeapTypeObject_ht_cached_keys = 880,
		.PyDictObject_ma_keys = 32, /* gdb: offsetof(PyDictObject, ma_keys) */
		.PyDictObject_ma_values = 40, /* gdb: offsetof(PyDictObject, ma_values) */
		.PyDictKeysObject_dk_size = 0, /* dk_log2_index_bytes since 3.11 */
		/* gdb: offsetof(PyDictKeysObject, dk_log2_index_bytes) */
		.PyDictKeysObject_dk_log2_index_bytes = 9,
		.PyDictKeysObject_dk_kind = 10, /* gdb: offsetof(PyDictKeysObject, dk_kind) */
		/* gdb: offsetof(PyDictKeysObject, dk_nentries) */
		.PyDictKeysObject_dk_nentries = 24,
		.PyDictKeysObject_dk_indices = 32, /* gdb: offsetof(PyDictKeysObject, dk_indices) */
		.PyDictKeyEntry_size = 24, /* gdb: sizeof(PyDictKeyEntry) */
		.PyDictKeyEntry_me_key = 8, /* gdb: offsetof(PyDictKeyEntry, me_key) */
		.PyDictKeyEntry_me_value = 16, /* gdb: offsetof(PyDictKeyEntry, me_value) */
		.PyDictUnicodeEntry_size = 16, /* gdb: sizeof(PyDictUnicodeEntry) */
		.PyDictUnicodeEntry_me_key = 0, /* gdb: offsetof(PyDictUnicodeEntry, me_key) */
		.PyDictUnicodeEntry_me_value = 8, /* gdb: offsetof(PyDictUnicodeEntry, me_value) */
		.PyDictValues_values = 0, /* gdb: offsetof(PyDictValues, values) */
		/* 3.12+: C calls come from a sys.monitoring tool */
		.PyThreadState_c_profilefunc = 0,
		/* 3.12+: C calls come from a sys.monitoring tool */
		.PyThreadState_c_profileobj = 0,
		.PyThreadState_use_tracing = 0, /* in the thread's cframe from 3.10 */
		/* use_tracing is the thread state's before 3.10, gone in 3.12 */
		.PyThreadState_trace_cframe = 0,
		.PyRuntime_tstate_current = 0, /* 3.12+: a thread-local */
		/* a frame object is the frame before 3.11; unused from 3.12 */
		.PyFrameObject_f_frame = 0,
		/* gdb: offsetof(PyInterpreterState, monitors) */
		.PyInterpreterState_monitors = 381744,
		/* gdb: offsetof(PyInterpreterState, monitoring_callables) */
		.PyInterpreterState_monitoring_callables = 381784,
		/* gdb: offsetof(PyInterpreterState, monitoring_tool_names) */
		.PyInterpreterState_monitoring_tool_names = 382872,
		/* gdb: offsetof(PyInterpreterState, ceval.gil) */
		.PyInterpreterState_ceval_gil = 384,
		.gil_last_holder = 8, /* gdb: offsetof(_gil_runtime_state, last_holder) */
	},
	{
		/* 3.13: DWARF of pyenv 3.13.0 */
		.major = 3, .minor = 13, .patch_min = 0, .patch_max = 255,
		.bpf = {
			/* gdb: whatis _PyEval_EvalFrameDefault: frame is arg1 */
			.eval_frame_arg = 1,
			.interp_frame = 1, /* gdb: the frame arg is _PyInterpreterFrame * */
			/* gdb: PyThreadState has current_frame */
			.caller_mode = CALLER_FROM_TSTATE,
			.has_tstate_arg = 1, /* gdb: arg0 is PyThreadState * */
			.frame_code = 0, /* gdb: offsetof(_PyInterpreterFrame, f_executable) */
			.frame_back = 8, /* gdb: offsetof(_PyInterpreterFrame, previous) */
			.frame_owner = 70, /* gdb: offsetof(_PyInterpreterFrame, owner) */
			.stackref_tags = 0, /* f_executable/f_code is a plain pointer before 3.14 */
			.PyCodeObject_co_flags = 48, /* gdb: offsetof(PyCodeObject, co_flags) */
			/* gdb: offsetof(PyCodeObject, co_firstlineno) */
			.PyCodeObject_co_firstlineno = 68,
			/* gdb: offsetof(PyCodeObject, co_filename) */
			.PyCodeObject_co_filename = 112,
			.PyCodeObject_co_name = 120, /* gdb: offsetof(PyCodeObject, co_name) */
			.PyCodeObject_co_nlocalsplus = 0, /* used on 3.11 only (next_frame) */
			.PyCodeObject_co_stacksize = 0, /* used on 3.11 only (next_frame) */
			.PyUnicode_length = 16, /* gdb: offsetof(PyASCIIObject, length) */
			.PyUnicode_state = 32, /* gdb: offsetof(PyASCIIObject, state) */
			.PyASCIIObject_size = 40, /* gdb: sizeof(PyASCIIObject) */
			.PyCompactUnicodeObject_size = 56, /* gdb: sizeof(PyCompactUnicodeObject) */
			.PyThreadState_interp = 16, /* gdb: offsetof(PyThreadState, interp) */
			/* frames hang off cframe in 3.11 and 3.12 only */
			.PyThreadState_cframe = 0,
			/* _PyCFrame holds the frame in 3.11 and 3.12 only */
			.PyCFrame_current_frame = 0,
			/* gdb: offsetof(PyThreadState, current_frame) */
			.PyThreadState_current_frame = 72,
			/* gdb: offsetof(PyInterpreterState, eval_frame) */
			.PyInterpreterState_eval_frame = 8472,
		},
		.PyInterpreterState_hook = 8472, /* gdb: offsetof(PyInterpreterState, eval_frame) */
		.PyObject_ob_type = 8, /* gdb: offsetof(PyObject, ob_type) */
		.PyTypeObject_tp_name = 24, /* gdb: offsetof(PyTypeObject, tp_name) */
		/* gdb: offsetof(_PyRuntimeState, interpreters.head) */
		.PyRuntime_interpreters_head = 632,
		/* gdb: offsetof(_PyRuntimeState, _main_interpreter) */
		.PyRuntime_main_interpreter = 88352,
		.PyInterpreterState_next = 7264, /* gdb: offsetof(PyInterpreterState, next) */
		/* gdb: offsetof(PyInterpreterState, threads.head) */
		.PyInterpreterState_threads_head = 7344,
		.PyThreadState_next = 8, /* gdb: offsetof(PyThreadState, next) */
		/* gdb: offsetof(PyThreadState, native_thread_id) */
		.PyThreadState_native_thread_id = 160,
		.PyThreadState_thread_id = 152, /* gdb: offsetof(PyThreadState, thread_id) */
		.PyThreadState_frame = 0, /* no tstate->frame since 3.11 */
		.PyInterpreterFrame_size = 80, /* gdb: sizeof(_PyInterpreterFrame) */
		.PyCodeObject_co_qualname = 128, /* gdb: offsetof(PyCodeObject, co_qualname) */
		/* gdb: offsetof(PyHeapTypeObject, _spec_cache.init) */
		.PyHeapTypeObject_spec_cache_init = 920,
		.PyFunctionObject_func_code = 48, /* gdb: offsetof(PyFunctionObject, func_code) */
		.PyCodeObject_co_version = 92, /* gdb: offsetof(PyCodeObject, co_version) */
		/* gdb: offsetof(PyThreadState, py_recursion_remaining) */
		.PyThreadState_py_recursion_remaining = 44,
		/* gdb: offsetof(PyThreadState, py_recursion_limit) */
		.PyThreadState_py_recursion_limit = 48,
		/* gdb: offsetof(PyThreadState, c_recursion_remaining) */
		.PyThreadState_c_recursion_remaining = 52,
		/* _PyEval_EvalFrameDefault: lea -2(...) stored to c_recursion_remaining */
		.eval_c_units = 2,
		.PyGenObject_gi_frame_state = 67, /* gdb: offsetof(PyGenObject, gi_frame_state) */
		.PyGenObject_gi_iframe = 72, /* gdb: offsetof(PyGenObject, gi_iframe) */
		.PyGenObject_finished_state = 1, /* gdb: print (int)FRAME_COMPLETED */
		/* gdb: PyDictValues.embedded: values inline after tp_basicsize */
		.dict_kind = DICT_INLINE_VALUES,
		.PyFrame_localsplus = 72, /* gdb: offsetof(_PyInterpreterFrame, localsplus) */
		.PyTypeObject_tp_basicsize = 32, /* gdb: offsetof(PyTypeObject, tp_basicsize) */
		.PyTypeObject_tp_dictoffset = 288, /* gdb: offsetof(PyTypeObject, tp_dictoffset) */
		.PyTypeObject_tp_flags = 168, /* gdb: offsetof(PyTypeObject, tp_flags) */
		/* gdb: offsetof(PyHeapTypeObject, ht_cached_keys) */
		.PyHeapTypeObject_ht_cached_keys = 880,
		.PyDictObject_ma_keys = 32, /* gdb: offsetof(PyDictObject, ma_keys) */
		.PyDictObject_ma_values = 40, /* gdb: offsetof(PyDictObject, ma_values) */
		.PyDictKeysObject_dk_size = 0, /* dk_log2_index_bytes since 3.11 */
		/* gdb: offsetof(PyDictKeysObject, dk_log2_index_bytes) */
		.PyDictKeysObject_dk_log2_index_bytes = 9,
		.PyDictKeysObject_dk_kind = 10, /* gdb: offsetof(PyDictKeysObject, dk_kind) */
		/* gdb: offsetof(PyDictKeysObject, dk_nentries) */
		.PyDictKeysObject_dk_nentries = 24,
		.PyDictKeysObject_dk_indices = 32, /* gdb: offsetof(PyDictKeysObject, dk_indices) */
		.PyDictKeyEntry_size = 24, /* gdb: sizeof(PyDictKeyEntry) */
		.PyDictKeyEntry_me_key = 8, /* gdb: offsetof(PyDictKeyEntry, me_key) */
		.PyDictKeyEntry_me_value = 16, /* gdb: offsetof(PyDictKeyEntry, me_value) */
		.PyDictUnicodeEntry_size = 16, /* gdb: sizeof(PyDictUnicodeEntry) */
		.PyDictUnicodeEntry_me_key = 0, /* gdb: offsetof(PyDictUnicodeEntry, me_key) */
		.PyDictUnicodeEntry_me_value = 8, /* gdb: offsetof(PyDictUnicodeEntry, me_value) */
		.PyDictValues_values = 8, /* gdb: offsetof(PyDictValues, values) */
		/* 3.12+: C calls come from a sys.monitoring tool */
		.PyThreadState_c_profilefunc = 0,
		/* 3.12+: C calls come from a sys.monitoring tool */
		.PyThreadState_c_profileobj = 0,
		.PyThreadState_use_tracing = 0, /* in the thread's cframe from 3.10 */
		/* use_tracing is the thread state's before 3.10, gone in 3.12 */
		.PyThreadState_trace_cframe = 0,
		.PyRuntime_tstate_current = 0, /* 3.12+: a thread-local */
		/* a frame object is the frame before 3.11; unused from 3.12 */
		.PyFrameObject_f_frame = 0,
		/* gdb: offsetof(PyInterpreterState, monitors) */
		.PyInterpreterState_monitors = 193136,
		/* gdb: offsetof(PyInterpreterState, monitoring_callables) */
		.PyInterpreterState_monitoring_callables = 193176,
		/* gdb: offsetof(PyInterpreterState, monitoring_tool_names) */
		.PyInterpreterState_monitoring_tool_names = 194264,
		/* gdb: offsetof(PyInterpreterState, ceval.gil) */
		.PyInterpreterState_ceval_gil = 16,
		.gil_last_holder = 8, /* gdb: offsetof(_gil_runtime_state, last_holder) */
	},
	{
		/* 3.14: DWARF of Debian 3.14.10's -dev headers */
		/* machine code and data of /usr/bin/python3.14 of the sid root (3.14.10) agree */
		/* machine code and data of /usr/lib/x86_64-linux-gnu/libpython3.14.so.1.0 of the
		 * sid root (3.14.10) agree */
		.major = 3, .minor = 14, .patch_min = 0, .patch_max = 255,
		.bpf = {
			/* gdb: whatis _PyEval_EvalFrameDefault: frame is arg1 */
			.eval_frame_arg = 1,
			.interp_frame = 1, /* gdb: the frame arg is struct _PyInterpreterFrame * */
			/* gdb: PyThreadState has current_frame */
			.caller_mode = CALLER_FROM_TSTATE,
			.has_tstate_arg = 1, /* gdb: arg0 is PyThreadState * */
			.frame_code = 0, /* gdb: offsetof(_PyInterpreterFrame, f_executable) */
			.frame_back = 8, /* gdb: offsetof(_PyInterpreterFrame, previous) */
			.frame_owner = 74, /* gdb: offsetof(_PyInterpreterFrame, owner) */
			/* gdb: f_executable is a _PyStackRef; Py_TAG_BITS of the -dev headers */
			.stackref_tags = 3,
			.PyCodeObject_co_flags = 48, /* gdb: offsetof(PyCodeObject, co_flags) */
			/* gdb: offsetof(PyCodeObject, co_firstlineno) */
			.PyCodeObject_co_firstlineno = 68,
			/* gdb: offsetof(PyCodeObject, co_filename) */
			.PyCodeObject_co_filename = 112,
			.PyCodeObject_co_name = 120, /* gdb: offsetof(PyCodeObject, co_name) */
			.PyCodeObject_co_nlocalsplus = 0, /* used on 3.11 only (next_frame) */
			.PyCodeObject_co_stacksize = 0, /* used on 3.11 only (next_frame) */
			.PyUnicode_length = 16, /* gdb: offsetof(PyASCIIObject, length) */
			.PyUnicode_state = 32, /* gdb: offsetof(PyASCIIObject, state) */
			.PyASCIIObject_size = 40, /* gdb: sizeof(PyASCIIObject) */
			.PyCompactUnicodeObject_size = 56, /* gdb: sizeof(PyCompactUnicodeObject) */
			.PyThreadState_interp = 16, /* gdb: offsetof(PyThreadState, interp) */
			/* frames hang off cframe in 3.11 and 3.12 only */
			.PyThreadState_cframe = 0,
			/* _PyCFrame holds the frame in 3.11 and 3.12 only */
			.PyCFrame_current_frame = 0,
			/* gdb: offsetof(PyThreadState, current_frame) */
			.PyThreadState_current_frame = 72,
			/* gdb: offsetof(PyInterpreterState, eval_frame) */
			.PyInterpreterState_eval_frame = 8520,
		},
		.PyInterpreterState_hook = 8520, /* gdb: offsetof(PyInterpreterState, eval_frame) */
		.PyObject_ob_type = 8, /* gdb: offsetof(PyObject, ob_type) */
		.PyTypeObject_tp_name = 24, /* gdb: offsetof(PyTypeObject, tp_name) */
		/* gdb: offsetof(_PyRuntimeState, interpreters.head) */
		.PyRuntime_interpreters_head = 808,
		/* gdb: offsetof(_PyRuntimeState, _main_interpreter) */
		.PyRuntime_main_interpreter = 90752,
		.PyInterpreterState_next = 7272, /* gdb: offsetof(PyInterpreterState, next) */
		/* gdb: offsetof(PyInterpreterState, threads.head) */
		.PyInterpreterState_threads_head = 7344,
		.PyThreadState_next = 8, /* gdb: offsetof(PyThreadState, next) */
		/* gdb: offsetof(PyThreadState, native_thread_id) */
		.PyThreadState_native_thread_id = 160,
		.PyThreadState_thread_id = 152, /* gdb: offsetof(PyThreadState, thread_id) */
		.PyThreadState_frame = 0, /* no tstate->frame since 3.11 */
		.PyInterpreterFrame_size = 88, /* gdb: sizeof(_PyInterpreterFrame) */
		.PyCodeObject_co_qualname = 128, /* gdb: offsetof(PyCodeObject, co_qualname) */
		/* 3.14+ check for a hook before a class call's __init__ inline (_CHECK_PEP_523) */
		.PyHeapTypeObject_spec_cache_init = 0,
		.PyFunctionObject_func_code = 0, /* only needed for the 3.13 class-call hole */
		.PyCodeObject_co_version = 92, /* gdb: offsetof(PyCodeObject, co_version) */
		/* no C recursion budget since 3.14 (the C stack is checked by its address) */
		.PyThreadState_py_recursion_remaining = 0,
		/* no C recursion budget since 3.14 (the C stack is checked by its address) */
		.PyThreadState_py_recursion_limit = 0,
		/* no C recursion budget since 3.14 (the C stack is checked by its address) */
		.PyThreadState_c_recursion_remaining = 0,
		/* no C recursion budget since 3.14 (the C stack is checked by its address) */
		.eval_c_units = 0,
		.PyGenObject_gi_frame_state = 67, /* gdb: offsetof(PyGenObject, gi_frame_state) */
		.PyGenObject_gi_iframe = 72, /* gdb: offsetof(PyGenObject, gi_iframe) */
		.PyGenObject_finished_state = 1, /* gdb: print (int)FRAME_COMPLETED */
		/* gdb: PyDictValues.embedded: values inline after tp_basicsize */
		.dict_kind = DICT_INLINE_VALUES,
		.PyFrame_localsplus = 80, /* gdb: offsetof(_PyInterpreterFrame, localsplus) */
		.PyTypeObject_tp_basicsize = 32, /* gdb: offsetof(PyTypeObject, tp_basicsize) */
		.PyTypeObject_tp_dictoffset = 288, /* gdb: offsetof(PyTypeObject, tp_dictoffset) */
		.PyTypeObject_tp_flags = 168, /* gdb: offsetof(PyTypeObject, tp_flags) */
		/* gdb: offsetof(PyHeapTypeObject, ht_cached_keys) */
		.PyHeapTypeObject_ht_cached_keys = 880,
		.PyDictObject_ma_keys = 32, /* gdb: offsetof(PyDictObject, ma_keys) */
		.PyDictObject_ma_values = 40, /* gdb: offsetof(PyDictObject, ma_values) */
		.PyDictKeysObject_dk_size = 0, /* dk_log2_index_bytes since 3.11 */
		/* gdb: offsetof(PyDictKeysObject, dk_log2_index_bytes) */
		.PyDictKeysObject_dk_log2_index_bytes = 9,
		.PyDictKeysObject_dk_kind = 10, /* gdb: offsetof(PyDictKeysObject, dk_kind) */
		/* gdb: offsetof(PyDictKeysObject, dk_nentries) */
		.PyDictKeysObject_dk_nentries = 24,
		.PyDictKeysObject_dk_indices = 32, /* gdb: offsetof(PyDictKeysObject, dk_indices) */
		.PyDictKeyEntry_size = 24, /* gdb: sizeof(PyDictKeyEntry) */
		.PyDictKeyEntry_me_key = 8, /* gdb: offsetof(PyDictKeyEntry, me_key) */
		.PyDictKeyEntry_me_value = 16, /* gdb: offsetof(PyDictKeyEntry, me_value) */
		.PyDictUnicodeEntry_size = 16, /* gdb: sizeof(PyDictUnicodeEntry) */
		.PyDictUnicodeEntry_me_key = 0, /* gdb: offsetof(PyDictUnicodeEntry, me_key) */
		.PyDictUnicodeEntry_me_value = 8, /* gdb: offsetof(PyDictUnicodeEntry, me_value) */
		.PyDictValues_values = 8, /* gdb: offsetof(PyDictValues, values) */
		/* 3.12+: C calls come from a sys.monitoring tool */
		.PyThreadState_c_profilefunc = 0,
		/* 3.12+: C calls come from a sys.monitoring tool */
		.PyThreadState_c_profileobj = 0,
		.PyThreadState_use_tracing = 0, /* in the thread's cframe from 3.10 */
		/* use_tracing is the thread state's before 3.10, gone in 3.12 */
		.PyThreadState_trace_cframe = 0,
		.PyRuntime_tstate_current = 0, /* 3.12+: a thread-local */
		/* a frame object is the frame before 3.11; unused from 3.12 */
		.PyFrameObject_f_frame = 0,
		/* gdb: offsetof(PyInterpreterState, monitors) */
		.PyInterpreterState_monitors = 223240,
		/* gdb: offsetof(PyInterpreterState, monitoring_callables) */
		.PyInterpreterState_monitoring_callables = 223280,
		/* gdb: offsetof(PyInterpreterState, monitoring_tool_names) */
		.PyInterpreterState_monitoring_tool_names = 224496,
		/* gdb: offsetof(PyInterpreterState, ceval.gil) */
		.PyInterpreterState_ceval_gil = 16,
		.gil_last_holder = 8, /* gdb: offsetof(_gil_runtime_state, last_holder) */
	},
	{
		/* 3.15: DWARF of Debian 3.15.2's -dev headers */
		/* machine code and data of /usr/bin/python3.15 of the sid root (3.15.2) agree */
		/* machine code and data of /usr/lib/x86_64-linux-gnu/libpython3.15.so.1.0 of the
		 * sid root (3.15.2) agree */
		.major = 3, .minor = 15, .patch_min = 0, .patch_max = 255,
		.bpf = {
			/* gdb: whatis _PyEval_EvalFrameDefault: frame is arg1 */
			.eval_frame_arg = 1,
			.interp_frame = 1, /* gdb: the frame arg is struct _PyInterpreterFrame * */
			/* gdb: PyThreadState has current_frame */
			.caller_mode = CALLER_FROM_TSTATE,
			.has_tstate_arg = 1, /* gdb: arg0 is PyThreadState * */
			.frame_code = 0, /* gdb: offsetof(_PyInterpreterFrame, f_executable) */
			.frame_back = 8, /* gdb: offsetof(_PyInterpreterFrame, previous) */
			.frame_owner = 74, /* gdb: offsetof(_PyInterpreterFrame, owner) */
			/* gdb: f_executable is a _PyStackRef; Py_TAG_BITS of the -dev headers */
			.stackref_tags = 3,
			.PyCodeObject_co_flags = 48, /* gdb: offsetof(PyCodeObject, co_flags) */
			/* gdb: offsetof(PyCodeObject, co_firstlineno) */
			.PyCodeObject_co_firstlineno = 68,
			/* gdb: offsetof(PyCodeObject, co_filename) */
			.PyCodeObject_co_filename = 112,
			.PyCodeObject_co_name = 120, /* gdb: offsetof(PyCodeObject, co_name) */
			.PyCodeObject_co_nlocalsplus = 0, /* used on 3.11 only (next_frame) */
			.PyCodeObject_co_stacksize = 0, /* used on 3.11 only (next_frame) */
			.PyUnicode_length = 16, /* gdb: offsetof(PyASCIIObject, length) */
			.PyUnicode_state = 32, /* gdb: offsetof(PyASCIIObject, state) */
			.PyASCIIObject_size = 40, /* gdb: sizeof(PyASCIIObject) */
			.PyCompactUnicodeObject_size = 56, /* gdb: sizeof(PyCompactUnicodeObject) */
			.PyThreadState_interp = 16, /* gdb: offsetof(PyThreadState, interp) */
			/* frames hang off cframe in 3.11 and 3.12 only */
			.PyThreadState_cframe = 0,
			/* _PyCFrame holds the frame in 3.11 and 3.12 only */
			.PyCFrame_current_frame = 0,
			/* gdb: offsetof(PyThreadState, current_frame) */
			.PyThreadState_current_frame = 72,
			/* gdb: offsetof(PyInterpreterState, eval_frame) */
			.PyInterpreterState_eval_frame = 8472,
		},
		.PyInterpreterState_hook = 8472, /* gdb: offsetof(PyInterpreterState, eval_frame) */
		.PyObject_ob_type = 8, /* gdb: offsetof(PyObject, ob_type) */
		.PyTypeObject_tp_name = 24, /* gdb: offsetof(PyTypeObject, tp_name) */
		/* gdb: offsetof(_PyRuntimeState, interpreters.head) */
		.PyRuntime_interpreters_head = 936,
		/* gdb: offsetof(_PyRuntimeState, _main_interpreter) */
		.PyRuntime_main_interpreter = 120328,
		.PyInterpreterState_next = 7264, /* gdb: offsetof(PyInterpreterState, next) */
		/* gdb: offsetof(PyInterpreterState, threads.head) */
		.PyInterpreterState_threads_head = 7336,
		.PyThreadState_next = 8, /* gdb: offsetof(PyThreadState, next) */
		/* gdb: offsetof(PyThreadState, native_thread_id) */
		.PyThreadState_native_thread_id = 184,
		.PyThreadState_thread_id = 176, /* gdb: offsetof(PyThreadState, thread_id) */
		.PyThreadState_frame = 0, /* no tstate->frame since 3.11 */
		.PyInterpreterFrame_size = 88, /* gdb: sizeof(_PyInterpreterFrame) */
		.PyCodeObject_co_qualname = 128, /* gdb: offsetof(PyCodeObject, co_qualname) */
		/* 3.14+ check for a hook before a class call's __init__ inline (_CHECK_PEP_523) */
		.PyHeapTypeObject_spec_cache_init = 0,
		.PyFunctionObject_func_code = 0, /* only needed for the 3.13 class-call hole */
		.PyCodeObject_co_version = 92, /* gdb: offsetof(PyCodeObject, co_version) */
		/* no C recursion budget since 3.14 (the C stack is checked by its address) */
		.PyThreadState_py_recursion_remaining = 0,
		/* no C recursion budget since 3.14 (the C stack is checked by its address) */
		.PyThreadState_py_recursion_limit = 0,
		/* no C recursion budget since 3.14 (the C stack is checked by its address) */
		.PyThreadState_c_recursion_remaining = 0,
		/* no C recursion budget since 3.14 (the C stack is checked by its address) */
		.eval_c_units = 0,
		.PyGenObject_gi_frame_state = 67, /* gdb: offsetof(PyGenObject, gi_frame_state) */
		.PyGenObject_gi_iframe = 72, /* gdb: offsetof(PyGenObject, gi_iframe) */
		/* gdb: print (int)FRAME_CLEARED (no FRAME_COMPLETED) */
		.PyGenObject_finished_state = 5,
		/* gdb: PyDictValues.embedded: values inline after tp_basicsize */
		.dict_kind = DICT_INLINE_VALUES,
		.PyFrame_localsplus = 80, /* gdb: offsetof(_PyInterpreterFrame, localsplus) */
		.PyTypeObject_tp_basicsize = 32, /* gdb: offsetof(PyTypeObject, tp_basicsize) */
		.PyTypeObject_tp_dictoffset = 288, /* gdb: offsetof(PyTypeObject, tp_dictoffset) */
		.PyTypeObject_tp_flags = 168, /* gdb: offsetof(PyTypeObject, tp_flags) */
		/* gdb: offsetof(PyHeapTypeObject, ht_cached_keys) */
		.PyHeapTypeObject_ht_cached_keys = 888,
		.PyDictObject_ma_keys = 32, /* gdb: offsetof(PyDictObject, ma_keys) */
		.PyDictObject_ma_values = 40, /* gdb: offsetof(PyDictObject, ma_values) */
		.PyDictKeysObject_dk_size = 0, /* dk_log2_index_bytes since 3.11 */
		/* gdb: offsetof(PyDictKeysObject, dk_log2_index_bytes) */
		.PyDictKeysObject_dk_log2_index_bytes = 9,
		.PyDictKeysObject_dk_kind = 10, /* gdb: offsetof(PyDictKeysObject, dk_kind) */
		/* gdb: offsetof(PyDictKeysObject, dk_nentries) */
		.PyDictKeysObject_dk_nentries = 24,
		.PyDictKeysObject_dk_indices = 32, /* gdb: offsetof(PyDictKeysObject, dk_indices) */
		.PyDictKeyEntry_size = 24, /* gdb: sizeof(PyDictKeyEntry) */
		.PyDictKeyEntry_me_key = 8, /* gdb: offsetof(PyDictKeyEntry, me_key) */
		.PyDictKeyEntry_me_value = 16, /* gdb: offsetof(PyDictKeyEntry, me_value) */
		.PyDictUnicodeEntry_size = 16, /* gdb: sizeof(PyDictUnicodeEntry) */
		.PyDictUnicodeEntry_me_key = 0, /* gdb: offsetof(PyDictUnicodeEntry, me_key) */
		.PyDictUnicodeEntry_me_value = 8, /* gdb: offsetof(PyDictUnicodeEntry, me_value) */
		.PyDictValues_values = 8, /* gdb: offsetof(PyDictValues, values) */
		/* 3.12+: C calls come from a sys.monitoring tool */
		.PyThreadState_c_profilefunc = 0,
		/* 3.12+: C calls come from a sys.monitoring tool */
		.PyThreadState_c_profileobj = 0,
		.PyThreadState_use_tracing = 0, /* in the thread's cframe from 3.10 */
		/* use_tracing is the thread state's before 3.10, gone in 3.12 */
		.PyThreadState_trace_cframe = 0,
		.PyRuntime_tstate_current = 0, /* 3.12+: a thread-local */
		/* a frame object is the frame before 3.11; unused from 3.12 */
		.PyFrameObject_f_frame = 0,
		/* gdb: offsetof(PyInterpreterState, monitors) */
		.PyInterpreterState_monitors = 223512,
		/* gdb: offsetof(PyInterpreterState, monitoring_callables) */
		.PyInterpreterState_monitoring_callables = 223552,
		/* gdb: offsetof(PyInterpreterState, monitoring_tool_names) */
		.PyInterpreterState_monitoring_tool_names = 224768,
		/* gdb: offsetof(PyInterpreterState, ceval.gil) */
		.PyInterpreterState_ceval_gil = 16,
		.gil_last_holder = 8, /* gdb: offsetof(_gil_runtime_state, last_holder) */
	},
};

const char *py_layouts__supported(void)
{
	return "3.8, 3.9, 3.10, 3.11, 3.12, 3.13, 3.14, 3.15";
}

size_t py_layouts__count(void)
{
	return sizeof(table) / sizeof(table[0]);
}

const struct py_offsets_entry *py_layouts__at(size_t i)
{
	return i < py_layouts__count() ? &table[i] : NULL;
}

const struct py_offsets_entry *py_layouts__find(unsigned major, unsigned minor, unsigned patch)
{
	size_t i;

	for (i = 0; i < py_layouts__count(); i++) {
		const struct py_offsets_entry *e = &table[i];

		if (e->major == major && e->minor == minor && e->patch_min <= patch &&
		    patch <= e->patch_max)
			return e;
	}
	errno = ENOTSUP;
	return NULL;
}

/*
 * _Py_DebugOffsets (3.13+): every field is a uint64_t. Fields were inserted in the middle in 3.14
 * and 3.15, so each minor version gets its own list of positions: those of the DWARF the table
 * comes from (gdb: ptype /o struct _Py_DebugOffsets; pyenv's 3.13.0, the -dev headers of
 * Debian's 3.14 and 3.15), checked by gen-py-offsets.py --check. Each field listed is one the
 * table holds too: at attach the target's own values must equal the table's, so a build whose
 * layout moved is refused (py_target.c) rather than read wrong, and a patch release whose layout
 * did not move is read with its minor version's entry.
 */
#define DEBUG_COOKIE "xdebugpy"
#define DEBUG_VERSION 8	      /* PY_VERSION_HEX */
#define DEBUG_FREE_THREADED 16 /* 1 in --disable-gil builds, whose layout the table lacks */

struct debug_field {
	const char *name;	/* as in CPython's struct, for the message */
	unsigned pos;		/* byte position in _Py_DebugOffsets */
	size_t entry_off;	/* offsetof(struct py_offsets_entry, ...) of the same fact */
};

/* Both kinds of entry field are read as unsigned below. */
_Static_assert(sizeof(unsigned) == sizeof(__u32), "entry fields must be 32-bit");

#define E(f) offsetof(struct py_offsets_entry, f)
#define B(f) offsetof(struct py_offsets_entry, bpf.f)

static const struct debug_field debug_fields_313[] = {
	{ "runtime_state.interpreters_head", 40, E(PyRuntime_interpreters_head) },
	{ "interpreter_state.next", 64, E(PyInterpreterState_next) },
	{ "interpreter_state.threads_head", 72, E(PyInterpreterState_threads_head) },
	{ "thread_state.next", 168, E(PyThreadState_next) },
	{ "thread_state.interp", 176, B(PyThreadState_interp) },
	{ "thread_state.current_frame", 184, B(PyThreadState_current_frame) },
	{ "thread_state.thread_id", 192, E(PyThreadState_thread_id) },
	{ "thread_state.native_thread_id", 200, E(PyThreadState_native_thread_id) },
	{ "interpreter_frame.size", 224, E(PyInterpreterFrame_size) },
	{ "interpreter_frame.previous", 232, B(frame_back) },
	{ "interpreter_frame.executable", 240, B(frame_code) },
	{ "interpreter_frame.localsplus", 256, E(PyFrame_localsplus) },
	{ "interpreter_frame.owner", 264, B(frame_owner) },
	{ "code_object.filename", 280, B(PyCodeObject_co_filename) },
	{ "code_object.name", 288, B(PyCodeObject_co_name) },
	{ "code_object.qualname", 296, E(PyCodeObject_co_qualname) },
	{ "code_object.firstlineno", 312, B(PyCodeObject_co_firstlineno) },
	{ "pyobject.ob_type", 360, E(PyObject_ob_type) },
	{ "type_object.tp_name", 376, E(PyTypeObject_tp_name) },
	{ "type_object.tp_flags", 392, E(PyTypeObject_tp_flags) },
	{ "dict_object.ma_keys", 456, E(PyDictObject_ma_keys) },
	{ "dict_object.ma_values", 464, E(PyDictObject_ma_values) },
	{ "unicode_object.state", 544, B(PyUnicode_state) },
	{ "unicode_object.length", 552, B(PyUnicode_length) },
	{ "unicode_object.asciiobject_size", 560, B(PyASCIIObject_size) },
};

/* 3.14 inserted fields in the middle (threads_main, stackpointer, the set object ...) and
 * added the generator object's */
static const struct debug_field debug_fields_314[] = {
	{ "runtime_state.interpreters_head", 40, E(PyRuntime_interpreters_head) },
	{ "interpreter_state.next", 64, E(PyInterpreterState_next) },
	{ "interpreter_state.threads_head", 72, E(PyInterpreterState_threads_head) },
	{ "thread_state.next", 192, E(PyThreadState_next) },
	{ "thread_state.interp", 200, B(PyThreadState_interp) },
	{ "thread_state.current_frame", 208, B(PyThreadState_current_frame) },
	{ "thread_state.thread_id", 216, E(PyThreadState_thread_id) },
	{ "thread_state.native_thread_id", 224, E(PyThreadState_native_thread_id) },
	{ "interpreter_frame.size", 248, E(PyInterpreterFrame_size) },
	{ "interpreter_frame.previous", 256, B(frame_back) },
	{ "interpreter_frame.executable", 264, B(frame_code) },
	{ "interpreter_frame.localsplus", 280, E(PyFrame_localsplus) },
	{ "interpreter_frame.owner", 288, B(frame_owner) },
	{ "code_object.filename", 320, B(PyCodeObject_co_filename) },
	{ "code_object.name", 328, B(PyCodeObject_co_name) },
	{ "code_object.qualname", 336, E(PyCodeObject_co_qualname) },
	{ "code_object.firstlineno", 352, B(PyCodeObject_co_firstlineno) },
	{ "pyobject.ob_type", 408, E(PyObject_ob_type) },
	{ "type_object.tp_name", 424, E(PyTypeObject_tp_name) },
	{ "type_object.tp_flags", 440, E(PyTypeObject_tp_flags) },
	{ "dict_object.ma_keys", 536, E(PyDictObject_ma_keys) },
	{ "dict_object.ma_values", 544, E(PyDictObject_ma_values) },
	{ "unicode_object.state", 624, B(PyUnicode_state) },
	{ "unicode_object.length", 632, B(PyUnicode_length) },
	{ "unicode_object.asciiobject_size", 640, B(PyASCIIObject_size) },
	{ "gen_object.gi_iframe", 680, E(PyGenObject_gi_iframe) },
	{ "gen_object.gi_frame_state", 688, E(PyGenObject_gi_frame_state) },
};

/* 3.15 inserted more (the thread state's base and profiled frames, the exception state, a
 * heap type's group, the sizes of a type and of a non-ASCII str) */
static const struct debug_field debug_fields_315[] = {
	{ "runtime_state.interpreters_head", 40, E(PyRuntime_interpreters_head) },
	{ "interpreter_state.next", 64, E(PyInterpreterState_next) },
	{ "interpreter_state.threads_head", 72, E(PyInterpreterState_threads_head) },
	{ "thread_state.next", 192, E(PyThreadState_next) },
	{ "thread_state.interp", 200, B(PyThreadState_interp) },
	{ "thread_state.current_frame", 208, B(PyThreadState_current_frame) },
	{ "thread_state.thread_id", 240, E(PyThreadState_thread_id) },
	{ "thread_state.native_thread_id", 248, E(PyThreadState_native_thread_id) },
	{ "interpreter_frame.size", 312, E(PyInterpreterFrame_size) },
	{ "interpreter_frame.previous", 320, B(frame_back) },
	{ "interpreter_frame.executable", 328, B(frame_code) },
	{ "interpreter_frame.localsplus", 344, E(PyFrame_localsplus) },
	{ "interpreter_frame.owner", 352, B(frame_owner) },
	{ "code_object.filename", 384, B(PyCodeObject_co_filename) },
	{ "code_object.name", 392, B(PyCodeObject_co_name) },
	{ "code_object.qualname", 400, E(PyCodeObject_co_qualname) },
	{ "code_object.firstlineno", 416, B(PyCodeObject_co_firstlineno) },
	{ "pyobject.ob_type", 472, E(PyObject_ob_type) },
	{ "type_object.tp_name", 488, E(PyTypeObject_tp_name) },
	{ "type_object.tp_flags", 504, E(PyTypeObject_tp_flags) },
	{ "type_object.tp_basicsize", 512, E(PyTypeObject_tp_basicsize) },
	{ "type_object.tp_dictoffset", 520, E(PyTypeObject_tp_dictoffset) },
	{ "heap_type_object.ht_cached_keys", 536, E(PyHeapTypeObject_ht_cached_keys) },
	{ "dict_object.ma_keys", 632, E(PyDictObject_ma_keys) },
	{ "dict_object.ma_values", 640, E(PyDictObject_ma_values) },
	{ "unicode_object.state", 720, B(PyUnicode_state) },
	{ "unicode_object.length", 728, B(PyUnicode_length) },
	{ "unicode_object.asciiobject_size", 736, B(PyASCIIObject_size) },
	{ "unicode_object.compactunicodeobject_size", 744, B(PyCompactUnicodeObject_size) },
	{ "gen_object.gi_iframe", 808, E(PyGenObject_gi_iframe) },
	{ "gen_object.gi_frame_state", 816, E(PyGenObject_gi_frame_state) },
};

#undef E
#undef B

static const struct debug_layout {
	unsigned major, minor;
	size_t size;		/* sizeof(_Py_DebugOffsets) */
	const struct debug_field *fields;
	size_t nfields;
} debug_layouts[] = {
	{ 3, 13, 584, debug_fields_313, sizeof(debug_fields_313) / sizeof(debug_fields_313[0]) },
	{ 3, 14, 760, debug_fields_314, sizeof(debug_fields_314) / sizeof(debug_fields_314[0]) },
	{ 3, 15, 888, debug_fields_315, sizeof(debug_fields_315) / sizeof(debug_fields_315[0]) },
};

static uint64_t get_u64(const void *buf, size_t pos)
{
	uint64_t v;

	/* The struct comes from a process or file of this machine: native byte order. */
	memcpy(&v, (const char *)buf + pos, sizeof(v));
	return v;
}

/* The head of _Py_DebugOffsets is the same in 3.13-3.15: runtime_state {size, finalizing,
 * interpreters_head}, then interpreter_state's size. */
#define DEBUG_RUNTIME_SIZE 24
#define DEBUG_INTERP_HEAD 40
#define DEBUG_INTERP_SIZE 48

int py_layouts__main_interpreter(const void *buf, size_t len, uint64_t *off)
{
	uint64_t runtime, interp, head;

	if (len < DEBUG_INTERP_SIZE + 8 || memcmp(buf, DEBUG_COOKIE, 8))
		return -EINVAL;
	runtime = get_u64(buf, DEBUG_RUNTIME_SIZE);
	interp = get_u64(buf, DEBUG_INTERP_SIZE);
	head = get_u64(buf, DEBUG_INTERP_HEAD);
	/* after interpreters.head and .main at least, 8-aligned, inside the runtime state */
	if (interp >= runtime || runtime - interp < head + 16 || (runtime - interp) % 8)
		return -EINVAL;
	*off = runtime - interp;
	return 0;
}

bool py_layouts__free_threaded(const void *buf, size_t len)
{
	return len >= DEBUG_FREE_THREADED + 8 && !memcmp(buf, DEBUG_COOKIE, 8) &&
	       get_u64(buf, DEBUG_FREE_THREADED);
}

int py_layouts__check_debug_offsets(const struct py_offsets_entry *e, const void *buf, size_t len,
				    char *why, size_t why_len)
{
	const struct debug_layout *l = NULL;
	unsigned major, minor;
	uint64_t version;
	size_t i;

	if (len < 8 || memcmp(buf, DEBUG_COOKIE, 8)) {
		snprintf(why, why_len, "no \"%s\" cookie", DEBUG_COOKIE);
		return -ENODATA;
	}
	if (len < DEBUG_FREE_THREADED + 8) {
		snprintf(why, why_len, "_Py_DebugOffsets cut short: %zu bytes", len);
		return -ENODATA;
	}
	version = get_u64(buf, DEBUG_VERSION);
	major = (version >> 24) & 0xff;
	minor = (version >> 16) & 0xff;
	for (i = 0; i < sizeof(debug_layouts) / sizeof(debug_layouts[0]); i++)
		if (debug_layouts[i].major == major && debug_layouts[i].minor == minor)
			l = &debug_layouts[i];
	if (!l) {
		snprintf(why, why_len, "no known _Py_DebugOffsets layout for %u.%u", major, minor);
		return -ENOTSUP;
	}
	if (len < l->size) {
		snprintf(why, why_len, "_Py_DebugOffsets cut short: %zu of %zu bytes", len,
			 l->size);
		return -ENODATA;
	}
	if (get_u64(buf, DEBUG_FREE_THREADED)) {
		snprintf(why, why_len, "free-threaded build");
		return -ENOTSUP;
	}
	if (e->major != major || e->minor != minor) {
		snprintf(why, why_len, "_Py_DebugOffsets are for %u.%u, the table entry for %u.%u",
			 major, minor, e->major, e->minor);
		return -EINVAL;
	}
	for (i = 0; i < l->nfields; i++) {
		const struct debug_field *f = &l->fields[i];
		uint64_t want = get_u64(buf, f->pos);
		unsigned have;

		memcpy(&have, (const char *)e + f->entry_off, sizeof(have));
		if (want != have) {
			snprintf(why, why_len, "%s is %llu, the table says %u", f->name,
				 (unsigned long long)want, have);
			return -EINVAL;
		}
	}
	return 0;
}

/* Each field the BPF programs read through a window, with its size there (bpf/ FIELD uses). */
static const struct window_field {
	const char *name;
	size_t entry_off; /* offsetof(struct py_offsets, ...) */
	unsigned size;
	unsigned window;
	const char *window_name;
} window_fields[] = {
#define W(f, size, window) { #f, offsetof(struct py_offsets, f), size, window, #window }
	W(frame_code, 8, FRAME_WINDOW),
	W(frame_back, 8, FRAME_WINDOW),
	W(frame_owner, 1, FRAME_WINDOW),
	W(PyCodeObject_co_flags, 4, CODE_WINDOW),
	W(PyCodeObject_co_firstlineno, 4, CODE_WINDOW),
	W(PyCodeObject_co_filename, 8, CODE_WINDOW),
	W(PyCodeObject_co_name, 8, CODE_WINDOW),
	W(PyCodeObject_co_nlocalsplus, 4, CODE_WINDOW),
	W(PyCodeObject_co_stacksize, 4, CODE_WINDOW),
	W(PyThreadState_interp, 8, TSTATE_WINDOW),
	W(PyThreadState_cframe, 8, TSTATE_WINDOW),
	W(PyThreadState_current_frame, 8, TSTATE_WINDOW),
	W(PyUnicode_length, 8, STR_WINDOW),
	W(PyUnicode_state, 4, STR_WINDOW),
#undef W
};

int py_layouts__check_windows(const struct py_offsets *o, char *why, size_t why_len)
{
	size_t i;

	for (i = 0; i < sizeof(window_fields) / sizeof(window_fields[0]); i++) {
		const struct window_field *f = &window_fields[i];
		unsigned at;

		memcpy(&at, (const char *)o + f->entry_off, sizeof(at));
		if (at + f->size > f->window) {
			snprintf(why, why_len, "%s at %u (%u bytes) ends past %s (%u bytes)",
				 f->name, at, f->size, f->window_name, f->window);
			return -ERANGE;
		}
	}
	return 0;
}
