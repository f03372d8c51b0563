/* What /proc/self/smaps says of this process's mappings, for tests of memory advice. */
#pragma once
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The bytes of the mappings that overlap [from, to) and have "hg" (advised MADV_HUGEPAGE) in their
 * VmFlags; 0 when smaps cannot be read, so that a check for advice fails. */
static inline unsigned long long smaps_advised_bytes(uintptr_t from, uintptr_t to) {
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f) return 0;
    char line[512];
    unsigned long long lo = 0, hi = 0, n = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long long a, b;
        if (sscanf(line, "%llx-%llx ", &a, &b) == 2) /* a mapping's first line; its fields are "Name: ..." */
            lo = a, hi = b;
        else if (!strncmp(line, "VmFlags:", 8) && strstr(line, " hg") && lo < to && hi > from)
            n += hi - lo;
    }
    fclose(f);
    return n;
}
