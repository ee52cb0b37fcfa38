/* bench copy's PTX (src/bench/copy/kernels.c) against NVIDIA's assembler
 * and against what driver 535 loads. The test double of libcuda accepts
 * any PTX text, so this is the only check that the kernels are PTX at
 * all.
 *
 * Without a GPU: the text's .version must be one driver 535's JIT accepts
 * (535 is CUDA 12.2, PTX ISA 8.2: the CUDA release notes' driver table and
 * the PTX ISA document's release history), its .target a base target
 * (no "a"/"f" suffix: those do not carry forward to later GPUs), and both
 * must match what kernels.h says. Then ptxas ($PTXAS, else
 * /usr/local/cuda/bin/ptxas, else ptxas on PATH) assembles it for sm_80
 * (A100) and sm_90 (H100) with warnings as errors, and the entry points
 * kernels.h names must be in the text. Without ptxas it skips
 * (exit 77) after the text checks and says why. */
#define _GNU_SOURCE
#include "bench/copy/kernels.h"
#include "core/spawn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_ISA_535 82 /* PTX ISA 8.2 = CUDA 12.2 = driver 535 */

static int text_checks(void)
{
	int bad = 0, major = 0, minor = 0;
	char target[32] = "";
	const char *v = strstr(copy_kernels_ptx, ".version ");
	const char *t = strstr(copy_kernels_ptx, ".target ");

	if (!v || sscanf(v, ".version %d.%d", &major, &minor) != 2 || !t || sscanf(t, ".target %31[a-z0-9_]", target) != 1) {
		printf("the PTX text has no .version X.Y or .target line\n");
		return 1;
	}
	printf("PTX .version %d.%d .target %s\n", major, minor, target);
	char ver[16];
	snprintf(ver, sizeof(ver), "%d.%d", major, minor);
	bad += strcmp(ver, COPY_KERNELS_PTX_VERSION) && printf("kernels.h says .version %s\n", COPY_KERNELS_PTX_VERSION);
	bad += strcmp(target, COPY_KERNELS_PTX_TARGET) && printf("kernels.h says .target %s\n", COPY_KERNELS_PTX_TARGET);
	bad += major * 10 + minor > MAX_ISA_535 && printf("PTX ISA %d.%d is newer than driver 535 (CUDA 12.2) loads\n", major, minor);
	size_t n = strlen(target);
	bad += (n && (target[n - 1] == 'a' || target[n - 1] == 'f')) &&
	       printf("%s is an architecture-specific target: its PTX does not run on later GPUs\n", target);
	const char *entries[] = { COPY_KERNEL_NAME, SPIN_KERNEL_NAME, CHASE_KERNEL_NAME, SPLIT_KERNEL_NAME };
	for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++) {
		char want[64];
		snprintf(want, sizeof(want), ".visible .entry %s(", entries[i]);
		bad += !strstr(copy_kernels_ptx, want) && printf("no entry %s in the text\n", entries[i]);
	}
	return bad;
}

/* The ptxas to use, or NULL (why printed). */
static const char *find_ptxas(void)
{
	static char found[4096];
	const char *env = getenv("PTXAS");

	if (env && *env)
		return env;
	if (access("/usr/local/cuda/bin/ptxas", X_OK) == 0)
		return "/usr/local/cuda/bin/ptxas";
	const char *path = getenv("PATH");
	char *copy = strdup(path ? path : "");
	for (char *save = NULL, *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		snprintf(found, sizeof(found), "%s/ptxas", d);
		if (access(found, X_OK) == 0) {
			free(copy);
			return found;
		}
	}
	free(copy);
	return NULL;
}

static int run(const char *const *argv, const char *what)
{
	struct spawn_result r;

	if (spawn_run(argv, NULL, 120000, &r) < 0) {
		printf("%s: cannot run %s\n", what, argv[0]);
		return 1;
	}
	printf("%s: exit %d\n%s%s", what, r.exit_code, r.out.buf ? r.out.buf : "", r.err.buf ? r.err.buf : "");
	int bad = r.exit_code != 0;
	spawn_result_free(&r);
	return bad;
}

int main(void)
{
	int bad = text_checks();
	const char *ptxas = find_ptxas();

	if (!ptxas) {
		printf("SKIP: no ptxas ($PTXAS, /usr/local/cuda/bin/ptxas or on PATH; it comes with the CUDA "
		       "toolkit): the PTX was not assembled\n");
		return bad ? 1 : 77;
	}
	char file[] = "/tmp/gpuready-ptx-XXXXXX";
	int fd = mkstemp(file);
	if (fd < 0 || write(fd, copy_kernels_ptx, strlen(copy_kernels_ptx)) != (ssize_t)strlen(copy_kernels_ptx)) {
		printf("cannot write %s\n", file);
		return 1;
	}
	close(fd);
	const char *version[] = { ptxas, "--version", NULL };
	bad += run(version, "ptxas --version");
	static const char *const archs[] = { "-arch=sm_80", "-arch=sm_90" };
	for (size_t i = 0; i < 2; i++) {
		const char *argv[] = { ptxas, archs[i], "--warning-as-error", "-v", "-o", "/dev/null", file, NULL };
		bad += run(argv, archs[i]);
	}
	unlink(file);
	return bad ? 1 : 0;
}
