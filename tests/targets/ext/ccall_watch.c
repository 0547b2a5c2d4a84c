// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A watcher of C calls that does nothing else, as pyuprof's page watches them
 * (include/cfuncs.h): enable() sets a profile function of C that returns at once
 * (PyEval_SetProfile, 3.8-3.11), or on 3.12+ takes sys.monitoring's tool 5 for CALL,
 * C_RETURN and C_RAISE with callbacks whose vectorcall is C that returns None (no recursion
 * counted in the call, no Python frame). What CPython itself changes when someone watches
 * C calls (the specialised calls it gives up) shows in a program run under it:
 * tests/targets/recursion_limits.py --ccalls. Built by the tests against each interpreter's
 * headers.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#if PY_VERSION_HEX < 0x030c0000
static int noop_profile(PyObject *obj, struct _frame *f, int what, PyObject *arg)
{
	return 0;
}
#else
#define TOOL 5

static PyObject *noop(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	Py_RETURN_NONE;
}

static PyObject *noop_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf,
				 PyObject *kwnames)
{
	Py_RETURN_NONE;
}

static PyMethodDef noop_def = { "ccall_watch_noop", (PyCFunction)(void (*)(void))noop,
				METH_FASTCALL, NULL };

/* sys.monitoring.NAME(*args), its result dropped; -1 on an error */
static int monitoring(const char *name, const char *fmt, ...)
{
	PyObject *mon, *fn, *args, *res;
	va_list va;

	mon = PyImport_ImportModule("sys");
	if (!mon)
		return -1;
	fn = PyObject_GetAttrString(mon, "monitoring");
	Py_DECREF(mon);
	if (!fn)
		return -1;
	mon = fn;
	fn = PyObject_GetAttrString(mon, name);
	Py_DECREF(mon);
	if (!fn)
		return -1;
	va_start(va, fmt);
	args = Py_VaBuildValue(fmt, va);
	va_end(va);
	if (!args) {
		Py_DECREF(fn);
		return -1;
	}
	res = PyObject_CallObject(fn, args);
	Py_DECREF(fn);
	Py_DECREF(args);
	if (!res)
		return -1;
	Py_DECREF(res);
	return 0;
}
#endif

static PyObject *enable(PyObject *self, PyObject *args)
{
#if PY_VERSION_HEX < 0x030c0000
	PyEval_SetProfile(noop_profile, NULL);
#else
	/* sys.monitoring.events: CALL 1 << 4, C_RETURN 1 << 15, C_RAISE 1 << 16 on 3.12-3.13;
	 * read by name, since 3.14 renumbers them */
	static const char *events[] = { "CALL", "C_RETURN", "C_RAISE" };
	PyObject *sys, *mon, *ev, *cb;
	long all = 0;

	sys = PyImport_ImportModule("sys");
	if (!sys)
		return NULL;
	mon = PyObject_GetAttrString(sys, "monitoring");
	Py_DECREF(sys);
	if (!mon)
		return NULL;
	ev = PyObject_GetAttrString(mon, "events");
	Py_DECREF(mon);
	if (!ev)
		return NULL;
	cb = PyCFunction_New(&noop_def, NULL);
	if (!cb) {
		Py_DECREF(ev);
		return NULL;
	}
	/* as the page's callbacks: no recursion counted, nothing but the return */
	((PyCFunctionObject *)cb)->vectorcall = noop_vectorcall;
	if (monitoring("use_tool_id", "(is)", TOOL, "ccall_watch") < 0)
		goto fail;
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		PyObject *e = PyObject_GetAttrString(ev, events[i]);
		long n = e ? PyLong_AsLong(e) : -1;

		Py_XDECREF(e);
		if (n < 0)
			goto fail;
		if (monitoring("register_callback", "(ilO)", TOOL, n, cb) < 0)
			goto fail;
		all |= n;
	}
	if (monitoring("set_events", "(il)", TOOL, all) < 0)
		goto fail;
	Py_DECREF(ev);
	/* the callbacks' owner keeps cb alive */
	Py_DECREF(cb);
	Py_RETURN_NONE;
fail:
	Py_DECREF(ev);
	Py_DECREF(cb);
	return NULL;
#endif
	Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
	{ "enable", enable, METH_NOARGS, "watch every C call of this thread (3.12+: all)" },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module = { PyModuleDef_HEAD_INIT, "ccall_watch", NULL, -1, methods };

PyMODINIT_FUNC PyInit_ccall_watch(void)
{
	return PyModule_Create(&module);
}
