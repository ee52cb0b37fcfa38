/* A container's view: the proc(5) parsers of src/inventory/container.c,
 * the loader on small trees (markers, cgroups, mountinfo, /proc/self as a
 * link as a snapshot keeps it), and the policy of rdma.container,
 * rdma.dev_shm, rdma.memlock and rdma.devices inside a container, on
 * inventories built by hand. */
#include "testutil.h"
#include "checks/check.h"
#include "core/report.h"
#include "core/root.h"
#include "core/strbuf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define GIB (1ull << 30)
#define MIB (1ull << 20)

static void test_mountinfo_line(void **state)
{
	(void)state;
	char l1[] = "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue";
	struct mountinfo_line m;
	assert_true(mountinfo_parse_line(l1, &m));
	assert_string_equal(m.root, "/mnt1");
	assert_string_equal(m.mount_point, "/mnt2");
	assert_string_equal(m.fstype, "ext3");
	assert_string_equal(m.source, "/dev/root");
	assert_string_equal(m.super_opts, "rw,errors=continue");
	char l2[] = "812 790 0:180 / /dev/shm rw,nosuid,nodev,noexec,relatime - tmpfs shm rw,size=65536k,inode64";
	assert_true(mountinfo_parse_line(l2, &m));
	assert_string_equal(m.mount_point, "/dev/shm");
	assert_string_equal(m.source, "shm");
	/* no optional fields at all, and broken lines */
	char l3[] = "25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw";
	assert_true(mountinfo_parse_line(l3, &m));
	static const char *const bad[] = { "", "36 35 98:0 /a /b rw", "36 35 98:0 /a /b rw - ext3",
					   "36 35 98:0 /a /b rw - ext3 src", "36 35 98:0 a /b rw - ext3 s o" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *c = strdup(bad[i]);
		assert_false(mountinfo_parse_line(c, &m));
		free(c);
	}
}

static void test_tmpfs_size(void **state)
{
	(void)state;
	uint64_t v = 0;
	assert_int_equal(tmpfs_size_option("rw,size=65536k,inode64", &v), 0);
	assert_int_equal(v, 64 * MIB);
	assert_int_equal(tmpfs_size_option("size=16g", &v), 0);
	assert_int_equal(v, 16 * GIB);
	assert_int_equal(tmpfs_size_option("rw,size=1048576", &v), 0);
	assert_int_equal(v, MIB);
	assert_int_equal(tmpfs_size_option("rw,nr_inodes=5,mode=1777", &v), -ENOENT);
	assert_int_equal(tmpfs_size_option("rw,size=50%", &v), -EINVAL);
	assert_int_equal(tmpfs_size_option("rw,size=k", &v), -EINVAL);
	assert_int_equal(tmpfs_size_option("size=99999999999999999999t", &v), -ERANGE);
	assert_int_equal(tmpfs_size_option("size=9999999999999t", &v), -ERANGE);
	assert_int_equal(tmpfs_size_option("", &v), -ENOENT);
}

static void test_limits_status(void **state)
{
	(void)state;
	const char *limits = "Limit                     Soft Limit           Hard Limit           Units     \n"
			     "Max cpu time              unlimited            unlimited            seconds   \n"
			     "Max locked memory         8388608              8388608              bytes     \n";
	uint64_t s = 0, h = 0;
	assert_int_equal(proc_limits_memlock(limits, &s, &h), 0);
	assert_int_equal(s, 8 * MIB);
	assert_int_equal(h, 8 * MIB);
	assert_int_equal(proc_limits_memlock("Max locked memory  unlimited  unlimited  bytes\n", &s, &h), 0);
	assert_true(s == UINT64_MAX && h == UINT64_MAX);
	assert_int_equal(proc_limits_memlock("Max locked memory  lots\n", &s, &h), -EINVAL);
	assert_int_equal(proc_limits_memlock("Max cpu time unlimited unlimited\n", &s, &h), -ENODATA);
	char *v = NULL;
	assert_int_equal(proc_status_field("Name:\tx\nCapEff:\t00000000a80425fb\n", "CapEff", &v), 0);
	assert_string_equal(v, "00000000a80425fb");
	free(v);
	assert_int_equal(proc_status_field("CapEffX:\t1\n", "CapEff", &v), -ENODATA);
	assert_int_equal(proc_status_field("", "CapEff", &v), -ENODATA);
}

