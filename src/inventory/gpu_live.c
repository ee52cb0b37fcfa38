/* The pure helpers of gpu_live.h, shared by the probes and unit-tested:
 * PCI bus ID normalisation (NVML writes an 8-digit domain, CUDA and sysfs
 * 4), CUDA version numbers (1000 * major + 10 * minor, as
 * cuDriverGetVersion and nvmlSystemGetCudaDriverVersion give them), and
 * the class of a library's failure to initialise.
 *
 * The probes themselves live beside this file: nvml_probe.c (NVML),
 * cuda_probe.c (the CUDA driver API, through cuda_api.h) and gdr_probe.c
 * (GPUDirect RDMA registration). */
#include "gpu_live.h"

#include <stdlib.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* Counts the hex digits at s (at most max + 1, so "too long" shows) and
 * their value. */
static size_t hex_run(const char *s, size_t max, uint64_t *val)
{
	size_t n = 0;
	uint64_t v = 0;
	while (n <= max && isxdigit((unsigned char)s[n])) {
		char c = (char)tolower((unsigned char)s[n]);
		v = v * 16 + (uint64_t)(c <= '9' ? c - '0' : c - 'a' + 10);
		n++;
	}
	*val = v;
	return n;
}

bool gpu_normalize_bdf(const char *s, char *out, size_t size)
{
	uint64_t dom, bus, dev, fn;
	size_t n;
	char buf[32];

	if (!s || !out)
		return false;
	/* domain: NVML 8 digits, CUDA and sysfs 4; bus 2; device 2 (< 32); function 1 (< 8) */
	n = hex_run(s, 8, &dom);
	if (n < 1 || n > 8 || s[n] != ':')
		return false;
	s += n + 1;
	if (hex_run(s, 2, &bus) != 2 || s[2] != ':')
		return false;
	s += 3;
	if (hex_run(s, 2, &dev) != 2 || s[2] != '.' || dev > 0x1f)
		return false;
	s += 3;
	if (hex_run(s, 1, &fn) != 1 || s[1] != '\0' || fn > 7)
		return false;
	int len = snprintf(buf, sizeof(buf), "%04llx:%02llx:%02llx.%llx", (unsigned long long)dom,
			   (unsigned long long)bus, (unsigned long long)dev, (unsigned long long)fn);
	if (len < 0 || (size_t)len >= size)
		return false;
	memcpy(out, buf, (size_t)len + 1);
	return true;
}

void cuda_version_string(int v, char *out, size_t size)
{
	if (!out || size == 0)
		return;
	if (v < 0)
		snprintf(out, size, "unknown");
	else
		snprintf(out, size, "%d.%d", v / 1000, (v % 1000) / 10);
}

/* Decimal digits at s: count (at most max + 1) and value. */
static size_t dec_run(const char *s, size_t max, int *val)
{
	size_t n = 0;
	int v = 0;
	while (n <= max && s[n] >= '0' && s[n] <= '9') {
		v = v * 10 + (s[n] - '0');
		n++;
	}
	*val = v;
	return n;
}

int cuda_version_parse(const char *s)
{
	int major, minor = 0;
	size_t n;

	if (!s)
		return -1;
	n = dec_run(s, 3, &major);
	if (n < 1 || n > 3)
		return -1;
	s += n;
	if (*s == '.') {
		s++;
		n = dec_run(s, 2, &minor);
		if (n < 1 || n > 2)
			return -1;
		s += n;
	}
	return *s ? -1 : major * 1000 + minor * 10;
}

void nvml_info_free(struct nvml_info *n)
{
	if (!n)
		return;
	free(n->v);
	n->v = NULL;
	n->n = 0;
}

void cuda_info_free(struct cuda_info *c)
{
	if (!c)
		return;
	free(c->v);
	c->v = NULL;
	c->n = 0;
}
