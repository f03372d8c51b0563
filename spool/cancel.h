/* Cancelling a job, the one way (zkpipe cancel, zkpipe-api's DELETE): a job a synthd registered is
 * cancelled in the segment (its partitions are dropped at their next step, the finalizer writes
 * failed/ID with status cancelled); one not registered yet is moved from the spool to failed/ under
 * the segment's registration lock, so that no synthd registers it meanwhile. */
#pragma once
#include <stddef.h>

#include "spool/spool.h"
#include "config/config.h"

/* 1: cancelling in the segment; 0: cancelled in the spool; -EALREADY: it is failing or has finished
 * (*ret_place SPOOL_DONE or SPOOL_FAILED, or SPOOL_NOWHERE while it is still failing in the
 * segment); -ESRCH: no such job; another negative errno: why says what failed. */
int job_cancel(const cfg_t *c, const char *id, spool_place_t *ret_place, char *why, size_t whylen);
