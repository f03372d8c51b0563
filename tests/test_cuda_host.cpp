/* The CUDA backend's field and curve code (gpud/cuda/ff.cuh, ec.cuh), compiled for the host with its
 * emulated carry chains, against zk/ on random inputs: every field incl. Fq2, G1/G2 XYZZ add,
 * mixed add and double with their special cases, signed window digits, and a host run of the
 * MSM's bucket/segment/window reduction against a plain sum of scalar multiples, the MSM kernels'
 * own per-thread bodies (msm_body.cuh) run thread by thread in launch order, and the NTT set-up
 * (roots of unity, inverses, split power tables) against zk/. */
#include <sys/random.h>

#include <algorithm>
#include <vector>

#include "test.h"
extern "C" {
#include "zk/curve.h"
#include "zk/groth16.h"
#include "zk/ntt.h"
}
#include "gpud/cuda/ec.cuh"
#include "gpud/cuda/fr_host.cuh"
#include "gpud/cuda/msm_body.cuh"

static void rnd(void *p, size_t n) {
    uint8_t *b = (uint8_t *)p;
    while (n) {
        ssize_t k = getrandom(b, n, 0);
        if (k > 0) b += k, n -= (size_t)k;
    }
}

template <class D, class H> static D to_dev(const H &h) {
    static_assert(sizeof(D) == sizeof(H), "layouts differ");
    D d;
    memcpy(&d, &h, sizeof d);
    return d;
}
template <class D, class H> static bool same(const D &d, const H &h) {
    static_assert(sizeof(D) == sizeof(H), "layouts differ");
    return memcmp(&d, &h, sizeof d) == 0;
}

