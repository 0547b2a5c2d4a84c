// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bench/replay FILE [REPS]: the user-space consumer alone, on a raw recording (record --raw).
 * Times gunzip alone first (decompressing into a small buffer), then decompresses FILE into
 * memory and feeds its records REPS times (3) to the recorder that `record` and `report` use,
 * into a fresh profile each time, and prints the best run's events per second.
 * profile__finish and the output writers are not timed: they run once per recording, not per
 * event.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include "profile/raw.h"
#include "record/recorder.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	size_t cap = 1 << 24, len = 0, off;
	unsigned char *data = malloc(cap);
	_Alignas(8) unsigned char rec[RAW_MAX_RECORD];
	struct hook_state hooks = { 0 };
	struct raw_header h;
	double t0, gunzip_s, best = 1e9;
	uint64_t records = 0;
	int reps = argc > 2 ? atoi(argv[2]) : 3, fd, n, r;
	gzFile gz;

	if (argc < 2 || !data)
		return 64;
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || read(fd, &h, sizeof(h)) != sizeof(h) || memcmp(h.magic, RAW_MAGIC, 8)) {
		fprintf(stderr, "replay: %s is not a raw recording\n", argv[1]);
		return 1;
	}
	/* gunzip alone: into one small buffer, so that no page fault is counted in it */
	t0 = now_s();
	gz = gzdopen(dup(fd), "rb");
	gzbuffer(gz, 1 << 20);
	while (gzread(gz, data, 1 << 20) > 0)
		;
	gzclose(gz);
	gunzip_s = now_s() - t0;
	/* then the whole stream into memory, for the handling runs */
	lseek(fd, sizeof(h), SEEK_SET);
	gz = gzdopen(fd, "rb");
	gzbuffer(gz, 1 << 20);
	while ((n = gzread(gz, data + len, (unsigned)(cap - len))) > 0) {
		len += (size_t)n;
		if (len == cap && !(data = realloc(data, cap *= 2)))
			return 1;
	}
	gzclose(gz);

	for (r = 0; r < reps; r++) {
		struct recorder rc = { .hooks = &hooks, .target_version = h.python };
		double s;

		rc.prof = profile__new();
		records = 0;
		t0 = now_s();
		for (off = 0; off + 4 <= len;) {
			uint32_t size;

			memcpy(&size, data + off, 4);
			if (size > sizeof(rec) || off + 4 + size > len)
				break;
			memcpy(rec, data + off + 4, size); /* as raw_read does: aligned */
			off += 4 + size;
			if (*(uint32_t *)rec == RAW_END)
				break;
			records++;
			if (recorder__handle(&rc, rec, size))
				break;
		}
		s = now_s() - t0;
		if (rc.err) {
			fprintf(stderr, "replay: error %d\n", rc.err);
			return 1;
		}
		if (s < best)
			best = s;
		profile__free(rc.prof);
	}
	printf("records %llu bytes %zu gunzip_s %.3f handle_s %.3f events_per_s %.0f "
	       "gunzip_events_per_s %.0f\n", (unsigned long long)records, len, gunzip_s, best,
	       records / best, records / gunzip_s);
	return 0;
}
