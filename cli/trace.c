/* zkpipe trace: the event ring as a Chrome/Perfetto trace (one slice per partition step). */
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "commands.h"
#include "spool/spool.h"

#define TRACE_USAGE "zkpipe trace [--config FILE] --out FILE"

int zkpipe_cmd_trace(int argc, char **argv) {
    const char *config, *out = NULL;
    const cli_option_t opts[] = {{"out", 'o', "FILE", &out}, {0}};
    int parsed = cli_options(argc, argv, TRACE_USAGE, NULL, opts, &config);
    if (parsed >= 0) return parsed;
    if (!out || optind != argc) return cli_usage_error(TRACE_USAGE);
    cfg_t c;
    if (cli_load_config(config, &c) < 0) return 2;
    shm_t s;
    if (cli_attach(&c, &s, false) != 1) {
        fprintf(stderr, "zkpipe: no segment %s: nothing to trace\n", c.segment);
        return 1;
    }
    FILE *f = fopen(out, "we");
    if (!f) {
        fprintf(stderr, "zkpipe: cannot write %s: %m\n", out);
        shm_close(&s);
        return 1;
    }
    uint64_t first, head;
    shm_event_range(&s, &first, &head);
    fprintf(f, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
    bool comma = false;
    uint32_t pids[256];
    uint32_t roles[256];
    int npids = 0;
    size_t written = 0;
    for (uint64_t i = first; i < head; i++) {
        shm_event_t ev;
        if (!shm_event_read(&s, i, &ev)) continue; /* overwritten meanwhile */
        int k;
        for (k = 0; k < npids && pids[k] != ev.pid; k++) {
        }
        if (k == npids && npids < 256) pids[npids] = ev.pid, roles[npids++] = ev.role;
        char job[64];
        spool_json_escape(ev.job, job, sizeof job);
        fprintf(f,
                "%s{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":%u,\"tid\":%u,"
                "\"args\":{\"job\":\"%s\",\"partition\":%u,\"slab\":%d,\"value\":%llu}}",
                comma ? ",\n" : "", shm_event_name(ev.type), shm_role_name(ev.role), ev.t_ns / 1e3, ev.dur_ns / 1e3,
                ev.pid, ev.pid, job, ev.part, ev.slab == SHM_NONE ? -1 : (int)ev.slab, (unsigned long long)ev.value);
        comma = true;
        written++;
    }
    for (int k = 0; k < npids; k++)
        fprintf(f, "%s{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%u,\"args\":{\"name\":\"%s %u\"}}",
                comma ? ",\n" : "", pids[k], shm_role_name(roles[k]), pids[k]),
            comma = true;
    fprintf(f, "\n]}\n");
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        fprintf(stderr, "zkpipe: error writing %s\n", out);
        shm_close(&s);
        return 1;
    }
    printf("%zu events from %d processes written to %s\n", written, npids, out);
    shm_close(&s);
    return 0;
}
