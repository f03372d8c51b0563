/* G1/G2 bucket arithmetic for the CUDA backend: affine inputs in the zkey layout (all-zero =
 * infinity), accumulation in XYZZ (x = X/ZZ, y = Y/ZZZ; ZZ = 0 is infinity). The formulas and
 * their special cases are those of zk/ec_tmpl.h, so host and device agree limb for limb. */
#pragma once
#include "ff.cuh"

template <class F> struct zc_aff {
    F x, y;
    ZC_HD bool is_inf() const { return x.is_zero() && y.is_zero(); }
    ZC_HD zc_aff neg() const { return {x, y.neg()}; }
};

template <class F> struct zc_xyzz {
    F x, y, zz, zzz;
    typedef zc_aff<F> aff_t;

    ZC_HD static zc_xyzz inf() { return {F::zero(), F::zero(), F::zero(), F::zero()}; }
    ZC_HD bool is_inf() const { return zz.is_zero(); }
    ZC_HD static zc_xyzz from_aff(const aff_t &p) {
        if (p.is_inf()) return inf();
        return {p.x, p.y, F::one(), F::one()};
    }
    ZC_HD zc_xyzz neg() const { return {x, y.neg(), zz, zzz}; }

    /* dbl-2008-s-1 */
    ZC_HD_CALL zc_xyzz dbl() const {
        if (is_inf() || y.is_zero()) return inf();
        F u = y.dbl();
        F v = u.sqr();
        F w = u * v;
        F s = x * v;
        F m = x.sqr();
        m = m + m.dbl();
        zc_xyzz r;
        r.zz = v * zz;
        r.zzz = w * zzz;
        w = w * y;
        F t = m.sqr() - s;
        r.x = t - s;
        r.y = (s - r.x) * m - w;
        return r;
    }

    /* madd-2008-s: this + q, q affine */
    ZC_HD_CALL zc_xyzz add(const aff_t &q) const {
        if (q.is_inf()) return *this;
        if (is_inf()) return from_aff(q);
        F P = q.x * zz - x;
        F R = q.y * zzz - y;
        if (P.is_zero()) {
            if (R.is_zero()) return from_aff(q).dbl();
            return inf();
        }
        F pp = P.sqr();
        F ppp = P * pp;
        F qq = x * pp;
        zc_xyzz r;
        r.zz = zz * pp;
        r.zzz = zzz * ppp;
        F y1ppp = y * ppp;
        F t = (R.sqr() - ppp) - qq;
        r.x = t - qq;
        r.y = (qq - r.x) * R - y1ppp;
        return r;
    }

    /* add-2008-s: this + q */
    ZC_HD_CALL zc_xyzz add(const zc_xyzz &q) const {
        if (q.is_inf()) return *this;
        if (is_inf()) return q;
        F u1 = x * q.zz;
        F u2 = q.x * zz;
        F s1 = y * q.zzz;
        F s2 = q.y * zzz;
        F P = u2 - u1;
        F R = s2 - s1;
        if (P.is_zero()) {
            if (R.is_zero()) return dbl();
            return inf();
        }
        F pp = P.sqr();
        F ppp = P * pp;
        F qq = u1 * pp;
        zc_xyzz r;
        r.zz = (zz * q.zz) * pp;
        r.zzz = (zzz * q.zzz) * ppp;
        s1 = s1 * ppp;
        F t = (R.sqr() - ppp) - qq;
        r.x = t - qq;
        r.y = (qq - r.x) * R - s1;
        return r;
    }

    /* k*this for a small k (bucket-segment weights), double-and-add from the top bit */
    ZC_HD_CALL zc_xyzz mul_small(uint32_t k) const {
        zc_xyzz acc = inf();
        for (int i = 31; i >= 0; i--) {
            acc = acc.dbl();
            if ((k >> i) & 1) acc = acc.add(*this);
        }
        return acc;
    }
};

typedef zc_xyzz<zc_bn_fq> zc_bn_g1;
typedef zc_xyzz<zc_bn_fq2> zc_bn_g2;
typedef zc_xyzz<zc_bls_fq> zc_bls_g1;
typedef zc_xyzz<zc_bls_fq2> zc_bls_g2;

/* Signed windowed digits of a 256-bit scalar (8 LE words, < 2^255): digit w of c bits, in
 * (-2^(c-1), 2^(c-1)], such that Σ d_w 2^(c·w) = scalar. carry is the borrow from the window below
 * (0 or 1) and is updated. Windows: ceil(256/c) always suffice since bit 255 is clear. */
ZC_HD int zc_window_digit(const uint32_t *s, int w, int c, uint32_t *carry) {
    int bit = w * c;
    uint32_t v = 0;
    if (bit < 256) {
        int word = bit >> 5, sh = bit & 31;
        uint64_t pair = s[word];
        if (word + 1 < 8) pair |= (uint64_t)s[word + 1] << 32;
        v = (uint32_t)(pair >> sh) & ((1u << c) - 1);
    }
    v += *carry;
    if (v > (1u << (c - 1))) {
        *carry = 1;
        return (int)v - (1 << c);
    }
    *carry = 0;
    return (int)v;
}
