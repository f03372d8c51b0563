/* zkpipe submit|wait|status --url URL --token-file F: the same commands through zkpipe-api
 * (docs/api.md) with libcurl. The token file holds the token on its first line and must not be
 * readable by others (as the server's tokens file). */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <nettle/base64.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "api/tokens.h"
#include "base/file.h"
#include "commands.h"
#include "spool/spool.h"

enum { API_INPUT_MAX = 256 << 20 };

typedef struct api_conn {
    CURL *curl;
    struct curl_slist *headers;
    char base[1024];
} api_conn_t;

typedef struct buf {
    char *p;
    size_t len;
} buf_t;

static size_t on_data(char *d, size_t sz, size_t n, void *user) {
    buf_t *b = user;
    size_t add = sz * n;
    if (b->len + add > API_INPUT_MAX) return 0;
    char *p = realloc(b->p, b->len + add + 1);
    if (!p) return 0;
    memcpy(p + b->len, d, add);
    b->p = p;
    b->len += add;
    p[b->len] = 0;
    return add;
}

/* The token on the first line of a file of mode 0600 or stricter, held to the server's rules for a
 * token (api/tokens.h), so that a token the server cannot hold is named here, not sent cut short. */
static int read_token(const char *path, char *tok, size_t cap) {
    struct stat st;
    char why[1200], *buf = NULL;
    size_t len = 0;
    int fd = file_open_regular(AT_FDCWD, path, FILE_NOFOLLOW, &st, why, sizeof why);
    if (fd < 0) return fprintf(stderr, "zkpipe: --token-file %s\n", why), -1;
    if (st.st_mode & 077) {
        fprintf(stderr, "zkpipe: --token-file %s: readable by others (chmod 0600 it)\n", path);
        close(fd);
        return -1;
    }
    int r = file_read_fd(fd, path, 65536, 0, &buf, &len, why, sizeof why);
    close(fd);
    if (r < 0) return fprintf(stderr, "zkpipe: --token-file %s\n", why), -1;
    size_t n = strcspn(buf, "\r\n");
    buf[n] = 0;
    int form = api_token_form(buf, n), rc = -1;
    if (!n)
        fprintf(stderr, "zkpipe: --token-file %s: no token on the first line\n", path);
    else if (form == -ERANGE || n >= cap)
        fprintf(stderr, "zkpipe: --token-file %s: the token on the first line has %zu characters: expected %d to %d\n",
                path, n, API_TOKEN_MIN, API_TOKEN_MAX);
    else if (form < 0)
        fprintf(stderr, "zkpipe: --token-file %s: the token on the first line: printable ASCII only, no spaces\n", path);
    else
        memcpy(tok, buf, n + 1), rc = 0;
    free(buf);
    return rc;
}

static int conn_open(api_conn_t *c, const char *url, const char *token_file) {
    memset(c, 0, sizeof *c);
    if (!token_file) return fprintf(stderr, "zkpipe: --url needs --token-file FILE\n"), -1;
    char tok[512], h[600];
    if (read_token(token_file, tok, sizeof tok) < 0) return -1;
    snprintf(c->base, sizeof c->base, "%s", url);
    size_t l = strlen(c->base);
    while (l && c->base[l - 1] == '/') c->base[--l] = 0;
    if (strncmp(c->base, "http://", 7) && strncmp(c->base, "https://", 8))
        return fprintf(stderr, "zkpipe: --url %s: expected http://HOST:PORT\n", url), -1;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    c->curl = curl_easy_init();
    snprintf(h, sizeof h, "Authorization: Bearer %s", tok);
    c->headers = curl_slist_append(c->headers, h);
    c->headers = curl_slist_append(c->headers, "Content-Type: application/json");
    c->headers = curl_slist_append(c->headers, "Expect:");
    return c->curl ? 0 : -1;
}

static void conn_close(api_conn_t *c) {
    curl_slist_free_all(c->headers);
    if (c->curl) curl_easy_cleanup(c->curl);
}