/* A tree as a snapshot of a Docker container on the H100 node keeps it. */
static char *docker_tree(const char *shm_opts, const char *memlock, const char *capeff, const char *uid_map)
{
	char *d = tu_mkdtemp();
	char mi[512];
	snprintf(mi, sizeof(mi),
		 "790 720 0:170 / / rw,relatime master:300 - overlay overlay rw,lowerdir=/var/lib/docker/overlay2/l/A\n"
		 "812 790 0:180 / /dev/shm rw,nosuid,nodev,noexec,relatime - tmpfs shm %s\n"
		 "813 790 259:2 /var/lib/docker/containers/abc/hostname /etc/hostname rw,relatime - ext4 /dev/nvme0n1p2 rw\n",
		 shm_opts);
	tu_write(d, ".dockerenv", "");
	tu_symlink(d, "proc/self", "4242");
	tu_write(d, "proc/4242/mountinfo", mi);
	tu_write(d, "proc/1/cgroup", "0::/\n");
	tu_write(d, "proc/4242/cgroup", "0::/\n");
	tu_write(d, "proc/meminfo", "MemTotal:       2113163828 kB\nMemFree: 1 kB\n");
	char lim[256];
	snprintf(lim, sizeof(lim), "Limit Soft Limit Hard Limit Units\nMax locked memory %s %s bytes\n", memlock, memlock);
	tu_write(d, "proc/4242/limits", lim);
	char st[128];
	snprintf(st, sizeof(st), "Name:\tgpuready\nCapEff:\t%s\n", capeff);
	tu_write(d, "proc/4242/status", st);
	tu_write(d, "proc/4242/uid_map", uid_map);
	return d;
}

static void load(const char *dir, struct proc_view *v)
{
	struct root *r = NULL;
	assert_int_equal(root_open(dir, &r), 0);
	memset(v, 0, sizeof(*v));
	assert_int_equal(proc_view_load(r, v), 0);
	root_free(r);
}

static void test_load(void **state)
{
	(void)state;
	struct proc_view v;
	char *d = docker_tree("rw,size=65536k,inode64", "8388608", "00000000a80425fb", "0 0 4294967295\n");
	load(d, &v);
	assert_string_equal(v.runtime, "Docker");
	assert_int_equal(v.evidence.n, 2);
	assert_string_equal(v.evidence.v[0], "/.dockerenv exists");
	assert_non_null(strstr(v.evidence.v[1], "/etc/hostname is a bind mount"));
	assert_true(v.shm_mounted && v.shm_size_set);
	assert_int_equal(v.shm_size, 64 * MIB);
	assert_string_equal(v.shm_source, "shm");
	assert_int_equal(v.mem_total, 2113163828ull * 1024);
	assert_int_equal(v.memlock_soft, 8 * MIB);
	assert_int_equal(v.cap_eff, 0xa80425fbull);
	assert_int_equal(v.init_userns, 1);
	proc_view_free(&v);
	tu_rmtree(d);
	free(d);

	/* Enroot: a bind-mounted root directory and /.lock; a user namespace */
	d = tu_mkdtemp();
	tu_write(d, ".lock", "");
	tu_write(d, "proc/self/mountinfo",
		 "601 600 259:2 /home/u/.local/share/enroot/pyt / ro,nosuid,nodev - ext4 /dev/nvme0n1p2 rw\n"
		 "620 601 0:24 / /dev/shm rw,nosuid,nodev,noexec - tmpfs tmpfs rw,inode64\n");
	tu_write(d, "proc/self/uid_map", "         0       1000          1\n");
	load(d, &v);
	assert_string_equal(v.runtime, "Enroot");
	assert_int_equal(v.evidence.n, 2);
	assert_true(v.shm_mounted && !v.shm_size_set);
	assert_int_equal(v.init_userns, 0);
	assert_int_equal(v.limits_err, -ENOENT);
	assert_int_equal(v.meminfo_err, -ENOENT);
	proc_view_free(&v);
	tu_rmtree(d);
	free(d);

	/* Kubernetes by its cgroup and its variable; a host has nothing */
	d = tu_mkdtemp();
	tu_write(d, "proc/1/cgroup", "0::/kubepods.slice/kubepods-burstable.slice/cri-containerd-1.scope\n");
	tu_write(d, ".gpuready/environ", "NCCL_DEBUG=INFO");
	load(d, &v);
	assert_string_equal(v.runtime, "Kubernetes");
	assert_int_equal(v.evidence.n, 1);
	assert_int_equal(v.mountinfo_err, -ENOENT);
	proc_view_free(&v);
	tu_write(d, "proc/1/cgroup", "0::/init.scope\n");
	tu_write(d, "proc/self/cgroup", "0::/system.slice/docker.service\n"); /* dockerd's own: not a container */
	tu_write(d, "proc/self/mountinfo", "22 1 259:2 / / rw - ext4 /dev/nvme0n1p2 rw\n");
	load(d, &v);
	assert_int_equal(v.evidence.n, 0);
	assert_true(v.looked);
	assert_false(v.shm_mounted);
	proc_view_free(&v);
	tu_rmtree(d);
	free(d);
}

