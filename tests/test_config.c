/* config/: the ini parser, its file:line errors, sizes and slab_size = auto. */
#include "config/config.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "test.h"

TEST(sizes) {
    uint64_t v;
    CHECK(cfg_parse_size("123", &v) == 0 && v == 123);
    CHECK(cfg_parse_size("4K", &v) == 0 && v == 4096);
    CHECK(cfg_parse_size("2M", &v) == 0 && v == 2u << 20);
    CHECK(cfg_parse_size("3G", &v) == 0 && v == 3ull << 30);
    CHECK(cfg_parse_size("1GiB", &v) == 0 && v == 1ull << 30);
    CHECK(cfg_parse_size("12X", &v) < 0);
    CHECK(cfg_parse_size("", &v) < 0);
    CHECK(cfg_parse_size("-1M", &v) < 0);
    CHECK(cfg_parse_size("99999999999999999999", &v) < 0);
    return 0;
}

TEST(full_file) {
    cfg_t c;
    char err[512] = "";
    const char *ini = "# comment\n"
                      "[pipeline]\nname = t1\nspool = /tmp/zk-spool\nslabs = 6\nslab_size = 64M\nreserve_critical = 1\n"
                      "[synth]\ninstances = 3\ntrim = 256M\n"
                      "[gpu]\ndevices = 2\nbackend = cpu\n"
                      "[finalizer]\nverify = no\n"
                      "[circuit mul]\nzkey = /x/m.zkey\nr1cs = m.r1cs\npriority = high\npreload = no\n";
    CHECK_MSG(cfg_load_string(&c, "/etc/zk/t.ini", ini, err, sizeof err) == 0, "%s", err);
    CHECK(!strcmp(c.name, "t1"));
    CHECK(!strcmp(c.spool, "/tmp/zk-spool"));
    CHECK(!strcmp(c.segment, "/dev/shm/zkpipe-t1"));
    CHECK_EQ_INT(c.slabs, 6);
    CHECK_EQ_INT(c.slab_size, 64u << 20);
    CHECK(!c.slab_size_auto);
    CHECK_EQ_INT(c.reserve_critical, 1);
    CHECK_EQ_INT(c.synth_instances, 3);
    CHECK_EQ_INT(c.trim, CFG_TRIM_ABOVE);
    CHECK_EQ_INT(c.trim_above, 256u << 20);
    CHECK_EQ_INT(c.gpu_devices, 2);
    CHECK_EQ_INT(c.backend, CFG_BACKEND_CPU);
    CHECK(!c.verify);
    CHECK_EQ_INT(c.n_circuits, 1);
    const cfg_circuit_t *ci = cfg_circuit(&c, "mul");
    CHECK(ci);
    CHECK(!strcmp(ci->zkey, "/x/m.zkey"));
    CHECK(!strcmp(ci->r1cs, "/etc/zk/m.r1cs")); /* relative to the ini's folder */
    CHECK_EQ_INT(ci->priority, CFG_PRIO_HIGH);
    CHECK(!ci->preload);
    return 0;
}

TEST(defaults) {
    cfg_t c;
    char err[512];
    CHECK(cfg_load_string(&c, "d.ini", "", err, sizeof err) == 0);
    CHECK(!strcmp(c.name, "main"));
    CHECK(!strcmp(c.spool, "/var/spool/zkpipe/main"));
    CHECK(c.slab_size_auto && c.slab_size == 0);
    CHECK(c.verify);
    CHECK_EQ_INT(c.slabs, 8);
    return 0;
}

