/* The anchor for perf/mpi-overhead.sh: a plain MPI loop of the same call
 * gpuready's MPI backend makes (MPI_Allreduce, float, sum, out of place),
 * timed the way nccl-tests and gpuready time it: warm-up, barrier, wall
 * clock around `iters` calls, mean over ranks. Prints "bytes time_us" per
 * size. Not part of gpuready; built by the script with mpicc.
 *
 * usage: plain_allreduce MIN_BYTES MAX_BYTES ITERS WARMUP */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

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
	float *send = calloc((size_t)max / sizeof(float) + 1, sizeof(float));
	float *recv = calloc((size_t)max / sizeof(float) + 1, sizeof(float));
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
