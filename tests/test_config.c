/* config/: the ini parser, its file:line errors and sizes (slab sizing: tests/test_slab.c). */
#include "config/config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/stat.h>
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
                      "[gpu]\ndevices = 2\nbackend = cpu\nprecompute = 1536M\n"
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
    CHECK(c.gpu_precompute == 1536ull << 20);
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
    CHECK(c.gpu_precompute == 0); /* no window tables unless asked for */
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
    /* [finalizer] threads was documented as reserved and read nowhere (issue 20): refused by name */
    CHECK(cfg_load_string(&c, "f.ini", "[finalizer]\nthreads = 2\n", err, sizeof err) == -EINVAL);
    CHECK_STR_CONTAINS(err, "f.ini:2: threads in [finalizer] is not a setting");
    CHECK(cfg_load_string(&c, "d.ini", "[pipline]\nslabs = 2\n", err, sizeof err) == -EINVAL);
    CHECK_STR_CONTAINS(err, "d.ini:1: unknown section [pipline]");
    CHECK_STR_CONTAINS(err, "(expected pipeline, synth, gpu, finalizer, exporter, api, source postgres, circuit NAME)");
    CHECK(cfg_load_string(&c, "e.ini", "[gpu]\nbackend = opencl\n", err, sizeof err) == -EINVAL);
    CHECK_STR_CONTAINS(err, "e.ini:2: backend = opencl");
    CHECK(cfg_load_string(&c, "e2.ini", "[gpu]\nprecompute = lots\n", err, sizeof err) == -EINVAL);
    CHECK_STR_CONTAINS(err, "e2.ini:2: precompute = lots: expected a size");
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
    /* a FIFO where the ini belongs: refused at once, never waited on (fopen blocked on it before) */
    char fifo[] = "/tmp/zkpipe-test-config-XXXXXX";
    CHECK(mkdtemp(fifo) != NULL);
    char path[64];
    snprintf(path, sizeof path, "%s/zk.ini", fifo);
    CHECK(mkfifo(path, 0600) == 0);
    CHECK(cfg_load(&c, path, err, sizeof err) < 0);
    CHECK_STR_CONTAINS(err, "zk.ini");
    CHECK_STR_CONTAINS(err, "FIFO");
    unlink(path);
    /* a NUL byte inside: not an ini, said so (it used to end the file early) */
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
    CHECK(fd >= 0 && write(fd, "[pipeline]\nslabs = 2\0junk\n", 27) == 27);
    close(fd);
    CHECK(cfg_load(&c, path, err, sizeof err) == -EINVAL);
    CHECK_STR_CONTAINS(err, "has a NUL byte");
    unlink(path);
    rmdir(fifo);
    return 0;
}

