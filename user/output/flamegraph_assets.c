// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The flame graph's stylesheet and script, linked in from their own files as they are, each
 * followed by a NUL. The paths are the source tree's: make runs the compiler from its root, and
 * the Makefile makes this object depend on both files (the compiler's own dependency list does
 * not see an .incbin).
 */
#include "output/flamegraph_assets.h"

#define EMBED(name, path)                                                                        \
	__asm__(".pushsection .rodata\n"                                                         \
		".global " #name "\n"                                                            \
		".type " #name ", @object\n" #name ":\n"                                          \
		".incbin \"" path "\"\n"                                                         \
		".byte 0\n"                                                                      \
		".size " #name ", . - " #name "\n"                                                \
		".popsection\n")

EMBED(flamegraph_css, "user/output/assets/flamegraph.css");
EMBED(flamegraph_js, "user/output/assets/flamegraph.js");