/* One request: the status, the answer parsed into *ret (NULL when not JSON); -1 when no answer came. */
static long request(api_conn_t *c, const char *method, const char *path, const char *body, long timeout_s,
                    json_object **ret) {
    char url[1400];
    snprintf(url, sizeof url, "%s%s", c->base, path);
    buf_t b = {0};
    CURL *h = c->curl;
    curl_easy_reset(h);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, c->headers);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, timeout_s);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    if (body) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
    }
    CURLcode rc = curl_easy_perform(h);
    long code = -1;
    if (rc != CURLE_OK) {
        fprintf(stderr, "zkpipe: %s %s: %s\n", method, url, curl_easy_strerror(rc));
    } else {
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
        *ret = b.p ? json_tokener_parse(b.p) : NULL;
    }
    free(b.p);
    return code;
}

static const char *str_of(json_object *o, const char *k) {
    json_object *v;
    return o && json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string)
               ? json_object_get_string(v)
               : NULL;
}

static int report_error(long code, json_object *o, const char *what) {
    const char *e = str_of(o, "error");
    fprintf(stderr, "zkpipe: %s: HTTP %ld%s%s\n", what, code, e ? ": " : "", e ? e : "");
    json_object_put(o);
    return code >= 500 || code < 0 ? 1 : 2;
}

static char *slurp(const char *path, size_t *ret_len) {
    FILE *f = fopen(path, "rb");
    if (!f) return fprintf(stderr, "zkpipe: %s: %s\n", path, strerror(errno)), NULL;
    buf_t b = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        if (on_data(chunk, 1, n, &b) != n) {
            fprintf(stderr, "zkpipe: %s: larger than %d MiB\n", path, API_INPUT_MAX >> 20);
            fclose(f);
            free(b.p);
            return NULL;
        }
    fclose(f);
    *ret_len = b.len;
    return b.p ? b.p : strdup("");
}

int zkpipe_api_submit(const char *url, const char *token_file, const char *circuit, const char *prio, bool inputs,
                      int n, char **files) {
    api_conn_t c;
    if (conn_open(&c, url, token_file) < 0) return 2;
    json_object *req = json_object_new_object(), *arr = json_object_new_array();
    json_object_object_add(req, "circuit", json_object_new_string(circuit));
    if (prio) json_object_object_add(req, "priority", json_object_new_string(prio));
    for (int k = 0; k < n; k++) {
        size_t len;
        char *d = slurp(files[k], &len);
        if (!d) return json_object_put(req), json_object_put(arr), conn_close(&c), 1;
        if (inputs) {
            json_object *v = json_tokener_parse(d);
            free(d);
            if (!v || !json_object_is_type(v, json_type_object)) {
                fprintf(stderr, "zkpipe: %s: not an input.json (a JSON object)\n", files[k]);
                json_object_put(v), json_object_put(req), json_object_put(arr), conn_close(&c);
                return 1;
            }
            json_object_array_add(arr, v);
        } else {
            char *b64 = malloc(BASE64_ENCODE_LENGTH(len) + BASE64_ENCODE_FINAL_LENGTH + 1);
            struct base64_encode_ctx e;
            base64_encode_init(&e);
            size_t m = base64_encode_update(&e, b64, len, (const uint8_t *)d);
            m += base64_encode_final(&e, b64 + m);
            free(d);
            json_object_array_add(arr, json_object_new_string_len(b64, (int)m));
            free(b64);
        }
    }
    json_object_object_add(req, inputs ? "inputs" : "witnesses", arr);
    json_object *ans = NULL;
    long code = request(&c, "POST", "/v1/jobs", json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN), 300, &ans);
    json_object_put(req);
    conn_close(&c);
    if (code != 202) return report_error(code, ans, "submit");
    const char *id = str_of(ans, "id");
    printf("submitted %d partition%s of circuit %s through %s\n%s\n", n, n == 1 ? "" : "s", circuit, url,
           id ? id : "?");
    json_object_put(ans);
    return id ? 0 : 1;
}

