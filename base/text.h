/* The ground floor's text helpers: UTF-8 checks and the escaper every writer of text meant for a
 * reader (result.json, the segment's error texts, /status, the fleet's database) goes through.
 * Nothing here allocates, logs or depends on another folder of the project. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

/* Whether s (NUL-terminated) is valid UTF-8 (RFC 3629: no overlong forms, no surrogates, at most
 * U+10FFFF). */
bool text_utf8_valid(const char *s);
/* Copies in into out (cap bytes, always terminated, never cutting a character or an escape), each
 * byte that is not part of valid UTF-8 written as \xHH: the copy is valid UTF-8 whatever bytes a
 * hostile input put in an error message, and valid text passes unchanged. */
void text_utf8_escape(const char *in, char *out, size_t cap);
