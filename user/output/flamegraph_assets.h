/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The flame graph's stylesheet and script, embedded in every SVG so that it works offline and
 * alone (no external file or URL). They are real files, user/output/assets/flamegraph.{css,js}, the
 * script linted with the browser test's code (ESLint: tests/browser/eslint.config.js, run by
 * tests/flamegraph.bats), linked in as they are (flamegraph_assets.c: .incbin), NUL-terminated.
 *
 * The script reads what out_flamegraph.c wrote: on <svg>, data-pad, data-fw (frame area width,
 * px), data-total (ns) and data-cw (glyph advance, px); per frame a <g> in #frames with
 * data-x/data-w (start and width in ns), data-d (depth), class "r" for the root and thread
 * frames, and a <title> of three lines: name, file:line, times. The build refuses a script
 * holding "]]>" (it sits in a CDATA section) and a stylesheet holding '<' or '&' (it does not).
 */
#ifndef __PYUPROF_FLAMEGRAPH_ASSETS_H
#define __PYUPROF_FLAMEGRAPH_ASSETS_H

/* Inside <style>: frames, the zoomed-out ancestors (.a), search matches (.m), hidden (.h). */
extern const char flamegraph_css[];

/*
 * Inside <script>. Hover: tooltip and details line; click: zoom to that frame (root, "Reset
 * zoom" or Escape: back); Ctrl-F or the search box: matches highlighted and their share of the
 * total shown, recursion counted once.
 */
extern const char flamegraph_js[];

#endif /* __PYUPROF_FLAMEGRAPH_ASSETS_H */
