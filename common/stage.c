/* The stages' common start-up (stage.h). */
#include "common/stage.h"

#include <stdio.h>

#include "common/log.h"
#include "common/spool.h"
#include "zk/kernels.h"

bool stage_init(int argc, char **argv, const char *name, const char *about, bool gpu, bool spool, daemon_args_t *args,
                cfg_t *cfg, int *ret_exit) {
    if (!daemon_parse_args(argc, argv, name, about, gpu, args, ret_exit)) return false;
    *ret_exit = 1;
    char ident[64], err[1200];
    snprintf(ident, sizeof ident, "%s@%d", name, args->instance);
    log_init(ident);
    daemon_signals_init();
    if (cfg_load(cfg, args->config, err, sizeof err) < 0 || cfg_resolve_slab_size(cfg, err, sizeof err) < 0) {
        log_err("Failed to load the configuration: %s", err);
        return false;
    }
    if (spool && spool_init(cfg->spool, err, sizeof err) < 0) {
        log_err("Failed to prepare the spool: %s", err);
        return false;
    }
    return true;
}

bool stage_attach(const cfg_t *cfg, shm_t *s, uint32_t role, uint32_t instance) {
    char err[1200];
    shm_geometry_t g = {.slabs = cfg->slabs, .jobs = cfg->jobs, .events = cfg->events, .slab_size = cfg->slab_size};
    if (shm_open_segment(s, cfg->segment, &g, true, err, sizeof err) < 0) {
        log_err("Failed to attach the segment: %s", err);
        return false;
    }
    if (shm_register(s, role, instance) < 0) {
        log_err("Failed to register in %s: process table full", cfg->segment);
        return false;
    }
    log_info("Field kernels: %s", zk_kernels_describe());
    return true;
}
