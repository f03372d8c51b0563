/* UTF-8 checks and the escaper (base/text.h). */
#include "text.h"

#include <stdio.h>
#include <string.h>

/* The length of the valid UTF-8 character at p, 0 when the bytes there are none. */
static size_t utf8_char(const unsigned char *p) {
    unsigned char c = p[0];
    if (c < 0x80) return 1;
    size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    unsigned char lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80, hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
    if (!n || p[1] < lo || p[1] > hi) return 0;
    for (size_t k = 2; k < n; k++)
        if ((p[k] & 0xc0) != 0x80) return 0;
    return n;
}

bool text_utf8_valid(const char *s) {
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t n = utf8_char(p);
        if (!n) return false;
        p += n;
    }
    return true;
}

void text_utf8_escape(const char *in, char *out, size_t cap) {
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)in; *p && cap;) {
        size_t n = utf8_char(p);
        char esc[5];
        const char *put = (const char *)p;
        if (!n) {
            snprintf(esc, sizeof esc, "\\x%02X", *p);
            put = esc;
        }
        size_t len = n ? n : 4;
        if (o + len >= cap) break;
        memcpy(out + o, put, len);
        o += len;
        p += n ? n : 1;
    }
    if (cap) out[o] = 0;
}
