/* Decimal I/O of little-endian multi-limb integers, for the JSON formats. */
#include <errno.h>

#include "field.h"

size_t zk_bigint_to_dec(const uint64_t *l, int n, char *out) {
    uint64_t t[8];
    memcpy(t, l, (size_t)n * 8);
    char buf[200];
    size_t len = 0;
    for (;;) {
        /* t /= 10^19, collecting the remainder */
        unsigned __int128 rem = 0;
        bool nz = false;
        for (int i = n - 1; i >= 0; i--) {
            unsigned __int128 cur = (rem << 64) | t[i];
            t[i] = (uint64_t)(cur / 10000000000000000000ULL);
            rem = cur % 10000000000000000000ULL;
            nz |= t[i] != 0;
        }
        uint64_t r = (uint64_t)rem;
        for (int d = 0; d < 19; d++) {
            buf[len++] = (char)('0' + r % 10);
            r /= 10;
            if (!nz && r == 0) break;
        }
        if (!nz) break;
    }
    while (len > 1 && buf[len - 1] == '0') len--;
    for (size_t i = 0; i < len; i++) out[i] = buf[len - 1 - i];
    out[len] = 0;
    return len;
}

int zk_bigint_from_dec(const char *s, uint64_t *l, int n) {
    memset(l, 0, (size_t)n * 8);
    if (!*s) return -EINVAL;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return -EINVAL;
        unsigned __int128 c = (unsigned)(*s - '0');
        for (int i = 0; i < n; i++) {
            c += (unsigned __int128)l[i] * 10;
            l[i] = (uint64_t)c;
            c >>= 64;
        }
        if (c) return -ERANGE;
    }
    return 0;
}

bool zk_bigint_lt(const uint64_t *a, const uint64_t *b, int n) {
    for (int i = n - 1; i >= 0; i--) {
        if (a[i] != b[i]) return a[i] < b[i];
    }
    return false;
}
