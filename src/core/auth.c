/* Challenge-response over a shared job token; see auth.h. */
#include "auth.h"
#include "cleanup.h"
#include "fileio.h"
#include "strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Domain separation: a key or proof made for anything else never fits. */
static const char key_label[] = "gpuready job token v1";
static const char proof_label[] = "gpuready auth v1";

int auth_key_from(const void *token, size_t len, struct auth_key *key)
{
	crypto_generichash_state st;

	memset(key, 0, sizeof(*key));
	if (len == 0 || len > AUTH_TOKEN_MAX)
		return -EINVAL;
	if (sodium_init() < 0)
		return -EIO;
	crypto_generichash_init(&st, NULL, 0, sizeof(key->k));
	crypto_generichash_update(&st, (const unsigned char *)key_label, sizeof(key_label));
	crypto_generichash_update(&st, token, len);
	crypto_generichash_final(&st, key->k, sizeof(key->k));
	sodium_memzero(&st, sizeof(st));
	key->set = true;
	return 0;
}

void auth_key_wipe(struct auth_key *key)
{
	sodium_memzero(key, sizeof(*key));
}

int auth_key_load(const char *token_file, struct auth_key *key, char **err)
{
	struct strbuf sb = STRBUF_INIT;
	const char *src = token_file ? token_file : "$" AUTH_TOKEN_ENV;
	int r = 0;

	memset(key, 0, sizeof(*key));
	if (token_file) {
		/* a regular file (or a link to one, as Kubernetes mounts secrets),
		 * the token and a newline at most */
		strbuf_grow(&sb, AUTH_TOKEN_MAX + 2);
		r = file_read_host(token_file, AUTH_TOKEN_MAX + 2, &sb);
	} else {
		const char *v = getenv(AUTH_TOKEN_ENV);
		if (!v)
			return 0;
		strbuf_add(&sb, v, strnlen(v, AUTH_TOKEN_MAX + 1));
	}
	char *buf = sb.buf;
	size_t len = sb.len;
	while (r == 0 && len > 0 && strchr("\n\r \t", buf[len - 1]))
		len--;
	if (r == 0 && len > AUTH_TOKEN_MAX)
		r = -EFBIG;
	if (r == 0 && len == 0)
		r = -ENODATA;
	if (r == 0)
		r = auth_key_from(buf, len, key);
	if (sb.alloc)
		sodium_memzero(sb.buf, sb.alloc);
	strbuf_release(&sb);
	if (r == -ENODATA)
		*err = xasprintf("job token from %s is empty", src);
	else if (r == -EFBIG)
		*err = xasprintf("job token from %s is longer than %d bytes", src, AUTH_TOKEN_MAX);
	else if ((r == -EINVAL || r == -EISDIR) && token_file)
		*err = xasprintf("job token file %s is not a regular file", src);
	else if (r < 0)
		*err = xasprintf("cannot read the job token from %s: %s", src, strerror(-r));
	return r;
}

void auth_nonce(unsigned char nonce[AUTH_NONCE_LEN])
{
	if (sodium_init() < 0)
		abort(); /* no randomness: nothing safe to do */
	randombytes_buf(nonce, AUTH_NONCE_LEN);
}

void auth_proof(const struct auth_key *key, enum auth_role role, const unsigned char nonce_c[AUTH_NONCE_LEN],
		const unsigned char nonce_l[AUTH_NONCE_LEN], const char *job, uint32_t rank,
		unsigned char out[AUTH_PROOF_LEN])
{
	crypto_auth_hmacsha256_state st;
	unsigned char r = (unsigned char)role, le[4] = { rank & 0xff, (rank >> 8) & 0xff, (rank >> 16) & 0xff,
							  rank >> 24 };
	uint32_t jl = (uint32_t)strlen(job);
	unsigned char jle[4] = { jl & 0xff, (jl >> 8) & 0xff, (jl >> 16) & 0xff, jl >> 24 };

	crypto_auth_hmacsha256_init(&st, key->k, sizeof(key->k));
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)proof_label, sizeof(proof_label));
	crypto_auth_hmacsha256_update(&st, &r, 1);
	crypto_auth_hmacsha256_update(&st, nonce_c, AUTH_NONCE_LEN);
	crypto_auth_hmacsha256_update(&st, nonce_l, AUTH_NONCE_LEN);
	crypto_auth_hmacsha256_update(&st, jle, 4);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)job, jl);
	crypto_auth_hmacsha256_update(&st, le, 4);
	crypto_auth_hmacsha256_final(&st, out);
	sodium_memzero(&st, sizeof(st));
}

bool auth_verify(const struct auth_key *key, enum auth_role role, const unsigned char nonce_c[AUTH_NONCE_LEN],
		 const unsigned char nonce_l[AUTH_NONCE_LEN], const char *job, uint32_t rank,
		 const unsigned char proof[AUTH_PROOF_LEN])
{
	unsigned char want[AUTH_PROOF_LEN];
	auth_proof(key, role, nonce_c, nonce_l, job, rank, want);
	bool ok = sodium_memcmp(want, proof, AUTH_PROOF_LEN) == 0;
	sodium_memzero(want, sizeof(want));
	return ok;
}