/* A random element < p: random limbs, top limb cut to the modulus' bit length, retried. */
#define RAND_FIELD(F, NL, out)                                                                                         \
    do {                                                                                                               \
        for (;;) {                                                                                                     \
            rnd(&(out), sizeof(out));                                                                                  \
            int top = 63 - __builtin_clzll(F##_P.l[NL - 1]);                                                           \
            (out).l[NL - 1] &= (top == 63) ? ~0ULL : ((2ULL << top) - 1);                                              \
            if (!F##_geq_p((out).l)) break;                                                                            \
        }                                                                                                              \
    } while (0)

#define FIELD_VS_CPU(F, NL, DEV)                                                                                       \
    TEST(F##_matches_cpu) {                                                                                            \
        for (int it = 0; it < 3000; it++) {                                                                            \
            F##_t a, b, r;                                                                                             \
            RAND_FIELD(F, NL, a);                                                                                      \
            RAND_FIELD(F, NL, b);                                                                                      \
            if (it == 0) F##_zero(&a);                                                                                 \
            if (it == 1) {                                                                                             \
                a = F##_P;                                                                                             \
                a.l[0] -= 1;                                                                                           \
                b = a;                                                                                                 \
            } /* p-1 */                                                                                                \
            if (it == 2) {                                                                                             \
                F##_zero(&b);                                                                                          \
                b.l[0] = 1;                                                                                            \
            }                                                                                                          \
            DEV da = to_dev<DEV>(a), db = to_dev<DEV>(b);                                                              \
            F##_add(&r, &a, &b);                                                                                       \
            CHECK_MSG(same(da + db, r), "add it=%d", it);                                                              \
            F##_sub(&r, &a, &b);                                                                                       \
            CHECK_MSG(same(da - db, r), "sub it=%d", it);                                                              \
            F##_sub(&r, &b, &a);                                                                                       \
            CHECK_MSG(same(db - da, r), "sub' it=%d", it);                                                             \
            F##_mul(&r, &a, &b);                                                                                       \
            CHECK_MSG(same(da *db, r), "mul it=%d", it);                                                               \
            F##_sqr(&r, &a);                                                                                           \
            CHECK_MSG(same(da.sqr(), r), "sqr it=%d", it);                                                             \
            F##_neg(&r, &a);                                                                                           \
            CHECK_MSG(same(da.neg(), r), "neg it=%d", it);                                                             \
            F##_dbl(&r, &a);                                                                                           \
            CHECK_MSG(same(da.dbl(), r), "dbl it=%d", it);                                                             \
            F##_to_mont(&r, &a);                                                                                       \
            CHECK_MSG(same(da.to_mont(), r), "to_mont it=%d", it);                                                     \
            F##_from_mont(&r, &a);                                                                                     \
            CHECK_MSG(same(da.from_mont(), r), "from_mont it=%d", it);                                                 \
            CHECK(da.is_zero() == F##_is_zero(&a));                                                                    \
        }                                                                                                              \
        CHECK(same(DEV::one(), F##_ONE));                                                                              \
        CHECK(same(DEV::modulus(), F##_P));                                                                            \
        CHECK(same(DEV::r2(), F##_R2));                                                                                \
        return 0;                                                                                                      \
    }

FIELD_VS_CPU(bn_fq, 4, zc_bn_fq)
FIELD_VS_CPU(bn_fr, 4, zc_bn_fr)
FIELD_VS_CPU(bls_fq, 6, zc_bls_fq)
FIELD_VS_CPU(bls_fr, 4, zc_bls_fr)

#define FQ2_VS_CPU(F2, F, NL, DEV)                                                                                     \
    TEST(F2##_matches_cpu) {                                                                                           \
        for (int it = 0; it < 1000; it++) {                                                                            \
            F2##_t a, b, r;                                                                                            \
            RAND_FIELD(F, NL, a.c0);                                                                                   \
            RAND_FIELD(F, NL, a.c1);                                                                                   \
            RAND_FIELD(F, NL, b.c0);                                                                                   \
            RAND_FIELD(F, NL, b.c1);                                                                                   \
            if (it == 0) F##_zero(&a.c1);                                                                              \
            DEV da = to_dev<DEV>(a), db = to_dev<DEV>(b);                                                              \
            F2##_add(&r, &a, &b);                                                                                      \
            CHECK_MSG(same(da + db, r), "add it=%d", it);                                                              \
            F2##_sub(&r, &a, &b);                                                                                      \
            CHECK_MSG(same(da - db, r), "sub it=%d", it);                                                              \
            F2##_mul(&r, &a, &b);                                                                                      \
            CHECK_MSG(same(da *db, r), "mul it=%d", it);                                                               \
            F2##_sqr(&r, &a);                                                                                          \
            CHECK_MSG(same(da.sqr(), r), "sqr it=%d", it);                                                             \
            F2##_neg(&r, &a);                                                                                          \
            CHECK_MSG(same(da.neg(), r), "neg it=%d", it);                                                             \
        }                                                                                                              \
        return 0;                                                                                                      \
    }

FQ2_VS_CPU(bn_fq2, bn_fq, 4, zc_bn_fq2)
FQ2_VS_CPU(bls_fq2, bls_fq, 6, zc_bls_fq2)

/* Random affine points k·G for random 64-bit k (CPU code), plus infinity now and then. */
#define CURVE_VS_CPU(G, DEV, GEN)                                                                                      \
    TEST(G##_matches_cpu) {                                                                                            \
        typedef DEV::aff_t daff;                                                                                       \
        G##_xyzz_t g;                                                                                                  \
        G##_xyzz_from_aff(&g, &GEN);                                                                                   \
        for (int it = 0; it < 40; it++) {                                                                              \
            uint64_t k1, k2;                                                                                           \
            rnd(&k1, 8);                                                                                               \
            rnd(&k2, 8);                                                                                               \
            G##_xyzz_t p1, p2, r;                                                                                      \
            G##_aff_t a2;                                                                                              \
            G##_xyzz_mul(&p1, &g, &k1, 1);                                                                             \
            G##_xyzz_mul(&p2, &g, &k2, 1);                                                                             \
            G##_xyzz_to_aff(&a2, &p2);                                                                                 \
            if (it == 1) memset(&a2, 0, sizeof a2); /* infinity */                                                     \
            if (it == 2) G##_xyzz_to_aff(&a2, &p1); /* p1 + p1 through madd */                                         \
            if (it == 3) {                                                                                             \
                G##_xyzz_to_aff(&a2, &p1);                                                                             \
                G##_aff_neg(&a2, &a2);                                                                                 \
            } /* p1 - p1 */                                                                                            \
            if (it == 4) G##_xyzz_set_inf(&p1);                                                                        \
            DEV d1 = to_dev<DEV>(p1), d2 = to_dev<DEV>(p2);                                                            \
            daff da2 = to_dev<daff>(a2);                                                                               \
            CHECK(da2.is_inf() == G##_aff_is_inf(&a2));                                                                \
            G##_xyzz_add_aff(&r, &p1, &a2);                                                                            \
            CHECK_MSG(same(d1.add(da2), r), "madd it=%d", it);                                                         \
            G##_xyzz_add(&r, &p1, &p2);                                                                                \
            CHECK_MSG(same(d1.add(d2), r), "add it=%d", it);                                                           \
            G##_xyzz_add(&r, &p1, &p1);                                                                                \
            CHECK_MSG(same(d1.add(d1), r), "add self it=%d", it);                                                      \
            G##_xyzz_dbl(&r, &p1);                                                                                     \
            CHECK_MSG(same(d1.dbl(), r), "dbl it=%d", it);                                                             \
            G##_xyzz_t q;                                                                                              \
            G##_xyzz_neg(&q, &p1);                                                                                     \
            G##_xyzz_add(&r, &p1, &q);                                                                                 \
            CHECK_MSG(same(d1.add(d1.neg()), r), "add neg it=%d", it);                                                 \
            CHECK(d1.add(d1.neg()).is_inf());                                                                          \
            /* mul_small agrees with the CPU double-and-add */                                                         \
            uint64_t k = k1 & 0x7fff;                                                                                  \
            G##_xyzz_mul(&r, &p1, &k, 1);                                                                              \
            DEV m = d1.mul_small((uint32_t)k);                                                                         \
            G##_xyzz_t mh;                                                                                             \
            memcpy(&mh, &m, sizeof mh);                                                                                \
            CHECK_MSG(G##_xyzz_eq(&mh, &r), "mul_small it=%d", it);                                                    \
        }                                                                                                              \
        return 0;                                                                                                      \
    }

CURVE_VS_CPU(bn_g1, zc_bn_g1, bn_g1_gen)
CURVE_VS_CPU(bn_g2, zc_bn_g2, bn_g2_gen)
CURVE_VS_CPU(bls_g1, zc_bls_g1, bls_g1_gen)
CURVE_VS_CPU(bls_g2, zc_bls_g2, bls_g2_gen)

/* Σ d_w 2^(c·w) recomposes the scalar for every window size the MSM may pick. */
TEST(window_digits_recompose) {
    for (int c = 2; c <= 16; c++) {
        int nw = (256 + c - 1) / c;
        for (int it = 0; it < 300; it++) {
            uint32_t s[8];
            rnd(s, sizeof s);
            s[7] &= 0x7fffffff;
            if (it == 0) memset(s, 0, sizeof s);
            if (it == 1) {
                memset(s, 0, sizeof s);
                s[0] = 1;
            }
            if (it == 2) {
                memset(s, 0xff, sizeof s);
                s[7] = 0x7fffffff;
            }
            /* acc = Σ d_w 2^(cw) as a signed 288-bit integer in 9 words */
            int64_t acc[10] = {0};
            uint32_t carry = 0;
            for (int w = 0; w < nw; w++) {
                int d = zc_window_digit(s, w, c, &carry);
                CHECK(d <= (1 << (c - 1)) && d > -(1 << (c - 1)));
                int bit = w * c;
                /* add d << bit, in 32-bit words with wide accumulators */
                int64_t v = (int64_t)d * (int64_t)(1ULL << (bit & 31));
                acc[bit >> 5] += v;
            }
            CHECK_EQ_INT(carry, 0);
            /* normalise */
            for (int i = 0; i < 9; i++) {
                int64_t lo = acc[i] & 0xffffffff;
                acc[i + 1] += (acc[i] - lo) / (1LL << 32);
                acc[i] = lo;
            }
            for (int i = 0; i < 8; i++) CHECK_MSG((uint32_t)acc[i] == s[i], "c=%d word %d", c, i);
            CHECK(acc[8] == 0 && acc[9] == 0);
        }
    }
    return 0;
}

/* The device MSM's bucket logic, run on the host: keys (window, |digit|) sorted, buckets summed in
 * chunks of at most K entries over several levels, windows reduced in segments with the
 * (lo-1)·run correction, Horner over windows. Checked against Σ s_i·P_i by the CPU code. */
template <class DEV>
static DEV host_msm(const std::vector<typename DEV::aff_t> &pts, const std::vector<uint32_t> &sc, int c, int K,
                    int seg) {
    int nw = (256 + c - 1) / c, nb = 1 << (c - 1);
    size_t n = pts.size();
    std::vector<std::pair<uint32_t, uint32_t>> kv;
    for (size_t i = 0; i < n; i++) {
        uint32_t carry = 0;
        for (int w = 0; w < nw; w++) {
            int d = zc_window_digit(&sc[i * 8], w, c, &carry);
            if (d == 0 || pts[i].is_inf()) continue;
            kv.push_back({(uint32_t)(w * nb + (d < 0 ? -d : d) - 1), (uint32_t)(i << 1 | (d < 0))});
        }
    }
    std::stable_sort(kv.begin(), kv.end(), [](auto &a, auto &b) { return a.first < b.first; });
    size_t nbt = (size_t)nw * nb;
    std::vector<uint32_t> cnt(nbt, 0), start(nbt, 0);
    for (auto &e : kv) cnt[e.first]++;
    for (size_t b = 1; b < nbt; b++) start[b] = start[b - 1] + cnt[b - 1];
    /* level 0 from affine points, later levels from partial sums */
    std::vector<DEV> part;
    bool first = true;
    for (;;) {
        std::vector<uint32_t> tasks(nbt), off(nbt + 1, 0);
        for (size_t b = 0; b < nbt; b++) tasks[b] = (cnt[b] + K - 1) / K;
        for (size_t b = 0; b < nbt; b++) off[b + 1] = off[b] + tasks[b];
        std::vector<DEV> next(off[nbt]);
        for (size_t b = 0; b < nbt; b++)
            for (uint32_t t = 0; t < tasks[b]; t++) {
                DEV acc = DEV::inf();
                uint32_t lo = start[b] + t * K, hi = std::min(start[b] + cnt[b], lo + K);
                for (uint32_t e = lo; e < hi; e++) {
                    if (first) {
                        auto p = pts[kv[e].second >> 1];
                        acc = acc.add((kv[e].second & 1) ? p.neg() : p);
                    } else {
                        acc = acc.add(part[e]);
                    }
                }
                next[off[b] + t] = acc;
            }
        bool done = true;
        for (size_t b = 0; b < nbt; b++) done &= cnt[b] <= (uint32_t)K;
        part.swap(next);
        for (size_t b = 0; b < nbt; b++) cnt[b] = tasks[b], start[b] = off[b];
        first = false;
        if (done) break;
    }
    DEV total = DEV::inf();
    for (int w = nw - 1; w >= 0; w--) {
        for (int i = 0; i < c; i++) total = total.dbl();
        DEV win = DEV::inf();
        for (int lo = 1; lo <= nb; lo += seg) { /* digits lo..hi-1 */
            int hi = std::min(nb + 1, lo + seg);
            DEV run = DEV::inf(), acc = DEV::inf();
            for (int j = hi - 1; j >= lo; j--) {
                size_t b = (size_t)w * nb + j - 1;
                if (cnt[b]) run = run.add(part[start[b]]);
                acc = acc.add(run);
            }
            win = win.add(acc.add(run.mul_small((uint32_t)(lo - 1))));
        }
        total = total.add(win);
    }
    return total;
}

#define MSM_HOST(G, DEV, GEN, FR)                                                                                      \
    TEST(G##_bucket_msm_host) {                                                                                        \
        const int n = 150;                                                                                             \
        std::vector<DEV::aff_t> pts(n);                                                                                \
        std::vector<uint32_t> sc(8 * n);                                                                               \
        G##_xyzz_t g, acc, t;                                                                                          \
        G##_xyzz_from_aff(&g, &GEN);                                                                                   \
        G##_xyzz_set_inf(&acc);                                                                                        \
        for (int i = 0; i < n; i++) {                                                                                  \
            uint64_t k;                                                                                                \
            rnd(&k, 8);                                                                                                \
            G##_xyzz_t p;                                                                                              \
            G##_xyzz_mul(&p, &g, &k, 1);                                                                               \
            G##_aff_t a;                                                                                               \
            G##_xyzz_to_aff(&a, &p);                                                                                   \
            if (i % 17 == 3) memset(&a, 0, sizeof a);                                                                  \
            if (i % 13 == 5 && i > 5) memcpy(&a, &pts[i - 1], sizeof a); /* repeated point: doubling in a bucket */    \
            pts[i] = to_dev<DEV::aff_t>(a);                                                                            \
            FR##_t s;                                                                                                  \
            RAND_FIELD(FR, 4, s);                                                                                      \
            if (i % 5 == 0) FR##_zero(&s);                                                                             \
            if (i % 5 == 1) {                                                                                          \
                FR##_zero(&s);                                                                                         \
                s.l[0] = 1;                                                                                            \
            }                                                                                                          \
            memcpy(&sc[8 * i], s.l, 32);                                                                               \
            G##_xyzz_from_aff(&p, &a);                                                                                 \
            G##_xyzz_mul(&t, &p, s.l, 4);                                                                              \
            G##_xyzz_add(&acc, &acc, &t);                                                                              \
        }                                                                                                              \
        int cs[] = {4, 7, 9};                                                                                          \
        for (int c : cs) {                                                                                             \
            DEV r = host_msm<DEV>(pts, sc, c, 4, 5);                                                                   \
            G##_xyzz_t rh;                                                                                             \
            memcpy(&rh, &r, sizeof rh);                                                                                \
            CHECK_MSG(G##_xyzz_eq(&rh, &acc), "c=%d", c);                                                              \
        }                                                                                                              \
        return 0;                                                                                                      \
    }

MSM_HOST(bn_g1, zc_bn_g1, bn_g1_gen, bn_fr)
MSM_HOST(bn_g2, zc_bn_g2, bn_g2_gen, bn_fr)
MSM_HOST(bls_g1, zc_bls_g1, bls_g1_gen, bls_fr)
MSM_HOST(bls_g2, zc_bls_g2, bls_g2_gen, bls_fr)

/* NTT set-up on the host: the roots are snarkjs's (zk/'s), inverses invert, and the split power
 * tables give first·base^i for every i. */
#define NTT_SETUP(PFX, DEV, CURVE)                                                                                     \
    TEST(PFX##_ntt_setup) {                                                                                            \
        unsigned maxk = CURVE.id == ZK_CURVE_BN128 ? 28 : 32;                                                          \
        for (unsigned k = 0; k <= maxk; k++) {                                                                         \
            PFX##_fr_t w;                                                                                              \
            zk_fr_root_of_unity(&CURVE, k, (uint8_t *)w.l);                                                            \
            CHECK_MSG(same(zc_root<DEV>(k), w), "root k=%u", k);                                                       \
        }                                                                                                              \
        for (int it = 0; it < 20; it++) {                                                                              \
            PFX##_fr_t a, r;                                                                                           \
            RAND_FIELD(PFX##_fr, 4, a);                                                                                \
            PFX##_fr_inv(&r, &a);                                                                                      \
            CHECK(same(zc_inv(to_dev<DEV>(a)), r));                                                                    \
        }                                                                                                              \
        for (uint32_t logn = 1; logn <= 13; logn += 3) {                                                               \
            uint32_t split = (logn + 1) / 2, n = 1u << logn;                                                           \
            std::vector<DEV> lo(1u << split), hi(1u << (logn - split));                                                \
            DEV base = zc_root<DEV>(logn + 1), first = zc_inv(zc_from_u64<DEV>(n));                                    \
            zc_host_pow_halves(base, first, logn, split, lo.data(), hi.data());                                        \
            DEV acc = first;                                                                                           \
            for (uint32_t i = 0; i < n; i++) {                                                                         \
                CHECK_MSG(lo[i & ((1u << split) - 1)] * hi[i >> split] == acc, "logn=%u i=%u", logn, i);               \
                acc = acc * base;                                                                                      \
            }                                                                                                          \
        }                                                                                                              \
        return 0;                                                                                                      \
    }

NTT_SETUP(bn, zc_bn_fr, zk_curve_bn128)
NTT_SETUP(bls, zc_bls_fr, zk_curve_bls12381)

/* zc_msm_enqueue (msm.cuh) step by step on the host: the same bodies, the same buffers (filled
 * with garbage first, as device memory is), a stable sort standing in for CUB's radix sort, every
 * "thread" of each launch run in turn. */
template <class G> static G emu_msm(const std::vector<typename G::aff_t> &pts, const std::vector<uint32_t> &sc, int c) {
    zc_msm_plan p;
    zc_msm_geometry(&p, (uint32_t)pts.size(), c);
    auto junk32 = [](size_t k) { return std::vector<uint32_t>(k, 0xa5a5a5a5u); };
    auto junkg = [](size_t k) {
        std::vector<G> v(k);
        memset((void *)v.data(), 0xa5, k * sizeof(G));
        return v;
    };
    std::vector<uint32_t> keys = junk32(p.m), vals = junk32(p.m), skeys = junk32(p.m), svals = junk32(p.m);
    std::vector<uint32_t> start = junk32(p.nbt + 1), end = junk32(p.nbt + 1), cnt = junk32(p.nbt + 1);
    std::vector<uint32_t> tasks = junk32(p.nbt + 1), off = junk32(p.nbt + 1);
    std::vector<G> part0 = junkg(p.cap0), part1 = junkg(p.cap1), seg0 = junkg(p.nw * p.nseg),
                   seg1 = junkg(p.nw * p.nseg);
    for (uint32_t i = 0; i < p.n; i++)
        zc_b_digits<G>(pts.data(), sc.data(), p.n, p.c, p.nw, p.nb, keys.data(), vals.data(), i);
    std::vector<size_t> ord(p.m);
    for (size_t e = 0; e < p.m; e++) ord[e] = e;
    std::stable_sort(ord.begin(), ord.end(), [&](size_t a, size_t b) { return keys[a] < keys[b]; });
    for (size_t e = 0; e < p.m; e++) skeys[e] = keys[ord[e]], svals[e] = vals[ord[e]];
    std::fill(start.begin(), start.end(), 0);
    std::fill(end.begin(), end.end(), 0);
    for (size_t e = 0; e < p.m; e++) zc_b_runs(skeys.data(), p.m, start.data(), end.data(), e);
    const G *in = nullptr;
    G *out = part0.data();
    size_t bound = p.cap0;
    for (int l = 0; l < p.levels; l++) {
        for (size_t b = 0; b <= p.nbt; b++)
            zc_b_tasks(start.data(), cnt.data(), end.data(), tasks.data(), p.nbt, l == 0, b);
        uint32_t acc = 0;
        for (size_t b = 0; b <= p.nbt; b++) off[b] = acc, acc += tasks[b];
        for (size_t t = 0; t < bound; t++) {
            if (l == 0)
                zc_b_bucket_sum<G, true>(pts.data(), svals.data(), nullptr, start.data(), cnt.data(), off.data(), p.nbt,
                                         out, (uint32_t)t);
            else
                zc_b_bucket_sum<G, false>(pts.data(), nullptr, in, start.data(), cnt.data(), off.data(), p.nbt, out,
                                          (uint32_t)t);
        }
        for (size_t b = 0; b < p.nbt; b++)
            zc_b_next_level(start.data(), cnt.data(), tasks.data(), off.data(), p.nbt, b);
        in = out;
        out = (out == part0.data()) ? part1.data() : part0.data();
        bound = bound / ZC_MSM_K + p.nbt + 1;
    }
    size_t nseg = p.nseg;
    for (size_t id = 0; id < p.nw * nseg; id++)
        zc_b_window_seg<G>(in, start.data(), cnt.data(), p.nw, p.nb, (uint32_t)p.seg, (uint32_t)nseg, seg0.data(),
                           (uint32_t)id);
    G *a = seg0.data(), *b = seg1.data();
    while (nseg > 1) {
        size_t ng = (nseg + ZC_MSM_GROUP - 1) / ZC_MSM_GROUP;
        for (size_t id = 0; id < p.nw * ng; id++)
            zc_b_sum_groups<G>(a, (uint32_t)nseg, ZC_MSM_GROUP, p.nw, b, (uint32_t)id);
        std::swap(a, b);
        nseg = ng;
    }
    G total = G::inf();
    for (int w = p.nw - 1; w >= 0; w--) {
        for (int i = 0; i < p.c; i++) total = total.dbl();
        total = total.add(a[w]);
    }
    return total;
}

#define MSM_EMU(G, DEV, GEN, FR)                                                                                       \
    TEST(G##_msm_kernels_emulated) {                                                                                   \
        int ns[] = {1, 300, 1100};                                                                                     \
        for (int n : ns) {                                                                                             \
            std::vector<DEV::aff_t> pts(n);                                                                            \
            std::vector<uint32_t> sc(8 * n);                                                                           \
            G##_xyzz_t g, acc, t, base;                                                                                \
            G##_xyzz_from_aff(&g, &GEN);                                                                               \
            G##_xyzz_set_inf(&acc);                                                                                    \
            uint64_t k0;                                                                                               \
            rnd(&k0, 8);                                                                                               \
            G##_xyzz_mul(&base, &g, &k0, 1);                                                                           \
            for (int i = 0; i < n; i++) {                                                                              \
                G##_xyzz_add(&base, &base, &g);                                                                        \
                G##_aff_t a;                                                                                           \
                G##_xyzz_to_aff(&a, &base);                                                                            \
                if (i % 29 == 4) memset(&a, 0, sizeof a);                                                              \
                pts[i] = to_dev<DEV::aff_t>(a);                                                                        \
                FR##_t s;                                                                                              \
                uint8_t kind;                                                                                          \
                rnd(&kind, 1);                                                                                         \
                RAND_FIELD(FR, 4, s);                                                                                  \
                if (kind % 10 < 7) {                                                                                   \
                    FR##_zero(&s);                                                                                     \
                    s.l[0] = 1;                                                                                        \
                } /* mostly ones: one crowded bucket */                                                                \
                else if (kind % 10 == 7)                                                                               \
                    FR##_zero(&s);                                                                                     \
                memcpy(&sc[8 * i], s.l, 32);                                                                           \
                G##_xyzz_t p;                                                                                          \
                G##_xyzz_from_aff(&p, &a);                                                                             \
                G##_xyzz_mul(&t, &p, s.l, 4);                                                                          \
                G##_xyzz_add(&acc, &acc, &t);                                                                          \
            }                                                                                                          \
            int cs[] = {0, 4, 7};                                                                                      \
            for (int c : cs) {                                                                                         \
                DEV r = emu_msm<DEV>(pts, sc, c);                                                                      \
                G##_xyzz_t rh;                                                                                         \
                memcpy(&rh, &r, sizeof rh);                                                                            \
                CHECK_MSG(G##_xyzz_eq(&rh, &acc), "n=%d c=%d", n, c);                                                  \
            }                                                                                                          \
        }                                                                                                              \
        return 0;                                                                                                      \
    }

MSM_EMU(bn_g1, zc_bn_g1, bn_g1_gen, bn_fr)
MSM_EMU(bls_g2, zc_bls_g2, bls_g2_gen, bls_fr)

/* zc_ntt_tables_make and zc_ntt_coset (ntt.cuh) step by step on the host with the kernels' own
 * bodies (shared-memory tiles, then global stages), against zk_fr_to_odd_coset. */
template <class F> static void emu_dit(F *x, uint32_t logn, const F *tw) {
    if (!logn) return;
    uint32_t S = logn < ZC_NTT_TILE_LOG ? logn : ZC_NTT_TILE_LOG;
    size_t T = (size_t)1 << S, n = (size_t)1 << logn;
    std::vector<F> tile(T);
    for (size_t base = 0; base < n; base += T) {
        std::copy(x + base, x + base + T, tile.begin());
        for (uint32_t st = 1; st <= S; st++)
            for (size_t t = 0; t < T / 2; t++) zc_b_butterfly(tile.data(), logn, st, tw, t);
        std::copy(tile.begin(), tile.end(), x + base);
    }
    for (uint32_t st = S + 1; st <= logn; st++)
        for (size_t t = 0; t < n / 2; t++) zc_b_butterfly(x, logn, st, tw, t);
}

template <class F>
static void emu_bitrev(const F *in, F *out, uint32_t logn, const F *lo, const F *hi, uint32_t split) {
    for (size_t i = 0; i < ((size_t)1 << logn); i++) {
        size_t j = 0;
        for (uint32_t b = 0; b < logn; b++) j |= ((i >> b) & 1) << (logn - 1 - b);
        zc_b_bitrev(in, out, logn, lo, hi, split, i, j);
    }
}

template <class F> static void emu_coset(F *x, uint32_t logn) {
    uint32_t split = (logn + 1) / 2, nlo = 1u << split, nhi = 1u << (logn - split);
    size_t n = (size_t)1 << logn, half = n / 2 ? n / 2 : 1;
    F w = zc_root<F>(logn), wi = zc_inv(w), w2 = zc_root<F>(logn + 1), ninv = zc_inv(zc_from_u64<F>(n));
    std::vector<F> lo(nlo), hi(nhi), tw_f(half), tw_i(half), co_lo(nlo), co_hi(nhi), tmp(n);
    zc_host_pow_halves(w, F::one(), logn, split, lo.data(), hi.data());
    for (size_t k = 0; k < half; k++) tw_f[k] = lo[k & (nlo - 1)] * hi[k >> split];
    zc_host_pow_halves(wi, F::one(), logn, split, lo.data(), hi.data());
    for (size_t k = 0; k < half; k++) tw_i[k] = lo[k & (nlo - 1)] * hi[k >> split];
    zc_host_pow_halves(w2, ninv, logn, split, co_lo.data(), co_hi.data());
    emu_bitrev<F>(x, tmp.data(), logn, nullptr, nullptr, 0);
    emu_dit(tmp.data(), logn, tw_i.data());
    emu_bitrev<F>(tmp.data(), x, logn, co_lo.data(), co_hi.data(), split);
    emu_dit(x, logn, tw_f.data());
}

#define NTT_EMU(PFX, DEV, CURVE)                                                                                       \
    TEST(PFX##_ntt_kernels_emulated) {                                                                                 \
        uint32_t logs[] = {1, 2, 5, 10, 11, 13};                                                                       \
        for (uint32_t logn : logs) {                                                                                   \
            size_t n = (size_t)1 << logn;                                                                              \
            std::vector<PFX##_fr_t> a(n), b(n), c(n);                                                                  \
            for (auto &v : a) RAND_FIELD(PFX##_fr, 4, v);                                                              \
            for (auto &v : b) RAND_FIELD(PFX##_fr, 4, v);                                                              \
            for (size_t i = 0; i < n; i++) PFX##_fr_mul(&c[i], &a[i], &b[i]);                                          \
            std::vector<DEV> x(n), y(n), z(n);                                                                         \
            memcpy(x.data(), a.data(), n * 32);                                                                        \
            memcpy(y.data(), b.data(), n * 32);                                                                        \
            memcpy(z.data(), c.data(), n * 32);                                                                        \
            emu_coset(x.data(), logn);                                                                                 \
            emu_coset(y.data(), logn);                                                                                 \
            emu_coset(z.data(), logn);                                                                                 \
            CHECK(zk_fr_to_odd_coset(&CURVE, a.data(), logn, 2) == 0);                                                 \
            CHECK(zk_fr_to_odd_coset(&CURVE, b.data(), logn, 2) == 0);                                                 \
            CHECK(zk_fr_to_odd_coset(&CURVE, c.data(), logn, 2) == 0);                                                 \
            CHECK_MSG(memcmp(x.data(), a.data(), n * 32) == 0, "coset 2^%u", logn);                                    \
            for (size_t i = 0; i < n; i++) {                                                                           \
                zc_b_abc(x.data(), y.data(), z.data(), i);                                                             \
                PFX##_fr_t p, q;                                                                                       \
                PFX##_fr_mul(&p, &a[i], &b[i]);                                                                        \
                PFX##_fr_sub(&p, &p, &c[i]);                                                                           \
                PFX##_fr_from_mont(&q, &p);                                                                            \
                CHECK_MSG(same(x[i], q), "P 2^%u i=%zu", logn, i);                                                     \
            }                                                                                                          \
        }                                                                                                              \
        return 0;                                                                                                      \
    }

NTT_EMU(bn, zc_bn_fr, zk_curve_bn128)
NTT_EMU(bls, zc_bls_fr, zk_curve_bls12381)
