/* `gpuready man`: the man page, generated from the command and option
 * tables so that it cannot drift from --help. docs/gpuready.1 is this
 * command's output; a test compares the two. */
#include "cmd.h"
#include "checks/check.h"
#include "config.h"

#include <string.h>

static void roff_text(const char *s)
{
	for (; *s; s++) {
		if (*s == '-' || *s == '\\')
			putchar('\\');
		putchar(*s);
	}
}

/* The options of the command named `name`, from its own tables. */
static void man_options(const char *name)
{
	for (const struct command *c = command_next(NULL); c; c = command_next(c))
		if (!strcmp(c->name, name))
			opt_print_man(stdout, c->opts, c->scope);
}

/* Which of check's options each area's command takes: all but the site
 * expectations of the other areas. */
static void man_area_options(void)
{
	printf(".PP\n\\fBcheck\\fR takes every option above; each area's command takes the site "
	       "expectations of its own checks only:");
	int areas = 0;
	for (const struct command *c = command_next(NULL); c; c = command_next(c)) {
		if (!(c->scope & SCOPE_CHECKS) || c->scope == SCOPE_CHECK)
			continue;
		printf("%s \\fB%s\\fR", areas++ ? ";" : "", c->name);
		int n = 0;
		for (const struct opt *o = site_opts.rows; o < site_opts.rows + site_opts.n; o++)
			if (o->scope & c->scope) {
				printf("%s\\-\\-", n++ ? ", " : " ");
				roff_text(o->name);
			}
		if (!n)
			printf(" none");
	}
	printf(". The configuration file may set every key whatever the command.\n");
}

/* The FILES and EXAMPLES sections. */
static void man_files_examples(void)
{
	printf(".SH FILES\n.TP\n/etc/gpuready.conf\nSite expectations.\n.TP\nDIR/.gpuready/environ, "
	       "DIR/.gpuready/meta\nIn a snapshot: the recorded NCCL_*, UCX_*, CUDA_VISIBLE_DEVICES and "
	       "KUBERNETES_SERVICE_HOST environment, and the user and architecture it was taken as.\n.TP\n"
	       "DIR/.gpuready/ifaddrs, DIR/.gpuready/dcb\nIn a snapshot: the interface addresses (getifaddrs) and "
	       "the RoCE netdevs' PFC and DSCP APP entries (rtnetlink DCB), which no file holds.\n.TP\nDIR/.gpuready/unreadable\n"
	       "In a snapshot: one line per file that could not be read, \"<errno name> <path>\" (EACCES "
	       "/etc/profile.d/x.sh); reading the snapshot fails for that file with that error.\n.TP\n"
	       "DIR/.gpuready/incomplete\nIn a snapshot that did not finish (a full disk): the check "
	       "commands and topo refuse it (exit status 2) unless \\-\\-force.\n");
	printf(".SH EXAMPLES\n.nf\ngpuready check\nverify\\-rdma \\-\\-json\n"
	       "gpuready rdma \\-\\-only 'rdma.nccl_*'\n"
	       "gpuready check \\-\\-prom /var/lib/node_exporter/textfile/gpuready.prom\n"
	       "gpuready snapshot /tmp/node17 && gpuready check \\-\\-sysroot /tmp/node17\n"
	       "mpirun \\-np 4 gpuready bench all_reduce \\-\\-backend mpi \\-b 8 \\-e 64M \\-f 2\n"
	       "torchrun \\-\\-nproc\\-per\\-node 8 \\-\\-no\\-python all_reduce_perf \\-b 8 \\-e 8G \\-f 2\n"
	       "torchrun \\-\\-nproc\\-per\\-node 8 \\-\\-no\\-python test\\-nccl \\-\\-require ib,gdr\n.fi\n");
}

