/* zkpipe plan: the memory the ini's pipeline will hold, per circuit and per stage, against what the
 * machine has (docs/pipeline.md "Memory plan"). The figures are those the stages log at start:
 * each stage's parts of every key (plan/parts.c: circuits_parts, the bytes circuits_bytes
 * counts), the segment (shm_segment_size), gpud's window tables ([gpu] precompute, an upper
 * bound) and the CPU backend's proving scratch (zk_core_scratch_size of the largest domain).
 * On the CUDA backend each gpud's device memory is planned by gpud/cuda/devplan.c, the code the
 * backend plans every key with, against [gpu] device_memory or the device's free memory (NVML).
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
#include "exporter/nvml.h"
#include "gpud/cuda/devplan.h"
#include "plan/parts.h"
#include "plan/slab.h"
#include "shm/slab.h"
#include "zk/binfile.h"
#include "zk/groth16.h"

#define PLAN_USAGE "zkpipe plan [--config FILE]"

static double mib(uint64_t b) { return (double)b / 1048576.0; }

/* The device part (CUDA backend): per gpud, each circuit's plan as the backend makes it at
 * load_key, and all keys resident at once, against its device's budget. Fills p->dev_*. */
static void plan_devices(const cfg_t *c, const circuit_parts_t *parts, cli_plan_t *p, FILE *out) {
    bool nvml = nvml_init();
    if (out)
        fprintf(out, "device: each gpud plans every key as its CUDA backend does (gpud/cuda/devplan.c; CUB's "
                     "temporary storage estimated), against [gpu] device_memory or the device's free memory\n");
    for (uint32_t d = 0; d < c->gpu_devices; d++) {
        unsigned long long fr = 0, total = 0;
        bool have = nvml && nvml_memory(d, &fr, &total);
        size_t budget = SIZE_MAX;
        char src[200];
        if (have) {
            budget = zc_plan_budget(c->gpu_device_memory, 0, fr, total);
            snprintf(src, sizeof src, "device %u has %.1f of %.1f MiB free (NVML), less a reserve for the runtime%s", d,
                     mib(fr), mib(total), c->gpu_device_memory ? ", capped by [gpu] device_memory" : "");
        } else if (c->gpu_device_memory) {
            budget = c->gpu_device_memory;
            snprintf(src, sizeof src, "[gpu] device_memory (no device %u visible to NVML here)", d);
        } else
            snprintf(src, sizeof src,
                     "assumed: no [gpu] device_memory and no device %u visible to NVML here, so "
                     "each circuit's first plan, with no budget",
                     d);
        if (out) {
            if (budget == SIZE_MAX)
                fprintf(out, "gpud@%u: %s\n", d, src);
            else
                fprintf(out, "gpud@%u: budget %.1f MiB (%s)\n", d, mib(budget), src);
        }
        size_t keys = 0, rest = 0;
        uint32_t fit = 0;
        for (uint32_t i = 0; i < c->n_circuits; i++) {
            const circuit_parts_t *k = &parts[i];
            zc_plan_circuit_t pc = {k->curve, k->n_vars, k->n_pub, (uint32_t)__builtin_ctz(k->domain)};
            zc_dev_plan_t dp;
            int r = zc_plan_choose(&pc, budget, &zc_plan_cub_estimate, &dp);
            char line[300];
            if (r < 0 && r != -ENOMEM) {
                if (out)
                    fprintf(out, "  circuit %s: cannot run on the CUDA backend (an MSM too large to plan)\n",
                            c->circuits[i].name);
                continue;
            }
            zc_plan_describe(&pc, &dp, line, sizeof line);
            if (r == -ENOMEM) {
                if (out)
                    fprintf(out, "  circuit %s: does not fit: needs at least %.1f MiB (%s): short by %.1f MiB\n",
                            c->circuits[i].name, mib(dp.need), line, mib(dp.need - budget));
                if (dp.need - budget > p->dev_short) {
                    p->dev_short = dp.need - budget;
                    p->dev_budget = budget;
                    snprintf(p->dev_what, sizeof p->dev_what, "circuit %s on gpud@%u", c->circuits[i].name, d);
                }
                continue;
            }
            if (out)
                fprintf(out,
                        "  circuit %s: %s; pinned host %.1f MiB\n"
                        "    key points %.1f, per lane %.1f x %d (witness %.1f, a/b/c %.1f, window sums %.1f), MSM "
                        "workspace %.1f, NTT buffer %.1f, NTT tables %.1f, staging %.1f MiB\n",
                        c->circuits[i].name, line, mib(dp.pinned), dp.resident ? mib(dp.key) : 0.0,
                        mib(dp.wit + dp.abc + dp.win), ZC_PLAN_LANES, mib(dp.wit), mib(dp.abc), mib(dp.win), mib(dp.ws),
                        mib(dp.ntt), mib(dp.tables), mib(dp.stage + dp.sstage));
            fit++;
            if (dp.pinned > p->dev_pinned) p->dev_pinned = dp.pinned;
            keys += dp.resident ? dp.key : 0;
            if (dp.need - (dp.resident ? dp.key : 0) > rest) rest = dp.need - (dp.resident ? dp.key : 0);
        }
        if (!out || !fit) continue;
        fprintf(out,
                "gpud@%u: %.1f MiB with every resident key loaded at once (keys %.1f, the largest plan's "
                "buffers and tables %.1f)",
                d, mib(keys + rest), mib(keys), mib(rest));
        if (budget == SIZE_MAX)
            fprintf(out, "\n");
        else if (keys + rest <= budget)
            fprintf(out, ": fits the %.1f MiB budget\n", mib(budget));
        else
            fprintf(out,
                    ": more than the %.1f MiB budget, so keys are evicted and loaded again in turn (least "
                    "recently used first)\n",
                    mib(budget));
    }
}