/* [api] (docs/api.md): defaults, every key, and unknown keys or bad values refused with file:line. */
TEST(api_section) {
    cfg_t c;
    char err[512];
    CHECK(cfg_load_string(&c, "d.ini", "", err, sizeof err) == 0);
    CHECK(!strcmp(c.api_host, "127.0.0.1") && c.api_port == 9080);
    CHECK(!strcmp(c.api_tokens, "/etc/zkpipe/api-tokens"));
    CHECK(c.api_max_body == 64ull << 20 && c.api_max_partitions == 16 && c.api_max_wait == 60);
    CHECK(c.api_max_connections == 1024 && c.api_compat == CFG_COMPAT_OFF);
    CHECK_MSG(cfg_load_string(&c, "a.ini",
                              "[api]\nlisten = [::1]:8443\ntokens = /etc/t\nmax_body = 1M\nmax_partitions = 256\n"
                              "max_wait = 0\nmax_connections = 4096\nrapidsnark_compat = yes\nhosts = a.example, B\n",
                              err, sizeof err) == 0,
              "%s", err);
    CHECK(!strcmp(c.api_host, "::1") && c.api_port == 8443 && !strcmp(c.api_tokens, "/etc/t"));
    CHECK(c.api_max_body == 1u << 20 && c.api_max_partitions == 256 && c.api_max_wait == 0);
    CHECK(c.api_max_connections == 4096 && c.api_compat == CFG_COMPAT_OPEN && !strcmp(c.api_hosts, "a.example,b"));
    CHECK(cfg_load_string(&c, "b.ini", "[api]\nlisten = 0.0.0.0:9080\nrapidsnark_compat = token\n", err, sizeof err) == 0);
    CHECK(c.api_compat == CFG_COMPAT_TOKEN);
    static const struct {
        const char *ini, *want;
    } bad[] = {
        {"[api]\nlisten = 1.2.3.4:9080\nmax_threads = 4\n", "e.ini:3: unknown key 'max_threads' in [api]"},
        {"[api]\nlisten = localhost:9080\n", "e.ini:2: listen = localhost:9080: expected ADDRESS:PORT"},
        {"[api]\nmax_body = 10\n", "e.ini:2: max_body = 10: expected a size from 1K to 4G"},
        {"[api]\nmax_partitions = 257\n", "e.ini:2: max_partitions = 257: expected 1 to 256"},
        {"[api]\nmax_wait = 1h\n", "e.ini:2: max_wait = 1h: expected seconds"},
        {"[api]\nmax_connections = 2\n", "e.ini:2: max_connections = 2: expected 16 to 65536"},
        {"[api]\nrapidsnark_compat = maybe\n", "e.ini:2: rapidsnark_compat = maybe: expected no, yes"},
        {"[api]\nlisten = 0.0.0.0:9080\nrapidsnark_compat = yes\n", "needs a loopback listen (not 0.0.0.0)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        CHECK_MSG(cfg_load_string(&c, "e.ini", bad[i].ini, err, sizeof err) == -EINVAL, "case %zu accepted", i);
        CHECK_STR_CONTAINS(err, bad[i].want);
    }
    return 0;
}

/* A long path (inih's compiled line limit is 200) is read whole, from a file and from a string; a
 * line longer than the limit is an error naming the file, the line and the limit, never cut in two. */
TEST(long_lines) {
    static char ini[12000], path[1100], err[1024];
    cfg_t c;
    memset(path, 0, sizeof path);
    path[0] = '/';
    for (size_t i = 1; i < 1000; i++) path[i] = i % 50 == 0 ? '/' : 'a' + (char)(i % 26);
    snprintf(ini, sizeof ini, "[pipeline]\nspool = %s\n[circuit long]\nzkey = %s.zkey\n", path, path);
    char file[] = "/tmp/zkpipe-test-config-XXXXXX";
    int fd = mkstemp(file);
    CHECK(fd >= 0);
    CHECK(write(fd, ini, strlen(ini)) == (ssize_t)strlen(ini));
    close(fd);
    for (int from_file = 0; from_file < 2; from_file++) {
        int rc = from_file ? cfg_load(&c, file, err, sizeof err) : cfg_load_string(&c, "l.ini", ini, err, sizeof err);
        CHECK_MSG(rc == 0, "%s", err);
        CHECK(!strcmp(c.spool, path));
        CHECK_EQ_INT(c.n_circuits, 1);
        CHECK(!strncmp(c.circuits[0].zkey, path, 1000) && !strcmp(c.circuits[0].zkey + 1000, ".zkey"));
    }
    /* a line over the limit: a clear error, whatever the rest of the line looks like */
    size_t n = (size_t)snprintf(ini, sizeof ini, "[pipeline]\n# %s\nspool = /", path);
    for (int i = 0; i < 5000; i++) ini[n++] = i == 3000 ? '=' : 'x';
    snprintf(ini + n, sizeof ini - n, "\nslabs = 2\n");
    fd = open(file, O_WRONLY | O_TRUNC);
    CHECK(fd >= 0);
    CHECK(write(fd, ini, strlen(ini)) == (ssize_t)strlen(ini));
    close(fd);
    for (int from_file = 0; from_file < 2; from_file++) {
        int rc = from_file ? cfg_load(&c, file, err, sizeof err) : cfg_load_string(&c, "l.ini", ini, err, sizeof err);
        CHECK_EQ_INT(rc, -EINVAL);
        CHECK_STR_CONTAINS(err, from_file ? ":3: line is longer than " : "l.ini:3: line is longer than ");
        CHECK_STR_CONTAINS(err, "characters (the longest line the ini parser takes)");
        if (from_file) CHECK_STR_CONTAINS(err, file);
    }
    unlink(file);
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
