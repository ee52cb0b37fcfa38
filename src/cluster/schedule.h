/* The rounds of `gpuready cluster links` (docs/cluster.md, "cluster
 * links"): which nodes measure each other at the same time.
 *
 * Every pair, in N−1 rounds (the circle method, also called the round-robin
 * tournament schedule): node m−1 stays put, the others sit on a circle and
 * turn one step per round; round r pairs m−1 with r and (r+k) with (r−k)
 * (mod m−1) for k = 1 .. m/2−1, where m is N, or N+1 with a phantom node
 * when N is odd: the node paired with the phantom rests that round. Each
 * round is a perfect matching of the m positions, and over the m−1 rounds
 * every pair meets exactly once.
 *
 * --rounds K: K random perfect matchings instead, for fleets where N−1
 * rounds take too long. Round r shuffles the nodes with Fisher–Yates driven
 * by splitmix64 (Steele, Lea and Flood, "Fast splittable pseudorandom
 * number generators", OOPSLA 2014) started at seed + r·0x9E3779B97F4A7C15,
 * and pairs them in order (an odd last one rests): the same seed gives the
 * same rounds on every rank and every machine.
 *
 * Pure: no I/O, no allocation. */
#ifndef GPUREADY_CLUSTER_SCHEDULE_H
#define GPUREADY_CLUSTER_SCHEDULE_H

#include <stdint.h>

struct sched_pair {
	int a, b; /* a < b: a serves, b connects */
};

/* The number of rounds of the circle method for n nodes: n−1 when even,
 * n when odd (n ≥ 2); 0 for n < 2. */
int sched_rounds(int n);
/* Round r (0 .. sched_rounds(n)−1) of the circle method: writes n/2 pairs
 * to out (room for n/2) and the node that rests to *rest (−1 when none);
 * returns the number of pairs, or −1 when r or n is out of range. */
int sched_circle_round(int n, int r, struct sched_pair *out, int *rest);
/* Round r of --rounds with this seed: the same contract. perm needs room
 * for n ints (the shuffle's scratch). */
int sched_random_round(int n, uint64_t seed, int r, int *perm, struct sched_pair *out, int *rest);
/* splitmix64: advances *state and returns the next value. */
uint64_t sched_splitmix64(uint64_t *state);

#endif
