// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Open-addressing (linear probing) map for the per-event lookups; array growth. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "base/hashmap.h"

void u64_map__init(struct u64_map *m)
{
	memset(m, 0, sizeof(*m));
}

void u64_map__free(struct u64_map *m)
{
	free(m->keys);
	free(m->vals);
	u64_map__init(m);
}

int array_grow(void **arr, uint32_t *cap, size_t elem, uint32_t need)
{
	uint32_t ncap = *cap ? *cap : 64;
	void *n;

	if (need <= *cap)
		return 0;
	if (need > UINT32_MAX / 2 + 1) /* doubling past 2^31 wraps to 0 and loops forever */
		return -ENOMEM;
	while (ncap < need)
		ncap *= 2;
	n = realloc(*arr, (size_t)ncap * elem);
	if (!n)
		return -ENOMEM;
	*arr = n;
	*cap = ncap;
	return 0;
}

uint64_t hash_bytes(const void *p, size_t n, uint64_t seed)
{
	const unsigned char *s = p;
	uint64_t h = seed ^ 0xcbf29ce484222325ULL;

	while (n--)
		h = (h ^ *s++) * 0x100000001b3ULL;
	return hash_u64(h);
}

/*
 * The slot a key starts at. An address: its 4 KiB page hashed, plus its 16-byte unit in the
 * page, so that objects allocated together (a module's code objects) and looked up in that
 * order (its functions called in turn) are looked up in ascending slots, which the CPU fetches
 * ahead; hashed apart, each was a cache miss once the map outgrew the cache (20,000
 * functions). Objects 16-byte aligned (CPython's allocators) never share a page's start slot,
 * and pages land apart as hashed keys do: probes stay as short as with hash_u64 alone.
 */
static size_t slot_of(const struct u64_map *m, uint64_t key)
{
	if (m->by_address)
		return (size_t)(hash_u64(key >> 12) + ((key >> 4) & 255));
	return (size_t)hash_u64(key);
}

uint64_t *u64_map__get(const struct u64_map *m, uint64_t key)
{
	size_t i, mask = m->cap - 1;

	if (!m->cap)
		return NULL;
	for (i = slot_of(m, key) & mask; m->keys[i]; i = (i + 1) & mask)
		if (m->keys[i] == key)
			return &m->vals[i];
	return NULL;
}

static int grow(struct u64_map *m)
{
	struct u64_map n = { .cap = m->cap ? m->cap * 2 : 64, .by_address = m->by_address };
	size_t i;

	n.keys = calloc(n.cap, sizeof(*n.keys));
	n.vals = calloc(n.cap, sizeof(*n.vals));
	if (!n.keys || !n.vals) {
		free(n.keys);
		free(n.vals);
		return -1;
	}
	for (i = 0; i < m->cap; i++)
		if (m->keys[i])
			*u64_map__upsert(&n, m->keys[i]) = m->vals[i];
	u64_map__free(m);
	*m = n;
	return 0;
}

uint64_t *u64_map__upsert(struct u64_map *m, uint64_t key)
{
	size_t i, mask;
	uint64_t *v = u64_map__get(m, key);

	if (v)
		return v;
	if ((m->len + 1) * 2 > m->cap && grow(m))
		return NULL;
	mask = m->cap - 1;
	for (i = slot_of(m, key) & mask; m->keys[i]; i = (i + 1) & mask)
		;
	m->keys[i] = key;
	m->vals[i] = 0;
	m->len++;
	return &m->vals[i];
}

void u64_map__del(struct u64_map *m, uint64_t key)
{
	size_t i, j, k, mask = m->cap - 1;
	uint64_t *v = u64_map__get(m, key);

	if (!v)
		return;
	i = (size_t)(v - m->vals);
	m->keys[i] = 0;
	m->len--;
	/* shift later members of the cluster back so lookups still find them */
	for (j = (i + 1) & mask; m->keys[j]; j = (j + 1) & mask) {
		k = slot_of(m, m->keys[j]) & mask;
		if ((j > i && (k <= i || k > j)) || (j < i && (k <= i && k > j))) {
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			m->keys[j] = 0;
			i = j;
		}
	}
}