TEST(errors_have_file_and_line) {
    cfg_t c;
    char err[512];
    CHECK(cfg_load_string(&c, "a.ini", "[pipeline]\nname = x\nbogus = 1\n", err, sizeof err) == -EINVAL);
    CHECK_STR_CONTAINS(err, "a.ini:3: unknown key 'bogus' in [pipeline]");
    CHECK(cfg_load_string(&c, "b.ini", "[pipeline]\n\nslab_size = 3M\n", err, sizeof err) == -EINVAL);
    CHECK_STR_CONTAINS(err, "b.ini:3: slab_size = 3M: must be a multiple of 2M");
    CHECK(cfg_load_string(&c, "c.ini", "[pipeline]\nslabs = lots\n", err, sizeof err) == -EINVAL);
    CHECK_STR_CONTAINS(err, "c.ini:2: slabs = lots");
    CHECK(cfg_load_string(&c, "d.ini", "[pipline]\nslabs = 2\n", err, sizeof err) == -EINVAL);
    CHECK_STR_CONTAINS(err, "d.ini:1: unknown section [pipline]");
    CHECK(cfg_load_string(&c, "e.ini", "[gpu]\nbackend = opencl\n", err, sizeof err) == -EINVAL);
    CHECK_STR_CONTAINS(err, "e.ini:2: backend = opencl");
    CHECK(cfg_load_string(&c, "f.ini", "[circuit a]\nzkey=/a\n[circuit a]\nzkey=/b\n", err, sizeof err) == -EINVAL);
    CHECK_STR_CONTAINS(err, "f.ini:3: [circuit a] is defined twice");
    CHECK(cfg_load_string(&c, "g.ini", "[circuit a]\nr1cs = /x\n", err, sizeof err) == -EINVAL);
    CHECK_STR_CONTAINS(err, "g.ini:1: [circuit a] has no zkey");
    CHECK(cfg_load_string(&c, "h.ini", "[pipeline]\nslabs = 2\nreserve_critical = 2\n", err, sizeof err) == -EINVAL);
    CHECK_STR_CONTAINS(err, "reserve_critical = 2 leaves no slab");
    CHECK(cfg_load_string(&c, "i.ini", "[finalizer]\nverify = maybe\n", err, sizeof err) == -EINVAL);
    CHECK_STR_CONTAINS(err, "i.ini:2: verify = maybe");
    CHECK(cfg_load_string(&c, "j.ini", "[synth]\nthis line is not ini\n", err, sizeof err) == -EINVAL);
    CHECK_STR_CONTAINS(err, "j.ini:2:");
    CHECK(cfg_load(&c, "/nonexistent/zk.ini", err, sizeof err) == -ENOENT);
    CHECK_STR_CONTAINS(err, "/nonexistent/zk.ini: cannot open");
    return 0;
}

TEST(slab_size_auto) {
    cfg_t c;
    char err[1024], ini[2048];
    snprintf(ini, sizeof ini, "[circuit mul]\nzkey = %s\n[circuit medium]\nzkey = %s\n",
             test_data("bn128/mulchain/mulchain.zkey"), test_data("bn128/medium/medium.zkey"));
    CHECK_MSG(cfg_load_string(&c, "auto.ini", ini, err, sizeof err) == 0, "%s", err);
    CHECK_MSG(cfg_resolve_slab_size(&c, err, sizeof err) == 0, "%s", err);
    /* medium: nVars 16060, domain 16384 -> 4 KiB + 508 KiB + 3 x 512 KiB = exactly 2 MiB */
    CHECK_EQ_INT(cfg_slab_bytes_needed(16060, 16384), 2u << 20);
    CHECK_EQ_INT(c.slab_size, 2u << 20);
    cfg_zkey_info_t zi;
    CHECK(cfg_zkey_info(test_data("bls12381/mulchain/mulchain.zkey"), &zi, err, sizeof err) == 0);
    CHECK(!strcmp(zi.curve, "bls12381"));
    CHECK_EQ_INT(zi.n_vars, 1003);
    CHECK_EQ_INT(zi.domain_size, 1024);
    /* an explicit size too small for a circuit is refused with the circuit's line */
    char big[64];
    snprintf(big, sizeof big, "/tmp/zkpipe-test-config-%d.zkey", (int)getpid());
    FILE *f = fopen(big, "wb");
    CHECK(f);
    uint32_t hdr[3] = {0x79656b7a /* "zkey" */, 1, 1}, n8 = 32, tail[3] = {1000, 1, 1u << 16};
    uint32_t sec[3] = {2, 4 + 32 + 4 + 32 + 12, 0}; /* type, size (u64) */
    uint8_t field[32] = {1};
    fwrite(hdr, 4, 3, f);
    fwrite(sec, 4, 3, f);
    fwrite(&n8, 4, 1, f);
    fwrite(field, 1, 32, f);
    fwrite(&n8, 4, 1, f);
    fwrite(field, 1, 32, f);
    fwrite(tail, 4, 3, f);
    fclose(f);
    snprintf(ini, sizeof ini, "[pipeline]\nslab_size = 2M\n[circuit big]\nzkey = %s\n", big);
    CHECK(cfg_load_string(&c, "small.ini", ini, err, sizeof err) == 0);
    int r = cfg_resolve_slab_size(&c, err, sizeof err);
    unlink(big);
    CHECK_EQ_INT(r, -E2BIG);
    CHECK_STR_CONTAINS(err, "small.ini:3: [circuit big] needs slabs of 8 MiB, slab_size is 2 MiB");
    /* a missing zkey names the file */
    CHECK(cfg_load_string(&c, "m.ini", "[circuit x]\nzkey = /nonexistent.zkey\n", err, sizeof err) == 0);
    CHECK(cfg_resolve_slab_size(&c, err, sizeof err) < 0);
    CHECK_STR_CONTAINS(err, "/nonexistent.zkey: cannot open");
    CHECK(cfg_zkey_info(test_data("bad/wrong_magic.zkey"), &zi, err, sizeof err) < 0);
    CHECK_STR_CONTAINS(err, "not a .zkey");
    return 0;
}

