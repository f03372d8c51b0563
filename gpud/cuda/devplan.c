/* The device-memory plan of the CUDA backend (devplan.h; docs/cuda.md, "Device memory"): one piece
 * of code for gpud's CUDA backend and for zkpipe plan. */
#include "gpud/cuda/devplan.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int cub_estimate(zc_msm_plan *p, void *arg) {
    (void)arg;
    p->sort_tmp = 8 * p->m + p->m / 8 + 4096;
    p->scan_tmp = 4096 + (p->nbt + 1) / 8;
    return 0;
}
const zc_plan_cub_t zc_plan_cub_estimate = {cub_estimate, NULL};

static size_t max_sz(size_t a, size_t b) { return a > b ? a : b; }

size_t zc_plan_budget(size_t cap, size_t held, size_t free, size_t total) {
    size_t reserve = total / 32 < ((size_t)256 << 20) ? total / 32 : (size_t)256 << 20;
    size_t b = held + (free > reserve ? free - reserve : 0);
    return cap && cap < b ? cap : b;
}

size_t zc_plan_tables_bytes(uint32_t logn, bool blocked, uint32_t log_rows) {
    size_t n = (size_t)1 << logn;
    uint32_t split = (logn + 1) / 2;
    size_t halves = ((size_t)1 << split) + ((size_t)1 << (logn - split)); /* a power table as lo/hi halves */
    if (!blocked) /* twiddles of 2^logn both ways (n/2 each), the coset factors' halves (ntt.cuh) */
        return (2 * max_sz(n / 2, 1) + halves) * 32;
    /* twiddles of the rows' and the columns' NTTs both ways, ω^e and ω^-e and the coset factors as halves */
    size_t r = (size_t)1 << log_rows, c = (size_t)1 << (logn - log_rows);
    return (2 * max_sz(r / 2, 1) + 2 * max_sz(c / 2, 1) + 3 * halves) * 32;
}

static int msm(const zc_plan_cub_t *cub, zc_msm_plan *p, size_t count, uint32_t chunk) {
    zc_msm_geometry(p, (uint32_t)(count < chunk ? count : chunk), 0);
    if (p->m > UINT32_MAX - ZC_MSM_K) return -E2BIG; /* keys are indexed by 32-bit offsets (msm.cuh) */
    return cub->sizes(p, cub->arg);
}

int zc_plan_needs(const zc_plan_circuit_t *k, uint32_t chunk, bool resident, uint32_t ntt_block,
                  const zc_plan_cub_t *cub, zc_dev_plan_t *p) {
    memset(p, 0, sizeof *p);
    size_t n = (size_t)1 << k->log_domain, nv = k->n_vars, nc = nv - k->n_pub - 1;
    size_t g1 = k->curve->g1_size, g2 = k->curve->g2_size, x1 = 4 * k->curve->n8q, x2 = 8 * k->curve->n8q;
    int r;
    if ((r = msm(cub, &p->pv1, nv, chunk)) < 0 || (r = msm(cub, &p->pv2, nv, chunk)) < 0 ||
        (r = msm(cub, &p->pc1, nc, chunk)) < 0 || (r = msm(cub, &p->ph1, n, chunk)) < 0)
        return r;
    p->chunk = chunk;
    p->resident = resident;
    p->ntt_block = ntt_block;
    p->log_rows = k->log_domain / 2;
    /* one workspace for the five MSMs (run one after another); its size is not monotone in the
     * points (the window changes with them), so every plan counts; a chunk's tail has the window
     * of its full chunks and needs no more */
    p->ws = max_sz(max_sz(zc_msm_ws_bytes(&p->pv1, x1), zc_msm_ws_bytes(&p->pv2, x2)),
                   max_sz(zc_msm_ws_bytes(&p->pc1, x1), zc_msm_ws_bytes(&p->ph1, x1)));
    p->win = (2 * (size_t)p->pv1.nw + p->pc1.nw + p->ph1.nw) * x1 + (size_t)p->pv2.nw * x2;
    p->key = nv * (2 * g1 + g2) + nc * g1 + n * g1;
    size_t top = max_sz(nv, n), step = top < chunk ? top : chunk;
    p->stage = resident ? 0 : step * g2;
    if (!ntt_block) {
        p->wit = nv * 32;
        p->abc = 3 * n * 32;
        p->ntt = n * 32;
        p->tables = zc_plan_tables_bytes(k->log_domain, false, 0);
    } else {
        p->ntt = 4 * (size_t)ntt_block * 32; /* a block of a, b and c, and one to permute into */
        p->tables = zc_plan_tables_bytes(k->log_domain, true, p->log_rows);
        p->sstage = step * 32;
    }
    p->need = (resident ? p->key : 0) + ZC_PLAN_LANES * (p->wit + p->abc + p->win) + p->ws + p->ntt + p->tables +
              p->stage + p->sstage;
    p->pinned = ZC_PLAN_LANES * p->win + (ntt_block ? 3 * n * 32 : 0);
    return 0;
}

