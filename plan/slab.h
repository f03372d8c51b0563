/* Slab sizing from the configured circuits (the layout itself is shm/slab.h). */
#pragma once
#include <stddef.h>

#include "config/config.h"

/* Resolves [pipeline] slab_size = auto: the largest slab any configured circuit needs, rounded up
 * to 2 MiB; when slab_size was given, checks that every circuit fits. Errors name the ini line. */
int slab_resolve_size(cfg_t *c, char *err, size_t errlen);
