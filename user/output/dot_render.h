/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * graphviz's dot, run as a child to lay out a DOT graph and render it as SVG, as gprof2dot's
 * users run it. Not linked in: the renderer loads some forty libraries (pango, cairo,
 * fontconfig, harfbuzz, X11's) and shapes text that comes from the target (function and file
 * names), which pyuprof, running as root, should not do in its own process. The child runs as
 * nobody when pyuprof is root, with no way to regain privileges.
 */
#ifndef __PYUPROF_DOT_RENDER_H
#define __PYUPROF_DOT_RENDER_H

#include <stddef.h>
#include "base/outfile.h"

/* 0 when `dot` is in PATH, else -ENOENT, said in one line: checked before anything records. */
int dot_render__check(void);

/*
 * Renders the DOT text (len bytes) as SVG into out. dot's messages are logged (-v; as errors
 * when it fails). Returns 0, -EIO when dot failed, or another -errno (the child could not be
 * run, outfile__write).
 */
int dot_render__svg(const char *dot, size_t len, struct outfile *out);

#endif /* __PYUPROF_DOT_RENDER_H */