/* ---- the checks on a hand-built node: one GPU, one RDMA device ---- */

struct node {
	struct inventory inv;
	struct pci_dev gpu;
	struct rdma_dev dev;
	struct report rep;
};

static void node_init(struct node *n, const char *runtime)
{
	memset(n, 0, sizeof(*n));
	n->gpu = (struct pci_dev){ .bdf = (char *)"0000:18:00.0", .vendor = 0x10de, .device = 0x2330,
				   .class_code = 0x030200, .numa_node = -1, .iommu_group = -1 };
	n->inv.pci.v = &n->gpu;
	n->inv.pci.n = 1;
	n->dev = (struct rdma_dev){ .name = (char *)"mlx5_0", .node_type = 1, .uverbs = (char *)"uverbs0" };
	n->inv.rdma.v = &n->dev;
	n->inv.rdma.n = 1;
	n->inv.rdma.dev_recorded = true;
	n->inv.rdma.uverbs_class = true;
	n->inv.modules.proc_err = -ENOENT;
	struct proc_view *v = &n->inv.view;
	if (runtime) {
		v->runtime = strdup(runtime);
		strv_add(&v->evidence, "/.dockerenv exists");
	}
	v->looked = true;
	v->shm_mounted = true;
	v->shm_fstype = strdup("tmpfs");
	v->shm_source = strdup("shm");
	v->mem_total = 2048 * GIB;
	v->memlock_soft = v->memlock_hard = UINT64_MAX;
	v->cap_eff = 0xa80425fbull;
	v->init_userns = 1;
	n->inv.user.uid = 0;
	report_init(&n->rep, "test", "host", "/");
}

static void node_run(struct node *n, const char *id)
{
	struct strv only = STRV_INIT, skip = STRV_INIT;
	strv_add(&only, id);
	struct check_select sel = { .only = &only, .skip = &skip };
	struct site_expect ex = { 0 };
	assert_int_equal(checks_run(NULL, &n->inv, &ex, &sel, &n->rep), 0);
	strv_free(&only);
}

static void node_free(struct node *n)
{
	report_free(&n->rep);
	proc_view_free(&n->inv.view);
}

static const struct finding *about(const struct node *n, const char *subject)
{
	for (size_t i = 0; i < n->rep.n; i++)
		if (!strcmp(n->rep.v[i]->subject, subject))
			return n->rep.v[i];
	return NULL;
}

static int st(const struct node *n, const char *subject)
{
	const struct finding *f = about(n, subject);
	return f ? (int)f->status : -1;
}

