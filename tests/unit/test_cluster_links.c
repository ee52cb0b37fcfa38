/* Unit tests for `gpuready cluster links` (src/cluster/schedule.c,
 * src/cluster/links.c): the circle method covers every pair exactly once
 * in disjoint rounds (every N up to 512, and 4,095 and 4,096), odd N rest
 * one node per round, --rounds is reproducible from its seed. */
#define _GNU_SOURCE
#include "testutil.h"
#include "cluster/schedule.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every round of the circle method for n nodes: n/2 disjoint pairs, the
 * resting node (odd n) in none; every pair exactly once over the rounds. */
static void check_circle(int n)
{
	int rounds = sched_rounds(n);
	assert_int_equal(rounds, n < 2 ? 0 : n % 2 ? n : n - 1);
	unsigned char *seen = calloc((size_t)n * (size_t)n + 1, 1);
	int *round_of = malloc(sizeof(int) * (size_t)(n + 1));
	struct sched_pair *p = malloc(sizeof(*p) * (size_t)(n / 2 + 1));
	int *rested = calloc((size_t)n + 1, sizeof(int));
	for (int i = 0; i < n; i++)
		round_of[i] = -1;
	for (int r = 0; r < rounds; r++) {
		int rest, k = sched_circle_round(n, r, p, &rest);
		assert_int_equal(k, n / 2);
		if (n % 2) {
			assert_true(rest >= 0 && rest < n);
			assert_int_not_equal(round_of[rest], r);
			round_of[rest] = r;
			rested[rest]++;
		} else {
			assert_int_equal(rest, -1);
		}
		for (int i = 0; i < k; i++) {
			assert_true(p[i].a >= 0 && p[i].a < p[i].b && p[i].b < n);
			assert_int_not_equal(round_of[p[i].a], r); /* disjoint within the round */
			assert_int_not_equal(round_of[p[i].b], r);
			round_of[p[i].a] = round_of[p[i].b] = r;
			size_t at = (size_t)p[i].a * (size_t)n + (size_t)p[i].b;
			assert_int_equal(seen[at], 0); /* no pair twice */
			seen[at] = 1;
		}
	}
	for (int a = 0; a < n; a++)
		for (int b = a + 1; b < n; b++)
			if (!seen[(size_t)a * (size_t)n + (size_t)b]) {
				fprintf(stderr, "n=%d: pair %d-%d never meets\n", n, a, b);
				fail();
			}
	for (int i = 0; n % 2 && n > 1 && i < n; i++)
		assert_int_equal(rested[i], 1); /* odd n: each node rests exactly once */
	int rest;
	assert_int_equal(sched_circle_round(n, rounds, p, &rest), -1);
	assert_int_equal(sched_circle_round(n, -1, p, &rest), -1);
	free(seen);
	free(round_of);
	free(p);
	free(rested);
}

static void test_circle_all_small(void **state)
{
	(void)state;
	for (int n = 1; n <= 512; n++)
		check_circle(n);
}

static void test_circle_large(void **state)
{
	(void)state;
	check_circle(4095);
	check_circle(4096);
}

static void test_circle_edges(void **state)
{
	(void)state;
	struct sched_pair p[2];
	int rest;
	assert_int_equal(sched_rounds(0), 0);
	assert_int_equal(sched_rounds(1), 0);
	assert_int_equal(sched_circle_round(1, 0, p, &rest), -1);
	assert_int_equal(rest, -1);
	/* two nodes: one round, one pair */
	assert_int_equal(sched_rounds(2), 1);
	assert_int_equal(sched_circle_round(2, 0, p, &rest), 1);
	assert_int_equal(p[0].a, 0);
	assert_int_equal(p[0].b, 1);
	assert_int_equal(rest, -1);
	/* three nodes: three rounds of one pair, each node rests once */
	assert_int_equal(sched_rounds(3), 3);
	int rests = 0;
	for (int r = 0; r < 3; r++) {
		assert_int_equal(sched_circle_round(3, r, p, &rest), 1);
		assert_true(rest >= 0 && rest < 3 && rest != p[0].a && rest != p[0].b);
		rests |= 1 << rest;
	}
	assert_int_equal(rests, 7);
}

/* --rounds K: perfect matchings (odd n: one rests), the same for the same
 * seed, different for another seed. */
static void test_random_rounds(void **state)
{
	(void)state;
	int sizes[] = { 2, 3, 5, 8, 64, 101, 4096 };
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		int n = sizes[s];
		int *perm = malloc(sizeof(int) * (size_t)n), *used = calloc((size_t)n, sizeof(int));
		struct sched_pair *p = malloc(sizeof(*p) * (size_t)n), *q = malloc(sizeof(*q) * (size_t)n);
		bool differ = false;
		for (int r = 0; r < 4; r++) {
			int rest, rest2, k = sched_random_round(n, 12345, r, perm, p, &rest);
			assert_int_equal(k, n / 2);
			assert_int_equal(rest >= 0, n % 2 == 1);
			for (int i = 0; i < k; i++) {
				assert_true(p[i].a < p[i].b && p[i].a >= 0 && p[i].b < n);
				assert_int_not_equal(used[p[i].a], r + 1);
				assert_int_not_equal(used[p[i].b], r + 1);
				used[p[i].a] = used[p[i].b] = r + 1;
			}
			if (rest >= 0)
				assert_int_not_equal(used[rest], r + 1);
			/* reproducible */
			assert_int_equal(sched_random_round(n, 12345, r, perm, q, &rest2), k);
			assert_int_equal(rest2, rest);
			assert_memory_equal(p, q, sizeof(*p) * (size_t)k);
			/* another seed: another matching (for n > 3 a collision
			 * in all four rounds would be a broken generator) */
			sched_random_round(n, 54321, r, perm, q, &rest2);
			differ |= memcmp(p, q, sizeof(*p) * (size_t)k) != 0;
		}
		if (n > 3)
			assert_true(differ);
		free(perm);
		free(used);
		free(p);
		free(q);
	}
	/* splitmix64's published first outputs for state 0 */
	uint64_t st = 0;
	assert_true(sched_splitmix64(&st) == 0xE220A8397B1DCDAFull);
	assert_true(sched_splitmix64(&st) == 0x6E789E6AA1B965F4ull);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_circle_all_small),
		cmocka_unit_test(test_circle_large),
		cmocka_unit_test(test_circle_edges),
		cmocka_unit_test(test_random_rounds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