static int write_out(const char *dir, const char *kind, int k, json_object *v) {
    char path[1200];
    snprintf(path, sizeof path, "%s/%s-%d.json", dir, kind, k);
    const char *s = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PRETTY);
    if (file_write_atomic(path, s, strlen(s)) < 0) return fprintf(stderr, "zkpipe: cannot write %s\n", path), -1;
    printf("%s\n", path);
    return 0;
}

int zkpipe_api_wait(const char *url, const char *token_file, const char *out, double timeout, const char *id) {
    api_conn_t c;
    if (conn_open(&c, url, token_file) < 0) return 2;
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        double left = timeout < 0 ? 60 : timeout - (double)(now.tv_sec - t0.tv_sec);
        if (left < 0) left = 0;
        char path[256];
        snprintf(path, sizeof path, "/v1/jobs/%s?wait=%d", id, (int)(left > 60 ? 60 : left));
        json_object *j = NULL;
        long code = request(&c, "GET", path, NULL, (long)(left > 60 ? 60 : left) + 30, &j);
        if (code != 200) {
            conn_close(&c);
            return report_error(code, j, id);
        }
        const char *st = str_of(j, "state");
        if (st && !strcmp(st, "done")) {
            json_object *proofs;
            int rc = 0;
            if (out && json_object_object_get_ex(j, "proofs", &proofs))
                for (size_t k = 0; k < json_object_array_length(proofs) && rc == 0; k++) {
                    json_object *p = json_object_array_get_idx(proofs, k), *pr, *pu;
                    if (!json_object_object_get_ex(p, "proof", &pr) || !json_object_object_get_ex(p, "public", &pu) ||
                        write_out(out, "proof", (int)k, pr) < 0 || write_out(out, "public", (int)k, pu) < 0)
                        rc = 1;
                }
            else
                printf("%s\n", json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
            json_object_put(j);
            conn_close(&c);
            return rc;
        }
        if (st && (!strcmp(st, "failed") || !strcmp(st, "cancelled"))) {
            const char *e = str_of(j, "error");
            fprintf(stderr, "zkpipe: job %s %s: %s\n", id, st, e ? e : "(no reason recorded)");
            json_object_put(j);
            conn_close(&c);
            return 1;
        }
        json_object_put(j);
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (timeout >= 0 && (double)(now.tv_sec - t0.tv_sec) >= timeout) {
            fprintf(stderr, "zkpipe: job %s not finished after %.0f s (%s)\n", id, timeout, st ? st : "?");
            conn_close(&c);
            return 1;
        }
    }
}

int zkpipe_api_status(const char *url, const char *token_file, const char *id) {
    api_conn_t c;
    if (conn_open(&c, url, token_file) < 0) return 2;
    char path[256];
    snprintf(path, sizeof path, id ? "/v1/jobs/%s" : "/v1/circuits", id);
    json_object *j = NULL;
    long code = request(&c, "GET", path, NULL, 60, &j);
    conn_close(&c);
    if (code != 200) return report_error(code, j, id ? id : "circuits");
    if (id) {
        json_object *p, *f;
        json_object_object_get_ex(j, "partitions", &p);
        json_object_object_get_ex(j, "finished", &f);
        const char *e = str_of(j, "error");
        printf("job %s circuit %s priority %s state %s partitions %d finished %d%s%s\n", id, str_of(j, "circuit"),
               str_of(j, "priority"), str_of(j, "state"), json_object_get_int(p), json_object_get_int(f),
               e ? " error: " : "", e ? e : "");
    } else {
        json_object *a;
        json_object_object_get_ex(j, "circuits", &a);
        printf("api %s: %zu circuits\n", url, json_object_array_length(a));
        for (size_t k = 0; k < json_object_array_length(a); k++) {
            json_object *o = json_object_array_get_idx(a, k), *np;
            json_object_object_get_ex(o, "nPublic", &np);
            printf("circuit %s curve %s nPublic %d inputs %s\n", str_of(o, "name"), str_of(o, "curve"),
                   json_object_get_int(np),
                   str_of(o, "name") && json_object_get_boolean(json_object_object_get(o, "inputs")) ? "yes" : "no");
        }
    }
    json_object_put(j);
    return 0;
}
