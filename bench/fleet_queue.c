/* The fleet queue's own ceiling (bench/fleet-queue drives it): FEEDERS processes, each with its own
 * connection, do to one PostgreSQL database exactly what zkpipe-feeder does for its jobs, with no
 * box behind them: phase 1 claims every queued job (fleet_give_up_lapsed + fleet_claim of BATCH,
 * then the sizes and each input of each claimed job, as take_in does), phase 2 writes each back fenced
 * (fleet_write_back of one tiny finished job folder: result.json, proof-0.json, public-0.json).
 * Prints jobs claimed, claims/s, write-backs/s and jobs/s through both, all processes together.
 *   fleet_queue DSN CIRCUIT FEEDERS BATCH */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fleet/fleet.h"

#define MAX_JOBS 200000

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int put(const char *dir, const char *name, const char *text) {
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    if (!f || fputs(text, f) < 0 || fclose(f)) return -1;
    return 0;
}

static void byte_io(int fd, bool wr) {
    char c = 0;
    ssize_t r = wr ? write(fd, &c, 1) : read(fd, &c, 1);
    if (r != 1) _exit(3);
}

/* One feeder: claims after go1, reports; writes back after go2, reports the number it held. */
static int feeder(const char *dsn, const char *circuit, int k, uint32_t batch, const char *dir, int go1, int go2,
                  int done) {
    char err[FLEET_ERR_MAX], box[32];
    snprintf(box, sizeof box, "bench-%d", k);
    PGconn *pg = fleet_connect(dsn, err, sizeof err);
    if (!pg) return fprintf(stderr, "feeder %d: %s\n", k, err), 1;
    static fleet_claim_t held[MAX_JOBS];
    uint32_t n = 0;
    const char *circuits[] = {circuit};
    byte_io(done, true); /* connected */
    byte_io(go1, false);
    for (;;) {
        fleet_lapsed_t gone[16];
        if (n + batch > MAX_JOBS) return fprintf(stderr, "feeder %d: more than %d jobs\n", k, MAX_JOBS), 1;
        if (fleet_give_up_lapsed(pg, box, circuits, 1, NULL, 0, 3, gone, 16, err, sizeof err) < 0)
            return fprintf(stderr, "feeder %d: %s\n", k, err), 1;
        int c = fleet_claim(pg, box, circuits, 1, NULL, 0, batch, 600, 3, held + n, err, sizeof err);
        if (c < 0) return fprintf(stderr, "feeder %d: %s\n", k, err), 1;
        if (!c) break;
        for (int i = 0; i < c; i++) {
            uint64_t lens[256];
            if (fleet_input_sizes(pg, held[n + i].id, held[n + i].n_parts, 1 << 20, lens, err, sizeof err) < 0)
                return fprintf(stderr, "feeder %d: %s\n", k, err), 1;
            for (uint32_t p = 0; p < held[n + i].n_parts; p++) {
                PGresult *in = fleet_input(pg, held[n + i].id, p, lens[p], err, sizeof err);
                if (!in) return fprintf(stderr, "feeder %d: %s\n", k, err), 1;
                PQclear(in);
            }
        }
        n += (uint32_t)c;
    }
    byte_io(done, true);
    byte_io(go2, false);
    for (uint32_t i = 0; i < n; i++)
        if (fleet_write_back(pg, box, held[i].id, held[i].gen, dir, err, sizeof err) != 1)
            return fprintf(stderr, "feeder %d: job %s: not written back: %s\n", k, held[i].id, err), 1;
    PQfinish(pg);
    if (write(done, &n, sizeof n) != sizeof n) return 1;
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: fleet_queue DSN CIRCUIT FEEDERS BATCH\n");
        return 2;
    }
    const char *dsn = argv[1], *circuit = argv[2];
    int f = atoi(argv[3]);
    uint32_t batch = (uint32_t)atoi(argv[4]);
    if (f < 1 || f > 256 || batch < 1) return fprintf(stderr, "fleet_queue: FEEDERS 1..256, BATCH >= 1\n"), 2;
    (void)setpgid(0, 0); /* a feeder that fails ends this group, not its caller */
    char dir[] = "/tmp/zkpipe-fleet-queue.XXXXXX";
    if (!mkdtemp(dir)) return perror("mkdtemp"), 1;
    /* a finished one-partition job as the finalizer leaves it (the sizes of a bn128 proof) */
    int bad = put(dir, "result.json",
                  "{\"status\": \"done\", \"total_ms\": 1.0, \"partitions\": [{\"status\": \"done\", \"queue_ms\": 0.1,"
                  " \"synth_ms\": 0.1, \"ready_wait_ms\": 0.1, \"gpu_ms\": 0.1, \"finalize_ms\": 0.1}]}\n");
    char proof[900];
    snprintf(proof, sizeof proof, "{\"pi_a\": [\"%0154d\", \"%0154d\", \"1\"], \"protocol\": \"groth16\"}\n", 1, 2);
    bad |= put(dir, "proof-0.json", proof) | put(dir, "public-0.json", "[\"33\"]\n");
    if (bad) return perror(dir), 1;
    int go1[2], go2[2], done[2];
    if (pipe(go1) || pipe(go2) || pipe(done)) return perror("pipe"), 1;
    pid_t *pids = calloc((size_t)f, sizeof *pids);
    for (int k = 0; k < f; k++) {
        if ((pids[k] = fork()) == 0) {
            int r = feeder(dsn, circuit, k, batch, dir, go1[0], go2[0], done[1]);
            if (r) kill(0, SIGTERM); /* the others and the parent wait on each other: end the bench */
            _exit(r);
        }
        if (pids[k] < 0) return perror("fork"), 1;
    }
    char buf[256];
    int rc = 0;
    for (int k = 0; k < f; k++)
        if (read(done[0], buf, 1) != 1) rc = 1; /* all connected */
    double t0 = now_s();
    for (int k = 0; k < f; k++) rc |= write(go1[1], "g", 1) != 1;
    for (int k = 0; k < f; k++)
        if (read(done[0], buf, 1) != 1) rc = 1;
    double t1 = now_s();
    for (int k = 0; k < f; k++) rc |= write(go2[1], "g", 1) != 1;
    uint64_t jobs = 0;
    for (int k = 0; k < f; k++) {
        uint32_t n;
        if (read(done[0], &n, sizeof n) != sizeof n)
            rc = 1;
        else
            jobs += n;
    }
    double t2 = now_s();
    for (int k = 0; k < f; k++) {
        int st;
        waitpid(pids[k], &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st)) rc = 1;
    }
    char p[512];
    for (const char *const *n = (const char *const[]){"result.json", "proof-0.json", "public-0.json", NULL}; *n; n++)
        snprintf(p, sizeof p, "%s/%s", dir, *n), unlink(p);
    rmdir(dir);
    if (rc) return fprintf(stderr, "fleet_queue: a feeder failed\n"), 1;
    printf("feeders %d batch %u jobs %llu claim_s %.3f write_back_s %.3f claims_per_s %.1f write_backs_per_s %.1f"
           " jobs_per_s %.1f\n",
           f, batch, (unsigned long long)jobs, t1 - t0, t2 - t1, jobs / (t1 - t0), jobs / (t2 - t1), jobs / (t2 - t0));
    return 0;
}
