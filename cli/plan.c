/* zkpipe plan: the memory the ini's pipeline will hold, per circuit and per stage, against what the
 * machine has (docs/pipeline.md "Memory plan"). The figures are those the stages log at start:
 * each stage's parts of every key (plan/parts.c: circuits_parts, the bytes circuits_bytes
 * counts), the segment (shm_segment_size), gpud's window tables ([gpu] precompute, an upper
 * bound) and the CPU backend's proving scratch (zk_core_scratch_size of the largest domain).
 * zkpipe setup runs the same plan before it creates a segment and refuses one that does not fit. */
#include "plan.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "client.h"
#include "commands.h"
#include "plan/parts.h"
#include "plan/slab.h"
#include "shm/slab.h"
#include "zk/binfile.h"
#include "zk/groth16.h"

#define PLAN_USAGE "zkpipe plan [--config FILE]"

static double mib(uint64_t b) { return (double)b / 1048576.0; }

int cli_plan(cfg_t *c, cli_plan_t *p, FILE *out, char *err, size_t errlen) {
    memset(p, 0, sizeof *p);
    if (slab_resolve_size(c, err, errlen) < 0) return -EINVAL;
    shm_geometry_t g = {.slabs = c->slabs, .jobs = c->jobs, .events = c->events, .slab_size = c->slab_size};
    p->segment = shm_segment_size(&g);
    bool cuda = c->backend == CFG_BACKEND_CUDA || c->backend == CFG_BACKEND_AUTO; /* cpu and replay pin nothing */
    for (uint32_t i = 0; i < c->n_circuits; i++) {
        const cfg_circuit_t *ci = &c->circuits[i];
        circuit_parts_t k;
        zk_err_t e = {{0}};
        if (circuits_parts(ci->zkey, &k, &e) < 0) {
            snprintf(err, errlen, "%s:%d: [circuit %s]: %s", c->path, ci->line, ci->name, e.msg);
            return -EINVAL;
        }
        uint64_t r1cs = 0;
        if (ci->r1cs[0]) {
            struct stat st;
            if (stat(ci->r1cs, &st) < 0) {
                snprintf(err, errlen, "%s:%d: [circuit %s]: %s: %s", c->path, ci->line, ci->name, ci->r1cs,
                         strerror(errno));
                return -EINVAL;
            }
            r1cs = (uint64_t)st.st_size;
        }
        p->synthd += k.held[CIRCUIT_SYNTHD] + r1cs;
        p->gpud += k.held[CIRCUIT_GPUD];
        p->finalizerd += k.held[CIRCUIT_FINALIZERD];
        zk_zkey_t z = {.curve = k.curve, .domain_size = k.domain};
        uint64_t scratch = zk_core_scratch_size(&z);
        if (!cuda && scratch > p->scratch) p->scratch = scratch;
        if (out)
            fprintf(out,
                    "circuit %s (%s, %u wires, domain 2^%u): key %.1f MiB; held by synthd %.1f MiB (coefs%s), gpud "
                    "%.1f MiB (points), finalizerd %.1f MiB (header, IC); slabs of %.0f MiB\n",
                    ci->name, k.curve->name, k.n_vars, (unsigned)__builtin_ctz(k.domain), mib(k.file_size),
                    mib(k.held[CIRCUIT_SYNTHD] + r1cs), r1cs ? " and the r1cs" : "", mib(k.held[CIRCUIT_GPUD]),
                    mib(k.held[CIRCUIT_FINALIZERD]),
                    mib(align_up(shm_slab_layout(k.n_vars, k.domain).bytes, SHM_SLAB_ALIGN)));
    }
    p->tables = cuda ? 0 : c->gpu_precompute;
    p->pinned = cuda ? (uint64_t)c->slabs * c->slab_size : 0;
    p->total = p->segment + c->synth_instances * p->synthd +
               c->gpu_devices * (p->gpud + p->tables + p->scratch) + c->finalizer_instances * p->finalizerd;
    p->available = zk_mem_available();
    if (!out) return 0;
    char dir[CFG_PATH_MAX];
    snprintf(dir, sizeof dir, "%s", c->segment);
    struct statvfs vfs;
    bool have_fs = statvfs(dirname(dir), &vfs) == 0;
    fprintf(out, "segment %s: %u slabs of %.0f MiB, %.1f MiB in all, shared by every stage", c->segment, c->slabs,
            mib(c->slab_size), mib(p->segment));
    if (have_fs) fprintf(out, " (%s has %.1f MiB free)", dir, mib((uint64_t)vfs.f_bavail * vfs.f_frsize));
    fprintf(out, "\nsynthd: %u instance%s, each holds %.1f MiB of circuit files\n", c->synth_instances,
            c->synth_instances == 1 ? "" : "s", mib(p->synthd));
    static const char *const backends[] = {[CFG_BACKEND_AUTO] = "auto", [CFG_BACKEND_CPU] = "cpu",
                                           [CFG_BACKEND_CUDA] = "cuda", [CFG_BACKEND_REPLAY] = "replay"};
    fprintf(out, "gpud: %u device%s (backend %s), each holds %.1f MiB of key points", c->gpu_devices,
            c->gpu_devices == 1 ? "" : "s", backends[c->backend], mib(p->gpud));
    if (!cuda)
        fprintf(out, ", window tables up to %.1f MiB ([gpu] precompute) and %.1f MiB of proving scratch",
                mib(p->tables), mib(p->scratch));
    fprintf(out, "\nfinalizerd: %u instance%s, each holds %.1f MiB of circuit files\n", c->finalizer_instances,
            c->finalizer_instances == 1 ? "" : "s", mib(p->finalizerd));
    if (cuda)
        fprintf(out,
                "pinned: the slab data, %.1f MiB, registered by each gpud that runs the CUDA backend "
                "(cudaHostRegister; none on the CPU backend)\n"
                "device: planned by each gpud at start against its device's free memory ([gpu] device_memory caps "
                "it; its log line gives the plan): at least one circuit's points, %.1f MiB in all, to keep keys "
                "resident\n",
                mib(p->pinned), mib(p->gpud));
    else
        fprintf(out, "pinned: none (the %s backend registers no memory); device: none\n",
                c->backend == CFG_BACKEND_REPLAY ? "replay" : "CPU");
    if (p->total <= p->available)
        fprintf(out, "host: %.1f MiB of the %.1f MiB available (MemAvailable): fits\n", mib(p->total),
                mib(p->available));
    else
        fprintf(out, "host: %.1f MiB, more than the %.1f MiB available (MemAvailable): short by %.1f MiB\n",
                mib(p->total), mib(p->available), mib(p->total - p->available));
    return 0;
}

