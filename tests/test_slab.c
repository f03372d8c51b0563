/* The slab layout (shm/slab.h) and slab_size = auto (plan/slab.c). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "plan/slab.h"
#include "config/config.h"
#include "shm/slab.h"
#include "test.h"

TEST(layout) {
    /* medium: nVars 16060, domain 16384 -> 4 KiB + 508 KiB + 3 x 512 KiB = exactly 2 MiB */
    shm_slab_layout_t l = shm_slab_layout(16060, 16384);
    CHECK_EQ_INT(l.bytes, 2u << 20);
    CHECK_EQ_INT(l.abc_each, 512u << 10);
    CHECK_EQ_INT(l.a_off, 4096 + (508u << 10));
    CHECK_EQ_INT(l.b_off, l.a_off + l.abc_each);
    CHECK_EQ_INT(l.c_off, l.b_off + l.abc_each);
    /* the witness image: values land 128-byte aligned (a .wtns has them at byte 76) */
    CHECK_EQ_INT((l.wtns_off + 76) % 128, 0);
    CHECK(l.wtns_cap >= 16060ull * 32 + 76);
    CHECK_EQ_INT(l.wtns_off + l.wtns_cap, l.a_off);
    return 0;
}

TEST(resolve_auto) {
    cfg_t c;
    char err[1024], ini[2048];
    snprintf(ini, sizeof ini, "[circuit mul]\nzkey = %s\n[circuit medium]\nzkey = %s\n",
             test_data("bn128/mulchain/mulchain.zkey"), test_data("bn128/medium/medium.zkey"));
    CHECK_MSG(cfg_load_string(&c, "auto.ini", ini, err, sizeof err) == 0, "%s", err);
    CHECK_MSG(slab_resolve_size(&c, err, sizeof err) == 0, "%s", err);
    CHECK_EQ_INT(c.slab_size, 2u << 20);
    /* an explicit size is kept when every circuit fits */
    snprintf(ini, sizeof ini, "[pipeline]\nslab_size = 4M\n[circuit medium]\nzkey = %s\n",
             test_data("bn128/medium/medium.zkey"));
    CHECK(cfg_load_string(&c, "fixed.ini", ini, err, sizeof err) == 0);
    CHECK_MSG(slab_resolve_size(&c, err, sizeof err) == 0, "%s", err);
    CHECK_EQ_INT(c.slab_size, 4u << 20);
    return 0;
}

TEST(resolve_errors_name_the_ini_line_and_file) {
    cfg_t c;
    char err[1024];
    CHECK(cfg_load_string(&c, "m.ini", "[circuit x]\nzkey = /nonexistent.zkey\n", err, sizeof err) == 0);
    CHECK(slab_resolve_size(&c, err, sizeof err) < 0);
    CHECK_STR_CONTAINS(err, "m.ini:1: [circuit x]: /nonexistent.zkey: cannot open");
    char ini[1024];
    snprintf(ini, sizeof ini, "[circuit w]\nzkey = %s\n", test_data("bad/wrong_magic.zkey"));
    CHECK(cfg_load_string(&c, "w.ini", ini, err, sizeof err) == 0);
    CHECK(slab_resolve_size(&c, err, sizeof err) < 0);
    CHECK_STR_CONTAINS(err, "wrong_magic.zkey");
    CHECK(cfg_load_string(&c, "e.ini", "[pipeline]\nname = x\n", err, sizeof err) == 0);
    CHECK(slab_resolve_size(&c, err, sizeof err) == -EINVAL);
    CHECK_STR_CONTAINS(err, "slab_size = auto needs at least one [circuit NAME] section");
    return 0;
}
