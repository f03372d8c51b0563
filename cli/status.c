/* zkpipe status: the segment's slabs, counters, processes and jobs, and the spool's places; with a
 * JOB, that job's partitions and result. Exit 1 when the segment exists but cannot be read. */
#include <stdio.h>
#include <string.h>

#include "exporter/observe.h"
#include "client.h"
#include "commands.h"
#include "spool/spool.h"

#define STATUS_USAGE "zkpipe status [--config FILE] [JOB] | --dsn DSN | --url URL --token-file F [JOB]"

static void print_counters(shm_t *s) {
    printf(
        "counters: synthesized %llu proved %llu finalized %llu partitions_failed %llu jobs_done %llu jobs_failed %llu "
        "reclaimed %llu trims %llu verify_failed %llu bytes_copied %llu disk_full %llu\n",
        (unsigned long long)shm_counter(s, CNT_SYNTHESIZED), (unsigned long long)shm_counter(s, CNT_PROVED),
        (unsigned long long)shm_counter(s, CNT_FINALIZED), (unsigned long long)shm_counter(s, CNT_PART_FAILED),
        (unsigned long long)shm_counter(s, CNT_JOBS_DONE), (unsigned long long)shm_counter(s, CNT_JOBS_FAILED),
        (unsigned long long)shm_counter(s, CNT_RECLAIMED), (unsigned long long)shm_counter(s, CNT_TRIMS),
        (unsigned long long)shm_counter(s, CNT_VERIFY_FAILED), (unsigned long long)shm_counter(s, CNT_BYTES_COPIED),
        (unsigned long long)shm_counter(s, CNT_DISK_FULL));
    uint64_t sp = shm_counter(s, CNT_SYNTHESIZED), pr = shm_counter(s, CNT_PROVED), fi = shm_counter(s, CNT_FINALIZED);
    printf("stage times: synth %.1f ms/partition, gpu %.1f ms/partition, finalize %.1f ms/partition\n",
           sp ? shm_counter(s, CNT_SYNTH_BUSY_NS) / 1e6 / sp : 0.0, pr ? shm_counter(s, CNT_GPU_BUSY_NS) / 1e6 / pr : 0.0,
           fi ? shm_counter(s, CNT_FIN_BUSY_NS) / 1e6 / fi : 0.0);
}

static void print_job(shm_t *s, uint32_t i, bool parts) {
    shm_job_t *j = &s->jobs[i];
    uint32_t cnt[PART_NSTATES];
    shm_part_counts(s, i, cnt);
    const char *err = shm_job_error(j);
    printf("job %s circuit %s priority %s state %s partitions %u done %u inflight %u pending %u failed %u dropped "
           "%u%s%s\n",
           j->id, j->circuit, cfg_priority_name((int)j->prio), shm_job_state_name(shm_job_state(j)), j->n_parts,
           cnt[PART_DONE], cnt[PART_INFLIGHT], cnt[PART_PENDING], cnt[PART_FAILED], cnt[PART_DROPPED],
           err[0] ? " error: " : "", err);
    if (!parts) return;
    for (uint32_t k = 0; k < j->n_parts; k++) {
        shm_part_t *p = &j->parts[k];
        uint32_t st = shm_part_state(p), slab = shm_part_slab(p);
        printf("  partition %u %s", k, shm_part_state_name(st));
        if (slab != SHM_NONE) printf(" slab %u", slab);
        printf(" synth %.1f ms gpu %.1f ms finalize %.1f ms synthesized %u times, proved %u times, GPU lost %u times\n",
               atomic_load_explicit(&p->synth_ns, memory_order_relaxed) / 1e6,
               atomic_load_explicit(&p->gpu_ns, memory_order_relaxed) / 1e6,
               atomic_load_explicit(&p->fin_ns, memory_order_relaxed) / 1e6,
               atomic_load_explicit(&p->synth_count, memory_order_relaxed),
               atomic_load_explicit(&p->prove_count, memory_order_relaxed),
               atomic_load_explicit(&p->lost_count, memory_order_relaxed));
    }
}

static int job_status(const cfg_t *c, shm_t *s, int att, const char *id) {
    int slot = att == 1 ? shm_job_find(s, id) : -1;
    if (slot >= 0) print_job(s, (uint32_t)slot, true);
    spool_place_t place = spool_job_place(c->spool, id);
    if (spool_place_ended(place)) {
        char dir[1400], status[32], error[1024];
        uint32_t n;
        spool_path(dir, sizeof dir, c->spool, place, id);
        if (cli_read_result(dir, status, sizeof status, error, sizeof error, &n) == 0)
            printf("result %s/result.json status %s%s%s\n", dir, status, error[0] ? " error: " : "", error);
    } else if (place != SPOOL_NOWHERE && slot < 0) {
        printf("job %s is in %s/%s, not yet registered by a synthd\n", id, c->spool, spool_place_name(place));
    }
    if (place == SPOOL_NOWHERE && slot < 0) {
        fprintf(stderr, "zkpipe: no job %s\n", id);
        return 1;
    }
    return 0;
}