int cli_plan_refusal(const cfg_t *c, const cli_plan_t *p, char *err, size_t errlen) {
    if (p->total <= p->available) return 0;
    snprintf(err, errlen,
             "the pipeline of %s needs %.1f MiB of host memory (segment %.1f; synthd %u x %.1f; gpud %u x %.1f; "
             "finalizerd %u x %.1f), %.1f MiB are available (MemAvailable): short by %.1f MiB (zkpipe plan "
             "shows the parts)",
             c->path, mib(p->total), mib(p->segment), c->synth_instances, mib(p->synthd), c->gpu_devices,
             mib(p->gpud + p->tables + p->scratch), c->finalizer_instances, mib(p->finalizerd), mib(p->available),
             mib(p->total - p->available));
    return -ENOMEM;
}

int zkpipe_cmd_plan(int argc, char **argv) {
    const char *config;
    int parsed = cli_options(argc, argv, PLAN_USAGE,
                             "Prints, per circuit and per stage, the memory the ini's pipeline will hold (the parts\n"
                             "of each key every stage keeps, the segment, gpud's tables and scratch, pinned memory)\n"
                             "and whether the machine has it. Exit 0 when it fits, 1 when it does not or the ini\n"
                             "cannot be planned (one line on stderr), 2 on bad usage.",
                             NULL, &config);
    if (parsed >= 0) return parsed;
    if (optind != argc) return cli_usage_error(PLAN_USAGE);
    cfg_t c;
    if (cli_load_config(config, &c) < 0) return 1;
    cli_plan_t p;
    char err[1600];
    if (cli_plan(&c, &p, stdout, err, sizeof err) < 0) {
        fprintf(stderr, "zkpipe: %s\n", err);
        return 1;
    }
    if (fflush(stdout) != 0) return 1;
    return p.total <= p.available ? 0 : 1;
}
