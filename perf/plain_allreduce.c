/* The anchor for perf/mpi-overhead.sh: a plain MPI loop of the same call
 * gpuready's MPI backend makes (MPI_Allreduce, float, sum, out of place),
 * timed the way nccl-tests and gpuready time it: warm-up, barrier, wall
 * clock around `iters` calls, mean over ranks. Prints "bytes time_us" per
 * size. Not part of gpuready; built by the script with mpicc.
 *
 * The buffers are the harness's (src/bench/mpi/backend_mpi.c, mpi_alloc):
 * page-aligned, max + 64 bytes, and written (zeroed) before the first call.
 * Never-written memory from calloc would be read through the kernel's
 * shared zero page: every 4 KiB of the send buffer the same physical page,
 * always in cache, which made this loop look faster than the harness from
 * 4 MiB up (docs/benchmarks.md, "How the numbers compare with the
 * anchors").
 *
 * With PLAIN_WAKER=1 a second thread wakes the way gpuready's control-plane
 * receiver thread does while a benchmark runs (src/job/watchdog.c: a
 * poll() that times out every 250 ms, and a heartbeat written to a socket
 * and read on the other side once a second): the same loop with the same
 * interruptions, to tell what that thread costs from what the harness
 * costs.
 *
 * usage: plain_allreduce MIN_BYTES MAX_BYTES ITERS WARMUP */
#include <mpi.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int waker_fds[2];

static void *waker(void *arg)
{
	(void)arg;
	char beat[24] = { 0 };
	for (unsigned k = 1;; k++) {
		struct pollfd pf = { .fd = waker_fds[1], .events = POLLIN };
		if (poll(&pf, 1, 250) > 0 && read(waker_fds[1], beat, sizeof(beat)) <= 0)
			return NULL;
		if (k % 4 == 0 && write(waker_fds[0], beat, sizeof(beat)) < 0)
			return NULL;
	}
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	if (argc != 5) {
		fprintf(stderr, "usage: %s MIN_BYTES MAX_BYTES ITERS WARMUP\n", argv[0]);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	long min = atol(argv[1]), max = atol(argv[2]);
	int iters = atoi(argv[3]), warmup = atoi(argv[4]), rank, n;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	const char *w = getenv("PLAIN_WAKER");
	pthread_t th;
	if (w && !strcmp(w, "1") &&
	    (socketpair(AF_UNIX, SOCK_STREAM, 0, waker_fds) || pthread_create(&th, NULL, waker, NULL))) {
		fprintf(stderr, "%s: cannot start the waker thread\n", argv[0]);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	size_t len = (size_t)max + 64;
	void *send = NULL, *recv = NULL;
	if (posix_memalign(&send, 4096, len) || posix_memalign(&recv, 4096, len)) {
		fprintf(stderr, "%s: cannot allocate 2 x %zu bytes\n", argv[0], len);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	memset(send, 0, len);
	memset(recv, 0, len);
	for (long bytes = min; bytes <= max; bytes *= 2) {
		int count = (int)(bytes / (long)sizeof(float));
		for (int i = 0; i < warmup; i++)
			MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
		MPI_Barrier(MPI_COMM_WORLD);
		double t0 = MPI_Wtime();
		for (int i = 0; i < iters; i++)
			MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
		double dt = (MPI_Wtime() - t0) / iters, sum = 0;
		MPI_Allreduce(&dt, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		if (rank == 0)
			printf("%ld %.3f\n", bytes, sum / n * 1e6);
	}
	free(send);
	free(recv);
	MPI_Finalize();
	return 0;
}
