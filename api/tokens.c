/* The tokens file (api/tokens.h). */
#include "tokens.h"

#include <errno.h>
#include <fcntl.h>
#include <nettle/memops.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file.h"
#include "spool/spool.h"

enum { TOKENS_FILE_MAX = 1 << 20 };

static void digest_of(const char *tok, size_t len, uint8_t out[32]) {
    struct sha256_ctx h;
    sha256_init(&h);
    sha256_update(&h, len, (const uint8_t *)tok);
    sha256_digest(&h, 32, out);
}

static int parse_line(api_token_t *t, char *line, const cfg_t *c, char *why, size_t whylen) {
    char *save, *name = strtok_r(line, " \t", &save), *tok = strtok_r(NULL, " \t", &save),
                *list = strtok_r(NULL, " \t", &save);
    if (!tok) return snprintf(why, whylen, "expected NAME TOKEN [CIRCUIT,...]"), -EINVAL;
    if (strtok_r(NULL, " \t", &save))
        return snprintf(why, whylen, "expected NAME TOKEN [CIRCUIT,...] (circuits separated by commas, no spaces)"),
               -EINVAL;
    if (!spool_valid_submitter(name))
        return snprintf(why, whylen, "token name '%s': letters, digits, '.', '-', '_', at most 63", name), -EINVAL;
    size_t len = strlen(tok);
    int form = api_token_form(tok, len);
    if (form == -ERANGE)
        return snprintf(why, whylen, "the token of %s has %zu characters: expected %d to %d", name, len, API_TOKEN_MIN,
                        API_TOKEN_MAX),
               -EINVAL;
    if (form < 0) return snprintf(why, whylen, "the token of %s: printable ASCII only", name), -EINVAL;
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    digest_of(tok, len, t->digest);
    for (char *s2, *ci = list ? strtok_r(list, ",", &s2) : NULL; ci; ci = strtok_r(NULL, ",", &s2)) {
        if (!cfg_circuit(c, ci))
            return snprintf(why, whylen, "token %s: circuit %s is not in %s", name, ci, c->path), -EINVAL;
        if (t->n_circuits >= CFG_MAX_CIRCUITS)
            return snprintf(why, whylen, "token %s: too many circuits", name), -EINVAL;
        snprintf(t->circuits[t->n_circuits++], CFG_NAME_MAX, "%s", ci);
    }
    return 0;
}

int api_tokens_load(api_tokens_t *ret, const char *path, const cfg_t *c, char *err, size_t errlen) {
    struct stat st;
    char why[1200];
    int fd = file_open_regular(AT_FDCWD, path, FILE_NOFOLLOW, &st, why, sizeof why);
    if (fd < 0) return snprintf(err, errlen, "the tokens file ([api] tokens) %s", why), fd;
    const char *bad = st.st_uid != geteuid()         ? "not owned by this user"
                      : (st.st_mode & 077) != 0      ? "readable by others: chmod 0600 it"
                      : st.st_size > TOKENS_FILE_MAX ? "larger than 1 MiB"
                                                     : NULL;
    if (bad) {
        snprintf(err, errlen, "%s: the tokens file is %s (it must be a file of mode 0600 owned by uid %u)", path, bad,
                 (unsigned)geteuid());
        close(fd);
        return -EPERM;
    }
    FILE *f = fdopen(fd, "r");
    if (!f) {
        close(fd);
        return snprintf(err, errlen, "%s: %s", path, strerror(errno)), -ENOMEM;
    }
    api_tokens_t out = {0};
    size_t cap = 0;
    char line[4096];
    int lineno = 0, rc = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        size_t l = strlen(line);
        if (l && line[l - 1] != '\n' && !feof(f)) {
            snprintf(err, errlen, "%s:%d: line longer than %zu characters", path, lineno, sizeof line - 2);
            rc = -EINVAL;
            break;
        }
        line[strcspn(line, "\r\n")] = 0;
        char *p = line + strspn(line, " \t");
        if (!*p || *p == '#') continue;
        if (out.n == cap) {
            cap = cap ? cap * 2 : 8;
            api_token_t *n = realloc(out.t, cap * sizeof *n);
            if (!n) {
                rc = -ENOMEM;
                snprintf(err, errlen, "%s: out of memory", path);
                break;
            }
            out.t = n;
        }
        char why[512];
        if ((rc = parse_line(&out.t[out.n], p, c, why, sizeof why)) < 0) {
            snprintf(err, errlen, "%s:%d: %s", path, lineno, why);
            break;
        }
        for (size_t i = 0; i < out.n && rc == 0; i++) {
            if (!strcmp(out.t[i].name, out.t[out.n].name))
                snprintf(err, errlen, "%s:%d: token name %s given twice", path, lineno, out.t[i].name), rc = -EINVAL;
            else if (!memcmp(out.t[i].digest, out.t[out.n].digest, 32))
                snprintf(err, errlen, "%s:%d: the token of %s is %s's too", path, lineno, out.t[out.n].name,
                         out.t[i].name),
                    rc = -EINVAL;
        }
        if (rc < 0) break;
        out.n++;
    }
    fclose(f);
    if (rc == 0 && !out.n)
        snprintf(err, errlen, "%s: no tokens (expected lines NAME TOKEN [CIRCUIT,...])", path), rc = -EINVAL;
    if (rc < 0) {
        free(out.t);
        return rc;
    }
    api_tokens_free(ret);
    *ret = out;
    return 0;
}

void api_tokens_free(api_tokens_t *t) {
    free(t->t);
    *t = (api_tokens_t){0};
}

const api_token_t *api_tokens_find(const api_tokens_t *t, const char *tok, size_t len) {
    uint8_t d[32];
    digest_of(tok, len, d);
    const api_token_t *hit = NULL;
    for (size_t i = 0; i < t->n; i++) /* no early exit: every entry is compared */
        if (memeql_sec(d, t->t[i].digest, 32)) hit = &t->t[i];
    return hit;
}

bool api_token_allows(const api_token_t *t, const char *circuit) {
    if (!t->n_circuits) return true;
    for (uint32_t i = 0; i < t->n_circuits; i++)
        if (!strcmp(t->circuits[i], circuit)) return true;
    return false;
}