int cmd_man(struct cmd_env *env)
{
	(void)env;
	printf(".TH GPUREADY 1 \"\" \"gpuready %s\" \"User Commands\"\n", GPUREADY_VERSION);
	printf(".SH NAME\ngpuready \\- is this GPU node ready for distributed training?\n");
	printf(".SH SYNOPSIS\n");
	for (const struct command *c = command_next(NULL); c; c = command_next(c))
		if (!c->hidden) {
			printf(".B gpuready ");
			roff_text(c->name);
			printf("\n");
			roff_text(c->usage);
			printf("\n.br\n");
		}
	printf(".SH DESCRIPTION\n"
	       "gpuready reads a node's sysfs, procfs, configfs and configuration files (live, or a recorded "
	       "tree given with \\-\\-sysroot) and reports, check by check, whether the GPUs, GPUDirect RDMA, the "
	       "RDMA stack and the NCCL configuration are ready for multi\\-node training, and how to fix what is "
	       "not.\n"
	       "Each finding has an ID, a status (ok, warn, fail, skip), a subject, a message with the "
	       "observed and expected values and, for warn and fail, a fix.\n");
	printf(".SH COMMANDS\n");
	for (const struct command *c = command_next(NULL); c; c = command_next(c)) {
		if (c->hidden)
			continue;
		printf(".SS \"");
		roff_text(c->name);
		printf("\"\n");
		roff_text(c->summary);
		printf(".\n");
		if (c->description) {
			printf(".PP\n");
			roff_text(c->description);
			printf("\n");
		}
		if (c->alias) {
			printf(".PP\nAlso installed as \\fB");
			roff_text(c->alias);
			printf("\\fR.\n");
		}
	}
	printf(".SH OPTIONS\n.SS \"Check commands (check, gpu, rdma, gpudirect)\"\n");
	man_options("check");
	man_area_options();
	printf(".SS \"snapshot\"\n");
	man_options("snapshot");
	printf(".SS \"bench (all_reduce_perf ...)\"\n");
	man_options("bench");
	printf(".SS \"nccl (test-nccl)\"\n");
	man_options("nccl");
	printf(".SS \"nccl \\-\\-explain\"\n");
	man_options("nccl --explain");
	printf(".SS \"bench net\"\n");
	man_options("bench net");
	printf(".SH CHECKS\n");
	for (size_t i = 0; i < check_registry_n; i++) {
		printf(".TP\n.B ");
		roff_text(check_registry[i]->id);
		printf("\n");
		roff_text(check_registry[i]->summary);
		printf(".\n");
	}
	printf(".SH CONFIGURATION FILE\n"
	       "Site expectations are read from \\fI/etc/gpuready.conf\\fR inside the sysroot, or from "
	       "\\fB\\-\\-config\\fR \\fIFILE\\fR. Lines are \\fIkey\\fR = \\fIvalue\\fR; '#' and ';' start "
	       "comments; an optional [gpuready] section header is allowed. The keys are listed with the "
	       "options above (\"Config key\"). Command-line options override the file. An unknown key "
	       "is an error (exit status 2) that names the nearest key, so typos do not pass silently; a key "
	       "that another command reads (a site expectation of another area) is accepted and left unused.\n");
	printf(".SH EXIT STATUS\n.TP\n0\nNo check failed.\n.TP\n1\nAt least one check failed (or warned, "
	       "with \\-\\-strict).\n.TP\n2\ngpuready itself could not run: a usage error, an unreadable "
	       "configuration file, or an internal error.\n.TP\n3\nbench and nccl: a rank stalled past its "
	       "deadline or was lost; every process names it on standard error. bench net: the peer (the server "
	       "or the client) disconnected or stopped answering within its deadline.\n.PP\nFor bench and nccl, 1 "
	       "means wrong results, or bandwidth below \\-\\-expect\\-busbw or NCCL_TESTS_MIN_BW, or an "
	       "unmet \\-\\-require; for bench net, data that arrived wrong or bandwidth below "
	       "\\-\\-expect\\-gbps.\n");
	man_files_examples();
	return fflush(stdout) == 0 ? EXIT_OK : EXIT_TOOL_ERROR;
}
