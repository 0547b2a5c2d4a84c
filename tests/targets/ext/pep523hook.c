// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A PEP 523 eval_frame hook that behaves as PyTorch's Dynamo does with a hook it finds in
 * place (cpython-internals.md 6.6a): enable() saves the slot's value and installs its own
 * through the setter; every frame goes to the saved function, or to _PyEval_EvalFrameDefault
 * directly when there was none; disable() puts the saved value back through the setter.
 * Built by the tests against each interpreter's headers (3.9+).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static _PyFrameEvalFunction previous;
static int enabled;

#if PY_VERSION_HEX >= 0x030b0000
static PyObject *shim(PyThreadState *ts, struct _PyInterpreterFrame *f, int exc)
#else
static PyObject *shim(PyThreadState *ts, PyFrameObject *f, int exc)
#endif
{
	return previous ? previous(ts, f, exc) : _PyEval_EvalFrameDefault(ts, f, exc);
}

static PyObject *enable(PyObject *self, PyObject *args)
{
	PyInterpreterState *interp = PyThreadState_Get()->interp;
	_PyFrameEvalFunction cur = _PyInterpreterState_GetEvalFrameFunc(interp);

	if (!enabled) {
		/* the default evaluator counts as none, as Dynamo's check does */
		previous = cur == _PyEval_EvalFrameDefault ? NULL : cur;
		_PyInterpreterState_SetEvalFrameFunc(interp, shim);
		enabled = 1;
	}
	return PyBool_FromLong(previous != NULL);
}

static PyObject *disable(PyObject *self, PyObject *args)
{
	PyInterpreterState *interp = PyThreadState_Get()->interp;

	if (enabled) {
		_PyInterpreterState_SetEvalFrameFunc(interp, previous ? previous
								 : _PyEval_EvalFrameDefault);
		previous = NULL;
		enabled = 0;
	}
	Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
	{ "enable", enable, METH_NOARGS, "install the hook; True if it chains to one found" },
	{ "disable", disable, METH_NOARGS, "put back what was there" },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module = { PyModuleDef_HEAD_INIT, "pep523hook", NULL, -1, methods };

PyMODINIT_FUNC PyInit_pep523hook(void)
{
	return PyModule_Create(&module);
}