int cli_plan(cfg_t *c, cli_plan_t *p, FILE *out, char *err, size_t errlen) {
    memset(p, 0, sizeof *p);
    if (slab_resolve_size(c, err, errlen) < 0) return -EINVAL;
    shm_geometry_t g = {.slabs = c->slabs, .jobs = c->jobs, .events = c->events, .slab_size = c->slab_size};
    p->segment = shm_segment_size(&g);
    bool cuda = c->backend == CFG_BACKEND_CUDA || c->backend == CFG_BACKEND_AUTO; /* cpu and replay pin nothing */
    static circuit_parts_t parts[CFG_MAX_CIRCUITS];
    for (uint32_t i = 0; i < c->n_circuits; i++) {
        const cfg_circuit_t *ci = &c->circuits[i];
        circuit_parts_t k;
        zk_err_t e = {{0}};
        if (circuits_parts(ci->zkey, &parts[i], &e) < 0) {
            snprintf(err, errlen, "%s:%d: [circuit %s]: %s", c->path, ci->line, ci->name, e.msg);
            return -EINVAL;
        }
        k = parts[i];
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
    if (cuda) plan_devices(c, parts, p, NULL);
    p->total = p->segment + c->synth_instances * p->synthd +
               c->gpu_devices * (p->gpud + p->tables + p->scratch + p->dev_pinned) +
               c->finalizer_instances * p->finalizerd;
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
    static const char *const backends[] = {[CFG_BACKEND_AUTO] = "auto",
                                           [CFG_BACKEND_CPU] = "cpu",
                                           [CFG_BACKEND_CUDA] = "cuda",
                                           [CFG_BACKEND_REPLAY] = "replay"};
    fprintf(out, "gpud: %u device%s (backend %s), each holds %.1f MiB of key points", c->gpu_devices,
            c->gpu_devices == 1 ? "" : "s", backends[c->backend], mib(p->gpud));
    if (!cuda)
        fprintf(out, ", window tables up to %.1f MiB ([gpu] precompute) and %.1f MiB of proving scratch",
                mib(p->tables), mib(p->scratch));
    fprintf(out, "\nfinalizerd: %u instance%s, each holds %.1f MiB of circuit files\n", c->finalizer_instances,
            c->finalizer_instances == 1 ? "" : "s", mib(p->finalizerd));
    if (cuda) {
        fprintf(out,
                "pinned: the slab data, %.1f MiB, registered by each gpud that runs the CUDA backend "
                "(cudaHostRegister; none on the CPU backend), and each gpud's own, %.1f MiB (window sums; the "
                "vectors of an NTT in blocks)\n",
                mib(p->pinned), mib(p->dev_pinned));
        cli_plan_t q = *p; /* printed once more, with the same figures */
        plan_devices(c, parts, &q, out);
    } else
        fprintf(out, "pinned: none (the %s backend registers no memory); device: none\n",
                c->backend == CFG_BACKEND_REPLAY ? "replay" : "CPU");
    if (p->dev_short)
        fprintf(out, "device: %s is short by %.1f MiB of device memory\n", p->dev_what, mib(p->dev_short));
    if (p->total <= p->available)
        fprintf(out, "host: %.1f MiB of the %.1f MiB available (MemAvailable): fits\n", mib(p->total),
                mib(p->available));
    else
        fprintf(out, "host: %.1f MiB, more than the %.1f MiB available (MemAvailable): short by %.1f MiB\n",
                mib(p->total), mib(p->available), mib(p->total - p->available));
    return 0;
}

int cli_plan_refusal(const cfg_t *c, const cli_plan_t *p, char *err, size_t errlen) {
    if (p->dev_short) {
        snprintf(err, errlen,
                 "the pipeline of %s does not fit its device: %s needs %.1f MiB more device memory than the %.1f "
                 "MiB budget, even with its key streamed and its NTT in blocks (zkpipe plan shows the plans)",
                 c->path, p->dev_what, mib(p->dev_short), mib(p->dev_budget));
        return -ENOMEM;
    }
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
                             "and whether the machine has it; on the CUDA backend also each gpud's device plan of\n"
                             "every circuit against [gpu] device_memory or the device's free memory (NVML). Exit 0\n"
                             "when it fits, 1 when it does not or the ini cannot be planned (one line on stderr), 2\n"
                             "on bad usage.",
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
    return p.total <= p.available && !p.dev_short ? 0 : 1;
}