static void segment_status(const cfg_t *c, shm_t *s) {
    shm_header_t *h = s->hdr;
    printf("segment %s: %u slabs of %llu MiB, %u job records, generation %016llx\n", s->path, h->n_slabs,
           (unsigned long long)(h->slab_size >> 20), h->n_jobs, (unsigned long long)h->generation);
    uint32_t counts[SLAB_NSTATES];
    shm_slab_counts(s, counts);
    printf("slabs:");
    for (int i = 0; i < SLAB_NSTATES; i++) printf(" %s %u", shm_slab_state_name(i), counts[i]);
    printf("\n");
    print_counters(s);
    uint64_t now = shm_now_ns();
    uint32_t held = 0;
    uint64_t held_since = 0;
    for (uint32_t i = 0; i < SHM_MAX_PROCS; i++) {
        shm_proc_info_t p;
        if (!shm_proc_info(s, i, &p)) continue;
        uint64_t up = now - p.started_ns;
        printf("process %s@%u pid %u %s heartbeat %.1f s ago busy %.1f%%", shm_role_name(p.role), p.instance, p.pid,
               p.alive ? "alive" : "dead", (now - p.heartbeat_ns) / 1e9, up ? 100.0 * p.busy_ns / up : 0.0);
        if (p.cur_slab != SHM_NONE) printf(" slab %u", p.cur_slab);
        if (p.role == ROLE_GPUD)
            printf(" device %s proved %llu", p.device[0] ? p.device : "?", (unsigned long long)p.steps);
        if (p.alive && p.disk_wait) printf(" holding %u proofs for spool space", p.disk_wait);
        printf("\n");
        if (p.alive && p.compile_since_ns)
            printf("compiling circuit %s (since %.0f s, synthd %u)\n", p.compiling,
                   now > p.compile_since_ns ? (now - p.compile_since_ns) / 1e9 : 0.0, p.instance);
        if (p.alive && p.disk_wait) {
            held += p.disk_wait;
            if (!held_since || p.disk_wait_since_ns < held_since) held_since = p.disk_wait_since_ns;
        }
    }
    if (held)
        printf("disk: full: %u proofs wait for space in the spool (for %.1f s)\n", held,
               held_since ? (now - held_since) / 1e9 : 0.0);
    else
        printf("disk: ok\n");
    obs_advice_t a;
    if (obs_advise(s, c, &a) == 0) printf("advice: %s (zkpipe advise)\n", a.text);
    for (uint32_t i = 0; i < h->n_jobs; i++)
        if (shm_job_state(&s->jobs[i]) != JOB_FREE) print_job(s, i, false);
}

int zkpipe_cmd_status(int argc, char **argv) {
    const char *config, *dsn = NULL, *url = NULL, *token_file = NULL;
    const cli_option_t opts[] = {
        {"dsn", 'D', "DSN", &dsn}, {"url", 'U', "URL", &url}, {"token-file", 'K', "F", &token_file}, {0}};
    int parsed = cli_options(argc, argv, STATUS_USAGE, NULL, opts, &config);
    if (parsed >= 0) return parsed;
    if (optind + 1 < argc || (dsn && optind < argc)) return cli_usage_error(STATUS_USAGE);
#ifdef ZKPIPE_FLEET
    if (dsn) return zkpipe_fleet_status(dsn);
#endif
    if (dsn) return fprintf(stderr, "zkpipe: --dsn: built without libpq (the fleet queue)\n"), 2;
    if (url) return CLI_API(zkpipe_api_status(url, token_file, optind < argc ? argv[optind] : NULL));
    const char *id = optind < argc ? argv[optind] : NULL;
    cfg_t c;
    if (cli_load_config(config, &c) < 0) return 2;
    shm_t s;
    int att = cli_attach(&c, &s, false);
    int rc = att < 0 ? 1 : 0;
    if (id) {
        if (job_status(&c, &s, att, id)) rc = 1;
        if (att == 1) shm_close(&s);
        return rc;
    }
    printf("pipeline %s spool %s\n", c.name, c.spool);
    if (att == 1)
        segment_status(&c, &s);
    else
        printf("segment %s: %s\n", c.segment, att == 0 ? "not present (no stage is running)" : "unusable (see above)");
    printf("spool:");
    for (spool_place_t i = SPOOL_INCOMING; i <= SPOOL_FAILED; i++) {
        char d[1400], **names;
        size_t n = 0;
        spool_path(d, sizeof d, c.spool, i, NULL);
        if (spool_list(d, &names, &n) == 0) spool_free_list(names, n);
        printf(" %s %zu", spool_place_name(i), n);
    }
    int64_t avail = spool_free_bytes(c.spool);
    if (avail >= 0) printf(" free %lld MiB (min_free %llu MiB)", (long long)(avail >> 20), (unsigned long long)(c.min_free >> 20));
    printf("\n");
    if (att == 1) shm_close(&s);
    return rc;
}
