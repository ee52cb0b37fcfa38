/* Mutual challenge-response over a shared secret, for the job's control
 * plane (src/job/) and the `bench net` server (src/bench/net/).
 *
 * The secret (a "job token") comes from GPUREADY_JOB_TOKEN or a file
 * (--token-file): it travels to remote processes by the environment or a
 * shared file, never on a command line. It is hashed into a 32-byte key
 * (BLAKE2b, libsodium's crypto_generichash). Each side sends a fresh random
 * nonce; each then proves it holds the key with HMAC-SHA-256 (libsodium's
 * crypto_auth_hmacsha256) over a label, its role, both nonces, the job ID
 * and the rank it claims. A side that does not hold the key cannot answer,
 * and a recorded answer does not fit the next connection's nonces.
 * libsodium's documentation: https://doc.libsodium.org/ (Hashing, Secret-key
 * authentication, Generating random data). */
#ifndef GPUREADY_AUTH_H
#define GPUREADY_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AUTH_NONCE_LEN 32
#define AUTH_PROOF_LEN 32
#define AUTH_TOKEN_MAX 4096
#define AUTH_TOKEN_ENV "GPUREADY_JOB_TOKEN"

struct auth_key {
	bool set;
	unsigned char k[32];
};

/* Which side proves: the listener (rank 0, the bench net server) or the
 * one that connected. */
enum auth_role { AUTH_LISTENER = 'L', AUTH_CONNECTOR = 'C' };

/* The key from `token_file` when given, else from $GPUREADY_JOB_TOKEN;
 * neither leaves key->set false. Trailing newlines and blanks of a file
 * are dropped. Returns 0, or -errno with *err (an unreadable file, an
 * empty token, one over AUTH_TOKEN_MAX bytes). */
int auth_key_load(const char *token_file, struct auth_key *key, char **err);
/* The key of a token given as bytes (tests, and auth_key_load). */
int auth_key_from(const void *token, size_t len, struct auth_key *key);
void auth_key_wipe(struct auth_key *key);

/* A fresh random nonce. */
void auth_nonce(unsigned char nonce[AUTH_NONCE_LEN]);

/* The proof of `role` for one connection: the connector's nonce first,
 * then the listener's, whichever side computes it. */
void auth_proof(const struct auth_key *key, enum auth_role role, const unsigned char nonce_c[AUTH_NONCE_LEN],
		const unsigned char nonce_l[AUTH_NONCE_LEN], const char *job, uint32_t rank,
		unsigned char out[AUTH_PROOF_LEN]);
/* Whether proof is role's proof for these values (in constant time). */
bool auth_verify(const struct auth_key *key, enum auth_role role, const unsigned char nonce_c[AUTH_NONCE_LEN],
		 const unsigned char nonce_l[AUTH_NONCE_LEN], const char *job, uint32_t rank,
		 const unsigned char proof[AUTH_PROOF_LEN]);

#endif
