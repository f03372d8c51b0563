/* Field kernel selection from cpuid (zk/kernels.h). */
#include "kernels.h"
#include "msm_avx2.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <cpuid.h>
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
    if (bmi2 && adx && avx2 && ymm_os) kern_supported |= 1u << ZK_KERNELS_AVX2;
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

/* avx2 products over mulx's, timed once where the CPU has the avx2 set (zk_avx2_probe); the kernels
 * line says it. */
static double kern_avx2_ratio = -1;
static void kern_probe_avx2(void) {
    if (kern_avx2_ratio >= 0 || !(kern_supported & (1u << ZK_KERNELS_AVX2))) return;
    kern_avx2_ratio = zk_avx2_probe();
    snprintf(kern_probe_note, sizeof(kern_probe_note), "; avx2 products %.2f of mulx's here", kern_avx2_ratio);
}

/* The best set this CPU has; avx2 only where its products beat MULX's here by the margin (the vector
 * multiplier's width differs between CPUs that have AVX2). */
static enum zk_kernel_set kern_best(void) {
    for (int s = ZK_KERNELS_COUNT - 1; s > 0; s--) {
        if (!(kern_supported & (1u << s))) continue;
        if (s == ZK_KERNELS_AVX2) {
            kern_probe_avx2();
            if (!(kern_avx2_ratio < ZK_AVX2_PROBE_MAX)) continue;
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
