/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Small containers: an open-addressing hash map from non-zero 64-bit keys to 64-bit values
 * (libbpf's hashmap.h is not installed by Debian's libbpf-dev; grows at 50% load), and the
 * growth of the plain arrays the profile is made of.
 */
#ifndef __PYUPROF_HASHMAP_H
#define __PYUPROF_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct u64_map {
	uint64_t *keys; /* 0 = empty slot */
	uint64_t *vals;
	size_t cap, len;
	/* keys are addresses (set while the map is empty): those of one page take slots in
	 * address order (hashmap.c: slot_of) */
	bool by_address;
};

void u64_map__init(struct u64_map *m);
void u64_map__free(struct u64_map *m);
/* Returns the value slot for key (0 is not a valid key), or NULL. */
uint64_t *u64_map__get(const struct u64_map *m, uint64_t key);
/* Returns the value slot for key, inserting it with value 0; NULL on allocation failure. */
uint64_t *u64_map__upsert(struct u64_map *m, uint64_t key);
/* Removes key if present (backward-shift deletion keeps probes short). */
void u64_map__del(struct u64_map *m, uint64_t key);

/* Makes *arr (of *cap elements of elem bytes) hold at least need, doubling from 64.
 * Returns 0 or -ENOMEM (the array is then unchanged). */
int array_grow(void **arr, uint32_t *cap, size_t elem, uint32_t need);

/* A 64-bit mix for keys and byte strings. */
static inline uint64_t hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}
uint64_t hash_bytes(const void *p, size_t n, uint64_t seed);

#endif /* __PYUPROF_HASHMAP_H */