static void test_container_check(void **state)
{
	(void)state;
	struct node n;
	node_init(&n, "Docker");
	node_run(&n, "rdma.container");
	assert_int_equal(st(&n, "container"), STATUS_OK);
	assert_non_null(strstr(about(&n, "container")->message, "in this Docker container (/.dockerenv exists)"));
	node_free(&n);
	node_init(&n, NULL); /* a host */
	node_run(&n, "rdma.container");
	assert_int_equal(st(&n, "container"), STATUS_OK);
	assert_non_null(strstr(about(&n, "container")->message, "the host's own view"));
	node_free(&n);
	node_init(&n, NULL); /* nothing read: cannot tell */
	n.inv.view.looked = false;
	n.inv.view.mountinfo_err = -ENOENT;
	node_run(&n, "rdma.container");
	assert_int_equal(st(&n, "container"), STATUS_SKIP);
	node_free(&n);
}

static void test_dev_shm(void **state)
{
	(void)state;
	static const struct {
		bool container, set;
		uint64_t size, ram;
		int want;
	} cases[] = {
		{ true, true, 64 * MIB, 0, STATUS_FAIL },	  /* Docker's default (F42) */
		{ true, true, 1 * GIB, 0, STATUS_OK },		  /* NCCL's --shm-size=1g */
		{ true, true, 1 * GIB - 4096, 0, STATUS_FAIL },
		{ true, false, 0, 2048 * GIB, STATUS_OK },	  /* --ipc=host: the host's tmpfs, half of RAM */
		{ true, false, 0, 1 * GIB, STATUS_FAIL },	  /* half of 1 GiB */
		{ true, false, 0, 0, STATUS_SKIP },		  /* no size=, MemTotal unknown */
		{ false, true, 64 * MIB, 0, STATUS_FAIL },	  /* a host with a small /dev/shm too */
		{ false, false, 0, 512 * GIB, STATUS_OK },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct node n;
		node_init(&n, cases[i].container ? "Docker" : NULL);
		n.inv.view.shm_size_set = cases[i].set;
		n.inv.view.shm_size = cases[i].size;
		n.inv.view.mem_total = cases[i].ram;
		n.inv.view.meminfo_err = cases[i].ram ? 0 : -ENOENT;
		node_run(&n, "rdma.dev_shm");
		if (st(&n, "/dev/shm") != cases[i].want)
			fail_msg("case %zu: got %d, want %d", i, st(&n, "/dev/shm"), cases[i].want);
		const struct finding *f = about(&n, "/dev/shm");
		if (f->status == STATUS_FAIL) {
			assert_non_null(f->hint);
			assert_non_null(strstr(f->hint, cases[i].container ? "--shm-size" : "remount"));
			if (cases[i].container)
				assert_non_null(strstr(f->message, "Docker container"));
		}
		node_free(&n);
	}
	struct node n;
	node_init(&n, "Docker");
	n.inv.view.mountinfo_err = -EACCES; /* fail closed */
	node_run(&n, "rdma.dev_shm");
	assert_int_equal(st(&n, "/dev/shm"), STATUS_SKIP);
	node_free(&n);
	node_init(&n, "Docker");
	n.inv.view.shm_mounted = false;
	node_run(&n, "rdma.dev_shm");
	assert_int_equal(st(&n, "/dev/shm"), STATUS_WARN);
	node_free(&n);
	node_init(&n, "Docker");
	n.inv.view.shm_size_err = -EINVAL;
	node_run(&n, "rdma.dev_shm");
	assert_int_equal(st(&n, "/dev/shm"), STATUS_SKIP);
	node_free(&n);
}

#define CAP_IPC (1ull << CAP_IPC_LOCK_BIT)

