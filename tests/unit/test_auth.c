/* Unit tests for the job token and the challenge-response (core/auth). */
#define _GNU_SOURCE
#include "testutil.h"
#include "core/auth.h"
#include "core/strbuf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char job[] = "slurm:4242.0";

static void test_proof_roundtrip(void **state)
{
	(void)state;
	struct auth_key k, other;
	unsigned char nc[AUTH_NONCE_LEN], nl[AUTH_NONCE_LEN], p[AUTH_PROOF_LEN], q[AUTH_PROOF_LEN];

	assert_int_equal(auth_key_from("s3cret", 6, &k), 0);
	assert_true(k.set);
	assert_int_equal(auth_key_from("s3cret!", 7, &other), 0);
	auth_nonce(nc);
	auth_nonce(nl);
	assert_memory_not_equal(nc, nl, AUTH_NONCE_LEN);

	auth_proof(&k, AUTH_LISTENER, nc, nl, job, 3, p);
	assert_true(auth_verify(&k, AUTH_LISTENER, nc, nl, job, 3, p));
	/* the same key gives the same proof; anything else does not fit */
	auth_proof(&k, AUTH_LISTENER, nc, nl, job, 3, q);
	assert_memory_equal(p, q, AUTH_PROOF_LEN);
	assert_false(auth_verify(&other, AUTH_LISTENER, nc, nl, job, 3, p));
	assert_false(auth_verify(&k, AUTH_CONNECTOR, nc, nl, job, 3, p)); /* the other side's proof */
	assert_false(auth_verify(&k, AUTH_LISTENER, nl, nc, job, 3, p));  /* nonces swapped */
	assert_false(auth_verify(&k, AUTH_LISTENER, nc, nl, job, 2, p));  /* another rank */
	assert_false(auth_verify(&k, AUTH_LISTENER, nc, nl, "slurm:4242.1", 3, p));
	/* a replay: the listener's next nonce makes the recorded proof useless */
	unsigned char nl2[AUTH_NONCE_LEN];
	auth_nonce(nl2);
	assert_false(auth_verify(&k, AUTH_LISTENER, nc, nl2, job, 3, p));
	p[0] ^= 1;
	assert_false(auth_verify(&k, AUTH_LISTENER, nc, nl, job, 3, p));
	auth_key_wipe(&k);
	assert_false(k.set);
}

static void test_key_env(void **state)
{
	(void)state;
	struct auth_key k, f;
	char *err = NULL;

	unsetenv(AUTH_TOKEN_ENV);
	assert_int_equal(auth_key_load(NULL, &k, &err), 0);
	assert_false(k.set);
	assert_null(err);

	setenv(AUTH_TOKEN_ENV, "tok\n", 1);
	assert_int_equal(auth_key_load(NULL, &k, &err), 0);
	assert_true(k.set);
	assert_int_equal(auth_key_from("tok", 3, &f), 0);
	assert_memory_equal(k.k, f.k, sizeof(k.k)); /* the trailing newline is not part of it */

	setenv(AUTH_TOKEN_ENV, " \n", 1);
	assert_int_equal(auth_key_load(NULL, &k, &err), -ENODATA);
	assert_non_null(strstr(err, "$GPUREADY_JOB_TOKEN is empty"));
	free(err);
	err = NULL;
	unsetenv(AUTH_TOKEN_ENV);
}

static void test_key_file(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp(), *path = xasprintf("%s/token", dir), *err = NULL;
	struct auth_key k, e;

	/* a file wins over the environment */
	setenv(AUTH_TOKEN_ENV, "from-env", 1);
	tu_write(dir, "/token", "from-file\r\n");
	assert_int_equal(auth_key_load(path, &k, &err), 0);
	assert_int_equal(auth_key_from("from-file", 9, &e), 0);
	assert_memory_equal(k.k, e.k, sizeof(k.k));
	unsetenv(AUTH_TOKEN_ENV);

	tu_write(dir, "/token", "");
	assert_int_equal(auth_key_load(path, &k, &err), -ENODATA);
	assert_false(k.set);
	free(err);
	err = NULL;

	char *big = xcalloc(1, AUTH_TOKEN_MAX + 10);
	memset(big, 'x', AUTH_TOKEN_MAX + 5);
	tu_write(dir, "/token", big);
	assert_int_equal(auth_key_load(path, &k, &err), -EFBIG);
	assert_non_null(strstr(err, "longer than"));
	free(err);
	err = NULL;
	free(big);

	assert_int_equal(auth_key_load(dir, &k, &err), -EISDIR); /* a directory */
	free(err);
	err = NULL;
	char *missing = xasprintf("%s/none", dir);
	assert_int_equal(auth_key_load(missing, &k, &err), -ENOENT);
	assert_non_null(strstr(err, "cannot read the job token"));
	free(err);
	free(missing);
	free(path);
	tu_rmtree(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_proof_roundtrip),
		cmocka_unit_test(test_key_env),
		cmocka_unit_test(test_key_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