/* the next power of two below chunk (below top itself when top is not one), at least ZC_MIN_CHUNK */
static uint32_t next_chunk(uint32_t chunk) {
    uint32_t p = 1u << (31 - __builtin_clz(chunk));
    chunk = p == chunk ? chunk / 2 : p;
    return chunk < ZC_MIN_CHUNK ? ZC_MIN_CHUNK : chunk;
}

int zc_plan_choose(const zc_plan_circuit_t *k, size_t budget, const zc_plan_cub_t *cub, zc_dev_plan_t *p) {
    size_t n = (size_t)1 << k->log_domain, top = max_sz(k->n_vars, n);
    uint32_t first = (uint32_t)max_sz(top, 1);
    zc_dev_plan_t least;
    memset(&least, 0, sizeof least);
    /* the smallest block: one row of the columns' side (the longer), 2^(log_domain − log_rows) */
    size_t min_block = (size_t)1 << (k->log_domain - k->log_domain / 2);
    for (int blocked = 0; blocked <= 1; blocked++)
        for (int resident = 1; resident >= 0; resident--)
            for (uint32_t chunk = first;; chunk = next_chunk(chunk)) {
                for (size_t b = blocked ? n : 0;; b /= 2) {
                    int r = zc_plan_needs(k, chunk, resident, (uint32_t)b, cub, p);
                    if (r == -E2BIG) break; /* too many keys for the kernels' offsets: smaller chunks */
                    if (r < 0) return r;
                    p->budget = budget;
                    if (p->need <= budget) return 0;
                    if (!least.need || p->need < least.need) least = *p;
                    if (!blocked || b <= min_block || k->log_domain == 0) break;
                }
                if (chunk <= ZC_MIN_CHUNK) break;
            }
    *p = least;
    return -ENOMEM;
}

void zc_plan_describe(const zc_plan_circuit_t *k, const zc_dev_plan_t *p, char *buf, size_t len) {
    size_t top = max_sz(k->n_vars, (size_t)1 << k->log_domain);
    char chunks[64], ntt[128];
    if (p->chunk >= top)
        snprintf(chunks, sizeof chunks, "MSMs not chunked");
    else
        snprintf(chunks, sizeof chunks, "MSMs in chunks of %u points", p->chunk);
    if (!p->ntt_block)
        snprintf(ntt, sizeof ntt, "NTT whole");
    else
        snprintf(ntt, sizeof ntt, "NTT in blocks of %u elements (2^%u rows x 2^%u columns), scalars streamed",
                 p->ntt_block, p->log_rows, k->log_domain - p->log_rows);
    snprintf(buf, len, "key points %s (%.1f MiB), %s, %s; %.1f MiB", p->resident ? "resident" : "streamed",
             p->key / 1048576.0, chunks, ntt, p->need / 1048576.0);
}