static void test_memlock_container(void **state)
{
	(void)state;
	static const struct {
		uint64_t soft, hard, cap;
		int userns, caps_err, limits_err;
		int want;
	} cases[] = {
		{ UINT64_MAX, UINT64_MAX, 0xa80425fb, 1, 0, 0, STATUS_OK },	     /* --ulimit memlock=-1 */
		{ 8 * MIB, 8 * MIB, 0xa80425fb, 1, 0, 0, STATUS_FAIL },		     /* F46: Docker's default caps */
		{ 8 * MIB, 8 * MIB, 0xa80425fb | CAP_IPC, 1, 0, 0, STATUS_OK },	     /* --cap-add=IPC_LOCK */
		{ 8 * MIB, 8 * MIB, 0xa80425fb | CAP_IPC, 0, 0, 0, STATUS_FAIL },     /* only in its user namespace */
		{ 8 * MIB, 8 * MIB, 0xa80425fb | CAP_IPC, -1, 0, 0, STATUS_WARN },    /* uid_map unread */
		{ 8 * MIB, 8 * MIB, 0, 1, -ENOENT, 0, STATUS_WARN },		     /* status unread */
		{ 8 * MIB, UINT64_MAX, 0xa80425fb, 1, 0, 0, STATUS_WARN },	     /* the job can raise it */
		{ 4096 * GIB, 4096 * GIB, 0xa80425fb, 1, 0, 0, STATUS_OK },	     /* beyond all of RAM */
		{ 0, 0, 0, 1, 0, -ENOENT, STATUS_WARN },			     /* limits unread */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct node n;
		node_init(&n, "Docker");
		struct proc_view *v = &n.inv.view;
		v->memlock_soft = cases[i].soft;
		v->memlock_hard = cases[i].hard;
		v->cap_eff = cases[i].cap;
		v->init_userns = cases[i].userns;
		v->caps_err = cases[i].caps_err;
		v->limits_err = cases[i].limits_err;
		node_run(&n, "rdma.memlock");
		if (st(&n, "RLIMIT_MEMLOCK") != cases[i].want)
			fail_msg("case %zu: got %d, want %d", i, st(&n, "RLIMIT_MEMLOCK"), cases[i].want);
		/* limits.conf is not demanded in a container */
		assert_int_equal(st(&n, "memlock"), -1);
		const struct finding *f = about(&n, "RLIMIT_MEMLOCK");
		assert_non_null(strstr(f->message, "Docker container"));
		if (f->status != STATUS_OK)
			assert_non_null(f->hint);
		node_free(&n);
	}
	/* a host without limits.conf lines still warns about limits.conf */
	struct node n;
	node_init(&n, NULL);
	node_run(&n, "rdma.memlock");
	assert_int_equal(st(&n, "memlock"), STATUS_WARN);
	assert_int_equal(st(&n, "RLIMIT_MEMLOCK"), -1);
	node_free(&n);
}

static void test_devices_container(void **state)
{
	(void)state;
	struct node n;
	node_init(&n, "Kubernetes");
	node_run(&n, "rdma.devices");
	const struct finding *f = about(&n, "mlx5_0");
	assert_int_equal(f->status, STATUS_FAIL);
	assert_non_null(strstr(f->message, "Kubernetes container"));
	assert_non_null(strstr(f->hint, "--device=/dev/infiniband/uverbs0"));
	assert_null(strstr(f->hint, "udevadm"));
	f = about(&n, "rdma_cm");
	assert_int_equal(f->status, STATUS_WARN);
	assert_null(strstr(f->hint, "modprobe"));
	node_free(&n);
	node_init(&n, "Kubernetes");
	n.dev.uverbs_node = true;
	n.inv.rdma.rdma_cm_node = true;
	node_run(&n, "rdma.devices");
	assert_int_equal(st(&n, "mlx5_0"), STATUS_OK);
	assert_int_equal(st(&n, "rdma_cm"), STATUS_OK);
	node_free(&n);
	node_init(&n, NULL); /* a host: udev's fix */
	node_run(&n, "rdma.devices");
	assert_non_null(strstr(about(&n, "mlx5_0")->hint, "udevadm"));
	assert_non_null(strstr(about(&n, "rdma_cm")->hint, "modprobe"));
	node_free(&n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mountinfo_line),	 cmocka_unit_test(test_tmpfs_size),
		cmocka_unit_test(test_limits_status),	 cmocka_unit_test(test_load),
		cmocka_unit_test(test_container_check),	 cmocka_unit_test(test_dev_shm),
		cmocka_unit_test(test_memlock_container), cmocka_unit_test(test_devices_container),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
