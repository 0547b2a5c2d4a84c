// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Values kept across recordings (base/cache.h): a text file per kind, a line per key. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "base/cache.h"
#include "base/log.h"

#define CACHE_DIR "/var/cache/pyuprof"
#define LINE_MAX_BYTES 4096

/* Whether st, a directory or a file of the cache, is pyuprof's own alone. */
static bool trusted(const struct stat *st)
{
	return st->st_uid == geteuid() && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

/* The cache's directory, made if missing; NULL when there is none to use. */
static const char *cache_dir(void)
{
	static char dir[1024];
	static int state; /* 0 not looked at, 1 usable, -1 not */
	const char *env = getenv("PYUPROF_CACHE_DIR");
	struct stat st;

	if (state)
		return state > 0 ? dir : NULL;
	state = -1;
	if (env && !*env)
		return NULL;
	snprintf(dir, sizeof(dir), "%s", env ? env : CACHE_DIR);
	if (mkdir(dir, 0755) && errno != EEXIST) {
		dlog("no cache of measured figures (%s: %s)", dir, strerror(errno));
		return NULL;
	}
	if (lstat(dir, &st) || !S_ISDIR(st.st_mode) || !trusted(&st)) {
		dlog("no cache of measured figures: %s is not a directory of pyuprof's user alone",
		     dir);
		return NULL;
	}
	state = 1;
	return dir;
}

int cache__file_id(const char *path, char *out, size_t len)
{
	struct stat st;

	if (stat(path, &st))
		return -errno;
	snprintf(out, len, "%llx:%llx:%llx:%lld.%09ld:%lld.%09ld", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino, (unsigned long long)st.st_size,
		 (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec, (long long)st.st_ctim.tv_sec,
		 st.st_ctim.tv_nsec);
	return 0;
}

/* What every key begins with: pyuprof's own build and the kernel running. */
static const char *key_prefix(void)
{
	static char prefix[768];
	char self[160] = "?";
	struct utsname u;

	if (prefix[0])
		return prefix;
	cache__file_id("/proc/self/exe", self, sizeof(self));
	if (uname(&u))
		memset(&u, 0, sizeof(u));
	snprintf(prefix, sizeof(prefix), "pyuprof=%s kernel=%s#%s", self, u.release, u.version);
	return prefix;
}

/* kind's file, opened for reading if it is a trusted regular file: a stream, or NULL. */
static FILE *open_kind(const char *dir, const char *kind)
{
	char path[1280];
	struct stat st;
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, kind);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !trusted(&st) || !(f = fdopen(fd, "r"))) {
		close(fd);
		return NULL;
	}
	return f;
}

/* The key part of line (up to its tab), and its length; 0 for a line that is no entry. */
static size_t key_len(const char *line)
{
	const char *tab = strchr(line, '\t');

	return tab && tab != line ? (size_t)(tab - line) : 0;
}

int cache__get(const char *kind, const char *key, char *value, size_t len)
{
	const char *dir = cache_dir();
	char line[LINE_MAX_BYTES], full[LINE_MAX_BYTES];
	int err = -ENOENT;
	FILE *f;

	if (!dir || !(f = open_kind(dir, kind)))
		return -ENOENT;
	snprintf(full, sizeof(full), "%s %s", key_prefix(), key);
	while (fgets(line, sizeof(line), f)) {
		size_t k = key_len(line), n = strlen(line);

		if (!n || line[n - 1] != '\n' || k != strlen(full) || memcmp(line, full, k))
			continue;
		line[n - 1] = 0;
		snprintf(value, len, "%s", line + k + 1);
		err = 0; /* (the last line of a key is its newest) */
	}
	fclose(f);
	return err;
}

void cache__put(const char *kind, const char *key, const char *value)
{
	const char *dir = cache_dir();
	char *kept[CACHE_LINES] = { 0 }, line[LINE_MAX_BYTES], full[LINE_MAX_BYTES];
	char path[1280], tmp[1300];
	size_t nkept = 0, flen;
	FILE *f, *out;
	bool ok;
	int fd;

	if (!dir || strpbrk(key, "\t\n") || strpbrk(value, "\t\n"))
		return;
	flen = (size_t)snprintf(full, sizeof(full), "%s %s", key_prefix(), key);
	if (flen >= sizeof(full))
		return;
	/* the other keys, the newest CACHE_LINES - 1 of them */
	f = open_kind(dir, kind);
	while (f && fgets(line, sizeof(line), f)) {
		size_t k = key_len(line), n = strlen(line);

		if (!k || !n || line[n - 1] != '\n' || (k == flen && !memcmp(line, full, k)))
			continue;
		if (nkept == CACHE_LINES - 1) {
			free(kept[0]);
			memmove(kept, kept + 1, (CACHE_LINES - 2) * sizeof(*kept));
			nkept--;
		}
		kept[nkept] = strdup(line);
		nkept += kept[nkept] != NULL;
	}
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "%s/%s", dir, kind);
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	fd = mkstemp(tmp);
	out = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (out) {
		for (size_t i = 0; i < nkept; i++)
			fputs(kept[i], out);
		fprintf(out, "%s\t%s\n", full, value);
		ok = !fchmod(fd, 0644);
		ok = !fclose(out) && ok;
		if (!ok || rename(tmp, path)) {
			dlog("cannot keep a measured figure in %s: %s", path, strerror(errno));
			unlink(tmp);
		}
	} else {
		dlog("cannot keep a measured figure in %s: %s", dir, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
	}
	for (size_t i = 0; i < nkept; i++)
		free(kept[i]);
}
