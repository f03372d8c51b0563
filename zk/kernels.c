/* Field kernel selection from cpuid (zk/kernels.h). */
#include "kernels.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__) && defined(ZK_X86_KERNELS)
#include "avx2_29.h"
#include "constants.h"
#include "fp_x86_64.h"
#define KERN_AVX2_CODE 1
#endif

int zk_kernels_mulx;
int zk_kernels_ifma;
int zk_kernels_avx2;

static unsigned kern_supported = 1u << ZK_KERNELS_PORTABLE;
static enum zk_kernel_set kern_current = ZK_KERNELS_PORTABLE;
static int kern_env_status;
static char kern_cpu[128] = "not x86-64";
static char kern_env_note[96];
static char kern_probe_note[64];
static char kern_line[384];

static const char *const kern_names[ZK_KERNELS_COUNT] = {"portable", "mulx", "avx2", "ifma"};
static const char *const kern_what[ZK_KERNELS_COUNT] = {
    "portable C Montgomery multiplication",
    "x86-64 BMI2+ADX MULX/ADCX/ADOX multiplication",
    "MULX/ADX multiplication, AVX2 BN254 MSM buckets",
    "MULX/ADX multiplication, AVX-512 IFMA MSM buckets and NTT",
};

static void kern_detect(void) {
#if defined(__x86_64__)
    unsigned a, b, c, d;
    bool bmi2 = false, adx = false, ifma = false, avx512f = false, avx2 = false, zmm_os = false, ymm_os = false;
    if (__get_cpuid_max(0, NULL) >= 7 && __get_cpuid_count(7, 0, &a, &b, &c, &d)) {
        bmi2 = b & (1u << 8);
        adx = b & (1u << 19);
        ifma = b & (1u << 21);
        avx512f = b & (1u << 16);
        avx2 = b & (1u << 5);
    }
    /* OSXSAVE, then XCR0: the OS saves SSE, AVX, opmask, ZMM_Hi256 and Hi16_ZMM state */
    if (__get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 27))) {
        uint32_t lo, hi;
        __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
        zmm_os = (lo & 0xe6) == 0xe6;
        ymm_os = (lo & 0x6) == 0x6;
    }
#ifdef ZK_X86_KERNELS /* built with the kernels of zk/fp_x86_64.h (meson option asm) */
    if (bmi2 && adx) kern_supported |= 1u << ZK_KERNELS_MULX;
#ifdef KERN_AVX2_CODE
    if (bmi2 && adx && avx2 && ymm_os) kern_supported |= 1u << ZK_KERNELS_AVX2;
#endif
    if (bmi2 && adx && avx512f && ifma && zmm_os) kern_supported |= 1u << ZK_KERNELS_IFMA;
#else
    (void)avx512f, (void)avx2, (void)ymm_os;
#endif
    snprintf(kern_cpu, sizeof(kern_cpu), "cpu:%s%s%s%s%s%s", bmi2 ? " bmi2" : "", adx ? " adx" : "",
             avx2 ? " avx2" : "", ifma ? " avx512ifma" : "", ifma && !zmm_os ? " (no zmm state from the OS)" : "",
             !bmi2 && !adx ? " no bmi2/adx" : "");
#endif
}

static void kern_apply(enum zk_kernel_set s) {
    kern_current = s;
    zk_kernels_mulx = s == ZK_KERNELS_MULX || s == ZK_KERNELS_AVX2 || s == ZK_KERNELS_IFMA;
    zk_kernels_avx2 = s == ZK_KERNELS_AVX2;
    zk_kernels_ifma = s == ZK_KERNELS_IFMA;
    snprintf(kern_line, sizeof(kern_line), "%s (%s; %s%s%s)", kern_names[s], kern_what[s], kern_cpu, kern_probe_note,
             kern_env_note);
}

/* The avx2 set's race (zk/msm_avx2.c's products against MULX's): the time of eight chains of the
 * flush's four-lane product (two vectors, v29_mul_lz) over that of eight chains of the MULX product
 * (zk_x86_mont_mul4), PROBE_STEPS products long, the least of PROBE_ROUNDS alternating rounds each
 * (the values do not matter to the time, but the two vector chains must differ); it adds about
 * 0.11 ms to a process's start (bench/startup). On a CPU without IFMA the avx2 set is the best one
 * only below AVX2_RACE_MAX: the flush's other work (loads, carries, conditional subtractions) costs
 * more in vectors than in words, so its products must win by a margin. Where this was written the
 * race gives 0.71 (bench/avx2-limbs, another harness: 0.81-0.92) and the MSMs took 0.85-0.86 (G1)
 * and 0.94-0.98 (G2) of mulx's time (bench/RESULTS.md, "Issue 22, the avx2 set"); if the products
 * are about two thirds of a vector flush's time (an estimate from its instruction counts), G1 would
 * lose at a race of about 0.88, G2 at about 0.76, a whole proof (four of its five MSMs G1's) near
 * 0.86. (Until 2026-12-05 both vector chains started from the same value, the compiler computed one
 * for both, and the race read half of this: 0.35-0.36 here, the threshold 0.42.) */
#define AVX2_RACE_MAX 0.84
#ifdef KERN_AVX2_CODE
#define PROBE_STEPS 256
#define PROBE_ROUNDS 3
static const uint64_t probe_p[4] = BN_FQ_P, probe_one[4] = BN_FQ_ONE;

static double probe_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

