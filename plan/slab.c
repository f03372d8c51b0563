/* Slab sizing (plan/slab.h). */
#include "plan/slab.h"

#include <errno.h>
#include <stdio.h>

#include "shm/slab.h"
#include "plan/parts.h"

int slab_resolve_size(cfg_t *c, char *err, size_t errlen) {
    uint64_t need = 0;
    for (uint32_t i = 0; i < c->n_circuits; i++) {
        const cfg_circuit_t *ci = &c->circuits[i];
        /* the key's header and section table only: no section of a large key is read here */
        circuit_parts_t k;
        zk_err_t e = {{0}};
        int r = circuits_parts(ci->zkey, &k, &e);
        if (r < 0) {
            snprintf(err, errlen, "%s:%d: [circuit %s]: %s", c->path, ci->line, ci->name, e.msg);
            return r;
        }
        uint64_t n = align_up(shm_slab_layout(k.n_vars, k.domain).bytes, SHM_SLAB_ALIGN);
        if (!c->slab_size_auto && n > c->slab_size) {
            snprintf(err, errlen, "%s:%d: [circuit %s] needs slabs of %llu MiB, slab_size is %llu MiB", c->path,
                     ci->line, ci->name, (unsigned long long)(n >> 20), (unsigned long long)(c->slab_size >> 20));
            return -E2BIG;
        }
        if (n > need) need = n;
    }
    if (c->slab_size_auto) {
        if (!need) {
            snprintf(err, errlen, "%s: slab_size = auto needs at least one [circuit NAME] section", c->path);
            return -EINVAL;
        }
        c->slab_size = need;
    }
    return 0;
}