TEST(priorities) {
    CHECK_EQ_INT(cfg_parse_priority("CRITICAL"), 0);
    CHECK_EQ_INT(cfg_parse_priority("low"), 3);
    CHECK(cfg_parse_priority("urgent") < 0);
    CHECK(!strcmp(cfg_priority_name(1), "HIGH"));
    return 0;
}

TEST(example_ini_parses) {
    char path[1024], err[1024];
    const char *root = getenv("ZKPIPE_SOURCE_ROOT");
    if (!root) return TEST_SKIP;
    snprintf(path, sizeof path, "%s/config/zkpipe.ini.example", root);
    cfg_t c;
    CHECK_MSG(cfg_load(&c, path, err, sizeof err) == 0, "%s", err);
    CHECK(c.n_circuits >= 1);
    return 0;
}

TEST(witness_generators) {
    static cfg_t c;
    char err[600];
    const char *ini = "[pipeline]\ncache = /var/cache/zk\n"
                      "[circuit a]\nzkey = a.zkey\nwasm = a_js/a.wasm\nwitness_memory = 512M\n"
                      "[circuit b]\nzkey = /b.zkey\nwitness_cmd = bin/gen --fast\nwitness_timeout = 30\n"
                      "[circuit c]\nzkey = /c.zkey\nwitness_cmd = witnesscalc\n";
    CHECK_MSG(cfg_load_string(&c, "/etc/zk/w.ini", ini, err, sizeof err) == 0, "%s", err);
    CHECK(!strcmp(c.cache, "/var/cache/zk"));
    CHECK(!strcmp(c.circuits[0].wasm, "/etc/zk/a_js/a.wasm"));
    CHECK_EQ_INT(c.circuits[0].witness_memory, 512ull << 20);
    CHECK_EQ_INT(c.circuits[0].witness_timeout, 600);
    CHECK(!strcmp(c.circuits[1].witness_cmd, "/etc/zk/bin/gen --fast")); /* relative to the ini */
    CHECK_EQ_INT(c.circuits[1].witness_timeout, 30);
    CHECK(!strcmp(c.circuits[2].witness_cmd, "witnesscalc")); /* looked up in PATH */
    CHECK(cfg_load_string(&c, "d.ini", "", err, sizeof err) == 0);
    CHECK(!strcmp(c.cache, "/var/cache/zkpipe/main"));
    CHECK(cfg_load_string(&c, "x.ini", "[circuit a]\nzkey = /a\nwasm = /a.wasm\nwitness_cmd = g\n", err, sizeof err) ==
          -EINVAL);
    CHECK_STR_CONTAINS(err, "x.ini:1: [circuit a] has both wasm and witness_cmd");
    CHECK(cfg_load_string(&c, "y.ini", "[circuit a]\nzkey = /a\nwitness_timeout = soon\n", err, sizeof err) == -EINVAL);
    CHECK_STR_CONTAINS(err, "y.ini:3: witness_timeout = soon");
    CHECK(cfg_load_string(&c, "z.ini", "[circuit a]\nzkey = /a\nwitness_memory = 10\n", err, sizeof err) == -EINVAL);
    CHECK_STR_CONTAINS(err, "z.ini:3: witness_memory = 10");
    CHECK(cfg_load_string(&c, "v.ini", "[pipeline]\ncache = rel\n", err, sizeof err) == -EINVAL);
    CHECK_STR_CONTAINS(err, "cache = rel: must be an absolute path");
    return 0;
}