__attribute__((target("avx2"), noinline)) static double probe_vec(uint64_t *sink) {
    v29_mod_t m;
    v29_mod_init(&m, probe_p, BN_FQ_INV);
    /* a and b must differ: started equal, the compiler computed one chain for both and the race
     * timed half the products it counts (bench/avx2-limbs, bench/RESULTS.md) */
    const uint64_t *e[4] = {probe_one, probe_one, probe_one, probe_one}, *f[4] = {probe_p, probe_p, probe_p, probe_p};
    v29_t a, b, c;
    v29_load4(&a, e, 0, &m);
    v29_load4(&b, f, 0, &m);
    v29_load4(&c, e, 1, &m);
    double t0 = probe_now();
    for (int i = 0; i < PROBE_STEPS; i++) {
        v29_mul_lz(&a, &a, &c, &m);
        v29_mul_lz(&b, &b, &c, &m);
    }
    double t = probe_now() - t0;
    uint64_t w[4][4], *o[4] = {w[0], w[1], w[2], w[3]};
    v29_store4(o, 4, &a);
    *sink += w[0][0];
    v29_store4(o, 4, &b);
    *sink += w[1][1];
    return t;
}

__attribute__((noinline)) static double probe_mulx(uint64_t *sink) {
    uint64_t x[8][4], k[4];
    for (int l = 0; l < 8; l++)
        for (int i = 0; i < 4; i++) x[l][i] = probe_one[i];
    for (int i = 0; i < 4; i++) k[i] = probe_one[i] ^ 1;
    double t0 = probe_now();
    for (int i = 0; i < PROBE_STEPS; i++)
        for (int l = 0; l < 8; l++) zk_x86_mont_mul4(x[l], x[l], k, probe_p, BN_FQ_INV);
    double t = probe_now() - t0;
    for (int l = 0; l < 8; l++) *sink += x[l][0];
    return t;
}

static double avx2_race(void) {
    volatile uint64_t keep;
    uint64_t sink = 0;
    double tv = 1e30, tm = 1e30;
    for (int r = 0; r < PROBE_ROUNDS; r++) {
        double a = probe_vec(&sink), b = probe_mulx(&sink);
        if (a < tv) tv = a;
        if (b < tm) tm = b;
    }
    keep = sink;
    (void)keep;
    return tm > 0 ? tv / tm : 1e30;
}
#else
static double avx2_race(void) { return 1e30; } /* never asked: no avx2 set without its code */
#endif

/* avx2 products over mulx's, timed once where the CPU has the avx2 set (avx2_race); the kernels
 * line says it. */
static double kern_avx2_ratio = -1;
static void kern_probe_avx2(void) {
    if (kern_avx2_ratio >= 0 || !(kern_supported & (1u << ZK_KERNELS_AVX2))) return;
    kern_avx2_ratio = avx2_race();
    snprintf(kern_probe_note, sizeof(kern_probe_note), "; avx2 products %.2f of mulx's here", kern_avx2_ratio);
}

/* The best set this CPU has; avx2 only where its products beat MULX's here by the margin (the vector
 * multiplier's width differs between CPUs that have AVX2). */
static enum zk_kernel_set kern_best(void) {
    for (int s = ZK_KERNELS_COUNT - 1; s > 0; s--) {
        if (!(kern_supported & (1u << s))) continue;
        if (s == ZK_KERNELS_AVX2) {
            kern_probe_avx2();
            if (!(kern_avx2_ratio < AVX2_RACE_MAX)) continue;
        }
        return (enum zk_kernel_set)s;
    }
    return ZK_KERNELS_PORTABLE;
}

/* Runs before main(); the accessors call it too, so that another constructor (a test's) that asks
 * first sees the choice made. */
__attribute__((constructor)) static void kern_init(void) {
    static bool done;
    if (done) return;
    done = true;
    kern_detect();
    enum zk_kernel_set s = kern_best();
    const char *env = getenv("ZKPIPE_KERNELS");
    if (env && *env && strcmp(env, "auto") != 0) {
        int found = -1;
        for (int i = 0; i < ZK_KERNELS_COUNT; i++)
            if (strcmp(env, kern_names[i]) == 0) found = i;
        if (found < 0) {
            kern_env_status = -EINVAL;
            snprintf(kern_env_note, sizeof(kern_env_note),
                     "; ZKPIPE_KERNELS=%.24s ignored: not portable, mulx, avx2, ifma or auto", env);
        } else if (!(kern_supported & (1u << found))) {
            kern_env_status = -ENOTSUP;
            snprintf(kern_env_note, sizeof(kern_env_note), "; ZKPIPE_KERNELS=%.24s ignored: this CPU lacks it", env);
        } else {
            s = (enum zk_kernel_set)found;
            if (s == ZK_KERNELS_AVX2) kern_probe_avx2(); /* the line says how its products compare here */
            snprintf(kern_env_note, sizeof(kern_env_note), "; chosen by ZKPIPE_KERNELS");
        }
    }
    kern_apply(s);
}

unsigned zk_kernels_supported(void) {
    kern_init();
    return kern_supported;
}

enum zk_kernel_set zk_kernels_current(void) {
    kern_init();
    return kern_current;
}

const char *zk_kernels_describe(void) {
    kern_init();
    return kern_line;
}

int zk_kernels_env_status(void) {
    kern_init();
    return kern_env_status;
}

const char *zk_kernels_set_name(enum zk_kernel_set s) {
    return (unsigned)s < ZK_KERNELS_COUNT ? kern_names[s] : "?";
}

int zk_kernels_select(enum zk_kernel_set s) {
    kern_init();
    if ((unsigned)s >= ZK_KERNELS_COUNT || !(kern_supported & (1u << s))) return -ENOTSUP;
    kern_env_note[0] = 0;
    kern_apply(s);
    return 0;
}
