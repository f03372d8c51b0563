/* text_utf8_escape (base/text.c): every text the spool, the segment, /status and the fleet's
 * database are given is valid UTF-8 (issue 25, finding 3). Valid text passes unchanged, each byte
 * that is not part of a valid character becomes \xHH, and a cap never cuts a character or an
 * escape in two. */
#include <string.h>

#include "base/text.h"
#include "test.h"

static const char *esc(const char *in, size_t cap) {
    static char out[256];
    text_utf8_escape(in, out, cap);
    return out;
}

TEST(valid_text_unchanged) {
    const char *ok[] = {"",
                        "plain ascii: 1 + 1 = 2",
                        "caf\xc3\xa9",
                        "\xe2\x82\xac 5",
                        "\xf0\x9f\x98\x80",
                        "\xed\x9f\xbf",      /* U+D7FF, the last before the surrogates */
                        "\xf4\x8f\xbf\xbf"}; /* U+10FFFF */
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) CHECK_MSG(!strcmp(esc(ok[i], 256), ok[i]), "'%s'", ok[i]);
    return 0;
}

TEST(invalid_bytes_escaped) {
    CHECK(!strcmp(esc("{\"b\":\"\xff\xfe"
                      "1\"}",
                      256),
                  "{\"b\":\"\\xFF\\xFE1\"}"));
    CHECK(!strcmp(esc("\xc0\xaf", 256), "\\xC0\\xAF"));                   /* overlong '/' */
    CHECK(!strcmp(esc("\xe0\x80\xaf", 256), "\\xE0\\x80\\xAF"));          /* overlong, 3 bytes */
    CHECK(!strcmp(esc("\xed\xa0\x80", 256), "\\xED\\xA0\\x80"));          /* a surrogate */
    CHECK(!strcmp(esc("\xf4\x90\x80\x80", 256), "\\xF4\\x90\\x80\\x80")); /* above U+10FFFF */
    CHECK(!strcmp(esc("a\xc3", 256), "a\\xC3"));                          /* a character cut short at the end */
    CHECK(!strcmp(esc("\xe2\x82x", 256), "\\xE2\\x82x"));                 /* ... or in the middle */
    CHECK(!strcmp(esc("\x80 lone continuation", 256), "\\x80 lone continuation"));
    return 0;
}

TEST(cap_never_cuts) {
    CHECK(!strcmp(esc("ab\xc3\xa9", 4), "ab")); /* 'é' needs 2 bytes + NUL: left out whole */
    CHECK(!strcmp(esc("ab\xc3\xa9", 5), "ab\xc3\xa9"));
    CHECK(!strcmp(esc("a\xff", 5), "a")); /* the escape needs 4 bytes + NUL */
    CHECK(!strcmp(esc("a\xff", 6), "a\\xFF"));
    CHECK(!strcmp(esc("abc", 1), ""));
    return 0;
}

TEST(valid) {
    CHECK(text_utf8_valid("caf\xc3\xa9 \xf0\x9f\x98\x80"));
    CHECK(!text_utf8_valid("a\xff"));
    CHECK(!text_utf8_valid("\xed\xa0\x80"));
    return 0;
}
