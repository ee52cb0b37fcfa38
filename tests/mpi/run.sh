#!/bin/sh
# Runs a program under Open MPI's mpirun on this host, for tests/meson.build:
#   run.sh MPIRUN NP PROGRAM [ARGS...]
# --allow-run-as-root: CI and containers run the tests as root;
# --oversubscribe: more ranks than cores. mpirun's exit status is non-zero
# when any rank's is. The environment (GPUREADY_MPI_MODULE, ASAN_OPTIONS,
# OMPI_MCA_*) is set by the test definition and reaches every rank.
set -eu
mpirun=$1
np=$2
shift 2
exec "$mpirun" --allow-run-as-root --oversubscribe -np "$np" "$@"
