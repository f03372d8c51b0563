/* The field kernel sets and the one choice among them, made once at start-up from cpuid.
 *
 * One build runs on any x86-64 CPU: the MULX/ADCX/ADOX Montgomery multiplication of
 * zk/fp_x86_64.h (BMI2 + ADX) is compiled into every x86-64 build, and FPF(mul)/FPF(sqr) in
 * zk/fp_tmpl.h use it only while zk_kernels_mulx is set; otherwise they call the portable CIOS of
 * zk/fp_tmpl.h. The ADC/SBB/CMOV add/sub kernels are baseline x86-64 and always run. The choice is
 * made before main() (a constructor): the best set the CPU has, or the one ZKPIPE_KERNELS names
 * (portable, mulx, avx2, ifma, auto), never one the CPU lacks. The ifma set adds AVX-512 IFMA bucket
 * additions (zk/msm_ifma.c, built with function-level target attributes) where cpuid reports
 * AVX512F + AVX512IFMA and XGETBV shows that the OS saves the opmask and zmm state; below it the
 * avx2 set adds AVX2 bucket additions for BN254 G1 and G2 (zk/msm_avx2.c, the same way) where cpuid reports
 * AVX2 and the OS saves the ymm state. Tests switch sets with zk_kernels_select(). */
#pragma once
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

enum zk_kernel_set {
    ZK_KERNELS_PORTABLE = 0, /* portable C (unsigned __int128), any CPU */
    ZK_KERNELS_MULX = 1,     /* x86-64 BMI2 + ADX: MULX/ADCX/ADOX multiplication */
    ZK_KERNELS_AVX2 = 2,     /* mulx, and AVX2 batch-affine bucket additions for BN254 (zk/msm_avx2.c) */
    ZK_KERNELS_IFMA = 3,     /* mulx, and AVX-512 IFMA batch-affine bucket additions (zk/msm_ifma.c) */
    ZK_KERNELS_COUNT
};

/* Non-zero while the MULX/ADX multiplication is selected (read by FPF(mul) on every call; written
 * only by the start-up constructor and zk_kernels_select). */
extern int zk_kernels_mulx;
/* Non-zero while the ifma set is selected: the BN254 G1 MSM's bucket additions run eight to a
 * vector (zk/msm_ifma.h); zk_kernels_mulx is then set too. Same discipline as zk_kernels_mulx. */
extern int zk_kernels_ifma;
/* Non-zero while the avx2 set is selected: the BN254 G1 and G2 MSMs' bucket additions run four to a vector
 * (zk/msm_avx2.h); zk_kernels_mulx is then set too. Same discipline as zk_kernels_mulx. */
extern int zk_kernels_avx2;

/* Bit s set for every set s this CPU runs (ZK_KERNELS_PORTABLE always). */
unsigned zk_kernels_supported(void);
/* The set in use. */
enum zk_kernel_set zk_kernels_current(void);
/* Short name of set s: "portable", "mulx", "avx2", "ifma". */
const char *zk_kernels_set_name(enum zk_kernel_set s);
/* One line for logs and `zkpipe prove --timings`: the set in use, why (CPU or ZKPIPE_KERNELS), and
 * the CPU features that decide it, e.g. "mulx (x86-64 BMI2+ADX MULX/ADCX/ADOX; cpu: bmi2 adx
 * avx512ifma)". */
const char *zk_kernels_describe(void);
/* Switches to set s: 0, or -ENOTSUP when this CPU lacks it (nothing changes). Not thread-safe:
 * call it only while no field arithmetic runs (tests, start-up). */
int zk_kernels_select(enum zk_kernel_set s);
/* The set ZKPIPE_KERNELS names: 0 when it is unset, "auto" or a set this CPU runs; -ENOTSUP for a
 * set it lacks, -EINVAL for a value that is no set (zk_kernels_describe says which). */
int zk_kernels_env_status(void);

#ifdef __cplusplus
}
#endif
