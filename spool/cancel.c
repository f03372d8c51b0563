/* Cancelling a job (spool/cancel.h). */
#include "cancel.h"

#include <errno.h>
#include <stdio.h>

#include "spool/spool.h"
#include "shm/shm.h"

int job_cancel(const cfg_t *c, const char *id, spool_place_t *ret_place, char *why, size_t whylen) {
    *ret_place = SPOOL_NOWHERE;
    shm_t s;
    char err[1200];
    int att = shm_open_segment(&s, c->segment, NULL, false, err, sizeof err);
    if (att < 0 && att != -ENOENT) {
        snprintf(why, whylen, "%s", err);
        return att;
    }
    att = att == 0;
    if (att) {
        int slot = shm_job_find(&s, id);
        if (slot >= 0 && shm_job_live(shm_job_state(&s.jobs[slot]))) {
            int r = shm_job_cancel(&s, (uint32_t)slot);
            shm_close(&s);
            return r < 0 ? -EALREADY : 1;
        }
        /* the lock's owner tag names our process slot: without one, every stage would take the
         * lock for a dead owner's and force it open */
        if (shm_register(&s, ROLE_CLI, 0) < 0) {
            snprintf(why, whylen, "%s: process table full; cannot take the registration lock", c->segment);
            shm_close(&s);
            return -EAGAIN;
        }
        shm_lock(&s);
    }
    int r = spool_cancel(c->spool, id, ret_place, why, whylen);
    if (att) {
        shm_unlock(&s);
        shm_bump(&s.hdr->job_seq);
        shm_close(&s);
    }
    return r;
}
