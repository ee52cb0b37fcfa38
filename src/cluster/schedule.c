/* The rounds of `gpuready cluster links` (see schedule.h). */
#include "cluster/schedule.h"

#include <stddef.h>

int sched_rounds(int n)
{
	if (n < 2)
		return 0;
	return n % 2 ? n : n - 1;
}

static struct sched_pair ordered(int x, int y)
{
	return x < y ? (struct sched_pair){ x, y } : (struct sched_pair){ y, x };
}

int sched_circle_round(int n, int r, struct sched_pair *out, int *rest)
{
	*rest = -1;
	if (n < 2 || r < 0 || r >= sched_rounds(n))
		return -1;
	int m = n % 2 ? n + 1 : n; /* with the phantom node m−1 when n is odd */
	int c = m - 1;             /* positions on the circle */
	int k = 0;
	if (m - 1 < n)
		out[k++] = ordered(m - 1, r);
	else
		*rest = r;
	for (int d = 1; d < m / 2; d++)
		out[k++] = ordered((r + d) % c, (r - d + c) % c);
	return k;
}

uint64_t sched_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* A uniform value in [0, bound) (Lemire's multiply-shift with rejection,
 * so no value is more likely than another). */
static uint64_t below(uint64_t *state, uint64_t bound)
{
	uint64_t threshold = -bound % bound;
	for (;;) {
		uint64_t x = sched_splitmix64(state);
		unsigned __int128 m = (unsigned __int128)x * bound;
		if ((uint64_t)m >= threshold)
			return (uint64_t)(m >> 64);
	}
}

int sched_random_round(int n, uint64_t seed, int r, int *perm, struct sched_pair *out, int *rest)
{
	*rest = -1;
	if (n < 2 || r < 0)
		return -1;
	uint64_t state = seed + (uint64_t)r * 0x9E3779B97F4A7C15ull;
	for (int i = 0; i < n; i++)
		perm[i] = i;
	for (int i = n - 1; i > 0; i--) {
		int j = (int)below(&state, (uint64_t)i + 1);
		int t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	int k = 0;
	for (int i = 0; i + 1 < n; i += 2)
		out[k++] = ordered(perm[i], perm[i + 1]);
	if (n % 2)
		*rest = perm[n - 1];
	return k;
}
