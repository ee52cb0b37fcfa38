#!/bin/sh
# A fake remote shell for tests/cli/cluster.sh, used as
#   --rsh 'sh tests/cli/fake-rsh.sh {host}' --remote-gpuready BUILD/gpuready
# It runs the command it is given (`gpuready cluster facts --node-name
# HOST`) here, with --sysroot $GPUREADY_FAKE_RSH_DIR/HOST added: the
# test-only way to give each "host" its own machine tree. Host names
# starting with these words behave like broken hosts instead:
#   refused  what ssh says and does when nothing listens on port 22
#   hang     never answers
#   garbage  answers with text that is no record
#   liar     answers with the record of another node (gpu01)
#   silent   exits 0 without a word
# A file $GPUREADY_FAKE_RSH_DIR/HOST.env (VAR=value lines), where there is
# one, is read first and its variables exported: one host's settings of a
# test double, e.g. FAKE_CUDA_COPY_GBPS=h2d@0=14 (tests/cli/cluster_bench.sh).
host=$1
shift
if [ -f "$GPUREADY_FAKE_RSH_DIR/$host.env" ]; then
	set -a
	. "$GPUREADY_FAKE_RSH_DIR/$host.env"
	set +a
fi
case $host in
refused*)
	echo "ssh: connect to host $host port 22: Connection refused" >&2
	exit 255 ;;
hang*)
	exec sleep 100000 ;;
garbage*)
	echo "Welcome to $host! Last login: yesterday"
	exit 0 ;;
liar*)
	exec "$1" cluster facts --node-name gpu01 --sysroot "$GPUREADY_FAKE_RSH_DIR/gpu01" ;;
silent*)
	exit 0 ;;
esac
exec "$@" --sysroot "$GPUREADY_FAKE_RSH_DIR/$host"
