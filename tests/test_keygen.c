/* zk/keygen: fixed-base products at every window width against double-and-add, and a generated key
 * read back by the zkey reader with its big point sections used in place (8-byte aligned). The
 * proofs made with generated keys are checked against snarkjs in tests/test_keygen.sh. */
#include <unistd.h>

#include "test.h"
#include "zk/curve.h"
#include "zk/keygen.h"
#include "zk/zkey.h"

TEST(fixed_base_all_windows) {
    const zk_curve_t *curves[2] = {&zk_curve_bn128, &zk_curve_bls12381};
    for (int ci = 0; ci < 2; ci++)
        for (unsigned c = 4; c <= 15; c++) {
            zk_err_t err = {{0}};
            int rc = zk_keygen_fixed_base_selftest(curves[ci], c, 40, &err);
            CHECK_MSG(rc == 0, "%s window %u: %s", curves[ci]->name, c, err.msg);
        }
    return 0;
}

static int key_in_place(const char *r1cs_rel) {
    char r1cs_path[512], zkey_path[] = "/tmp/test_keygen_XXXXXX";
    snprintf(r1cs_path, sizeof(r1cs_path), "%s/%s", TEST_DATA_DIR, r1cs_rel);
    int fd = mkstemp(zkey_path);
    CHECK(fd >= 0);
    close(fd);
    zk_err_t err = {{0}};
    zk_r1cs_t r;
    CHECK_MSG(zk_r1cs_open(&r, r1cs_path, &err) == 0, "%s", err.msg);
    zk_keygen_stats_t st;
    int rc = zk_keygen_insecure(&r, r1cs_path, zkey_path, NULL, 2, &st, &err);
    uint32_t npub = r.n_pub_out + r.n_pub_in, nwires = r.n_wires, m = r.n_constraints;
    zk_r1cs_close(&r);
    CHECK_MSG(rc == 0, "%s", err.msg);
    zk_zkey_t z;
    rc = zk_zkey_open(&z, zkey_path, &err);
    unlink(zkey_path);
    CHECK_MSG(rc == 0, "%s", err.msg);
    CHECK_EQ_INT(z.n_vars, nwires);
    CHECK_EQ_INT(z.n_pub, npub);
    CHECK_EQ_INT(z.domain_size, st.domain_size);
    CHECK(z.domain_size >= m + npub + 1 && z.domain_size / 2 < m + npub + 1);
    CHECK_EQ_INT(z.n_coefs, st.n_coefs);
    /* gamma2 is the generator, delta1 is not */
    int bn = z.curve->id == ZK_CURVE_BN128;
    CHECK(!memcmp(z.gamma2, bn ? (const void *)&bn_g2_gen : (const void *)&bls_g2_gen, z.curve->g2_size));
    CHECK(memcmp(z.delta1, bn ? (const void *)&bn_g1_gen : (const void *)&bls_g1_gen, z.curve->g1_size));
    /* Six or seven sections shift the alignment by 4 bytes each, so at least 3 of the 5 point
     * sections can start 8-byte aligned, B2 (the largest) always. */
    int in_place = 0;
    for (int id = 5; id <= 9; id++) in_place += z.copies[id] == NULL;
    CHECK_MSG(in_place >= 3, "%d point sections in place", in_place);
    CHECK(z.copies[7] == NULL);
    zk_zkey_close(&z);
    return 0;
}

TEST(bn128_key_reads_back) { return key_in_place("bn128/mulchain/mulchain.r1cs"); }
TEST(bls12381_key_reads_back) { return key_in_place("bls12381/mulchain/mulchain.r1cs"); }
TEST(bn128_medium_key_reads_back) { return key_in_place("bn128/medium/medium.r1cs"); }
