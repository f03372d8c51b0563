/* Facts the ini, the spool's job.ini and the segment share, defined once here at the bottom of the
 * include graph (config/ includes nothing of the pipeline; shm/, common/ and the stages include
 * this): job priorities and the slab alignment. */
#pragma once

/* Job priorities. Lower value = served first; CRITICAL work may use the reserved slabs. */
typedef enum { CFG_PRIO_CRITICAL = 0, CFG_PRIO_HIGH = 1, CFG_PRIO_NORMAL = 2, CFG_PRIO_LOW = 3 } cfg_priority_t;
#define CFG_PRIO_COUNT 4

/* "CRITICAL" ... "LOW" (case-insensitive) -> 0..3, or -EINVAL. */
int cfg_parse_priority(const char *s);
const char *cfg_priority_name(int p);

/* Slab sizes, and the offset of slab data in the segment, are multiples of 2 MiB (huge pages,
 * cudaHostRegister). */
#define CFG_SLAB_ALIGN (2u << 20)
