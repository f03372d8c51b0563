/* zkpipe-api's tokens file (docs/api.md): one `NAME TOKEN [CIRCUIT,...]` a line; '#' comments and
 * blank lines skipped. Refused unless it is a regular file (not a symlink), owned by the caller and
 * of mode 0600 or stricter. A token is kept only as its SHA-256, and a presented one is compared
 * against every entry in constant time. */
#pragma once
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"

#define API_TOKEN_MIN 16
#define API_TOKEN_MAX 256

/* A token's form, the one rule for the tokens file and the CLI's --token-file: API_TOKEN_MIN to
 * API_TOKEN_MAX printable ASCII characters, no space. 0, -ERANGE (its length) or -EINVAL (a
 * character outside 0x21-0x7e). */
static inline int api_token_form(const char *tok, size_t len) {
    if (len < API_TOKEN_MIN || len > API_TOKEN_MAX) return -ERANGE;
    for (size_t i = 0; i < len; i++)
        if (tok[i] < 0x21 || tok[i] > 0x7e) return -EINVAL;
    return 0;
}

typedef struct api_token {
    char name[64];
    uint8_t digest[32];                            /* SHA-256 of the token */
    char circuits[CFG_MAX_CIRCUITS][CFG_NAME_MAX]; /* n_circuits == 0: every circuit */
    uint32_t n_circuits;
} api_token_t;

typedef struct api_tokens {
    api_token_t *t;
    size_t n;
} api_tokens_t;

/* Loads path into *ret (replaced only on success); circuits must be in c. err: "PATH:LINE: what". */
int api_tokens_load(api_tokens_t *ret, const char *path, const cfg_t *c, char *err, size_t errlen);
void api_tokens_free(api_tokens_t *t);
/* The entry whose token is tok (len bytes), or NULL; the time does not depend on which matched. */
const api_token_t *api_tokens_find(const api_tokens_t *t, const char *tok, size_t len);
bool api_token_allows(const api_token_t *t, const char *circuit);
