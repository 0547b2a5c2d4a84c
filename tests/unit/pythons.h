/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The interpreters the unit tests run against: pyenv's 3.8-3.13 (every patch release present)
 * and Debian's python3.11. find_pythons() fills pythons[] and n_pythons.
 */
#ifndef __PYUPROF_TEST_PYTHONS_H
#define __PYUPROF_TEST_PYTHONS_H

#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_PYTHONS 32

static char *pythons[MAX_PYTHONS];
static int n_pythons;

static void add_python(const char *path)
{
	if (n_pythons < MAX_PYTHONS && access(path, X_OK) == 0)
		pythons[n_pythons++] = strdup(path);
}

/* $(pyenv root): PYENV_ROOT when set, else ask pyenv, else pyenv's default location. */
static void pyenv_root(char *root, size_t size)
{
	const char *env = getenv("PYENV_ROOT");
	FILE *f;

	root[0] = '\0';
	if (env && *env) {
		snprintf(root, size, "%s", env);
		return;
	}
	f = popen("pyenv root 2>/dev/null", "r");
	if (f) {
		if (!fgets(root, size, f))
			root[0] = '\0';
		root[strcspn(root, "\n")] = '\0';
		pclose(f);
	}
	if (!root[0] && getenv("HOME"))
		snprintf(root, size, "%s/.pyenv", getenv("HOME"));
}

static void __attribute__((unused)) find_pythons(void)
{
	char root[PATH_MAX], pattern[PATH_MAX + 64];
	glob_t g;
	size_t i;
	int minor;

	pyenv_root(root, sizeof(root));
	for (minor = 8; minor <= 13 && root[0]; minor++) {
		snprintf(pattern, sizeof(pattern), "%s/versions/3.%d.*/bin/python3", root, minor);
		if (glob(pattern, 0, NULL, &g) != 0)
			continue;
		for (i = 0; i < g.gl_pathc; i++)
			add_python(g.gl_pathv[i]);
		globfree(&g);
	}
	add_python("/usr/bin/python3.11");
}

#endif /* __PYUPROF_TEST_PYTHONS_H */
