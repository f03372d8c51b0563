/* wasm2c's circuit.c -> units the C compiler builds in parallel (docs/witgen.md, "The wasm path").
 *
 * wasm2c 1.0.32 writes one file: the preamble (macros, static helpers, the forward declarations of
 * every function, func_types), the data segments as byte-array initializers, the init functions,
 * the function definitions and the exports. For a large circuit most of it is data (32 of 44 MB at
 * 2^20, and the share grows with the circuit), which costs the C compiler more than the code; the
 * code is a few templates of any size. So:
 *   - every data segment goes into a binary file DIR/<name>.bin, included by the assembler
 *     (`.incbin`, the compiler runs in DIR); the C keeps an extern declaration of the same size;
 *   - the preamble becomes DIR/pre.c, included by the main unit (circuit.c, still #included by the
 *     glue) and by every DIR/unit-K.c;
 *   - the definitions of the circuit's functions (all but the field runtime w2c_Fr_*, which stays in
 *     the main unit with the fingerprinted code) are dealt into the units (one per 512 KiB of them
 *     at most; none for a small circuit), largest first onto the lightest; they lose `static` (the object is built with
 * -fvisibility=hidden, so nothing more is exported), func_types is defined in the main unit and extern in the others,
 * and the native field runtime (fr_native.c, all static) is compiled into every unit so that it still inlines;
 *   - in those functions, every run of copies of constants (circom sets constant arrays one value
 *     at a time: circomlib's MixS copies 289 values per run, POSEIDON_S's text is 5.7 MB of them)
 *     becomes a loop over a table (fold_copies, below);
 *   - a giant function, being the largest, is dealt first and stays alone.
 * Anything in the text that is not laid out as expected leaves circuit.c as it is (one unit). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file.h"

#include "module.h"
#include "split.h"

#define WITGEN_FR_NAME(name, kind) "w2c_Fr_" #name,
static const char *const native_names[] = {WITGEN_FR_NATIVES(WITGEN_FR_NAME)};
#undef WITGEN_FR_NAME

typedef struct {
    char *b;
    size_t n, cap;
} buf_t;

static bool put(buf_t *o, const char *s, size_t n) {
    if (o->n + n + 1 > o->cap) {
        size_t c = o->cap ? o->cap : 1 << 16;
        while (c < o->n + n + 1) c *= 2;
        char *b = realloc(o->b, c);
        if (!b) return false;
        o->b = b, o->cap = c;
    }
    memcpy(o->b + o->n, s, n);
    o->n += n;
    o->b[o->n] = 0;
    return true;
}
static bool puts_(buf_t *o, const char *s) { return put(o, s, strlen(s)); }

int witgen_write_file(const char *path, const void *data, size_t n) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) return -errno;
    int r = fchmod(fd, 0644) < 0 ? -errno : fd_write_all(fd, data, n);
    if (close(fd) < 0 && r >= 0) r = -errno;
    return r < 0 ? r : 0;
}

static int write_all(const char *dir, const char *name, const void *data, size_t n) {
    char p[1300];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return witgen_write_file(p, data, n);
}

/* "w2c_NAME" at p, as a C identifier: its length, 0 when p does not start with one */
static size_t ident_len(const char *p) {
    if (strncmp(p, "w2c_", 4)) return 0;
    size_t n = 4;
    while ((p[n] >= 'a' && p[n] <= 'z') || (p[n] >= 'A' && p[n] <= 'Z') || (p[n] >= '0' && p[n] <= '9') || p[n] == '_')
        n++;
    return n;
}

static bool is_native(const char *name, size_t n, int fr_curve) {
    if (!fr_curve) return false;
    for (size_t i = 0; i < sizeof native_names / sizeof native_names[0]; i++)
        if (strlen(native_names[i]) == n && !strncmp(native_names[i], name, n)) return true;
    return false;
}

/* A line "static TYPE w2c_NAME(Z_circuit_instance_t*..." at line: where the name starts, else NULL */
static const char *fn_line(const char *line, const char *eol) {
    if (strncmp(line, "static ", 7)) return NULL;
    const char *p = strstr(line, " w2c_");
    if (!p || p > eol) return NULL;
    p++;
    size_t n = ident_len(p);
    if (!n || strncmp(p + n, "(Z_circuit_instance_t*", 22)) return NULL;
    return p;
}

/* Appends the preamble [s, e) to o with `static` dropped from the forward declarations of every
 * function that is not a native one, and func_types made WITGEN_SHARED. false: not as expected. */
static bool rewrite_preamble(buf_t *o, const char *s, const char *e, int fr_curve) {
    bool ft = false;
    if (!puts_(o, "#ifdef WITGEN_UNIT\n#define WITGEN_SHARED extern\n#else\n#define WITGEN_SHARED\n#endif\n"))
        return false;
    while (s < e) {
        const char *eol = memchr(s, '\n', (size_t)(e - s));
        eol = eol ? eol + 1 : e;
        const char *nm = fn_line(s, eol);
        if (nm && !is_native(nm, ident_len(nm), fr_curve)) {
            if (!put(o, s + 7, (size_t)(eol - s - 7))) return false;
        } else if (!strncmp(s, "static u32 func_types[", 22)) {
            if (!puts_(o, "WITGEN_SHARED u32 func_types[") || !put(o, s + 22, (size_t)(eol - s - 22))) return false;
            ft = true;
        } else if (!put(o, s, (size_t)(eol - s))) {
            return false;
        }
        s = eol;
    }
    return ft;
}

static int hexval(char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1; }

/* The data segments of [s, e) into DIR/<name>.bin, the rest of the text as it is; false: not as
 * expected (or a file could not be written: *werr). */
static bool rewrite_data(buf_t *o, const char *dir, const char *s, const char *e, int *werr) {
    static const char head[] = "static const u8 data_segment_data_";
    uint8_t *bytes = NULL;
    size_t cap = 0;
    bool ok = true;
    while (ok && s < e) {
        const char *d = strstr(s, head);
        if (!d || d >= e) {
            ok = put(o, s, (size_t)(e - s));
            break;
        }
        if (!put(o, s, (size_t)(d - s))) {
            ok = false;
            break;
        }
        const char *nm = d + strlen("static const u8 ");
        size_t nl = 0;
        while (nm[nl] && nm[nl] != '[') nl++;
        const char *p = nm + nl;
        if (strncmp(p, "[] = {\n", 7) || nl > 200) {
            ok = false;
            break;
        }
        p += 7;
        size_t n = 0;
        for (;;) {
            while (*p == ' ' || *p == '\n') p++;
            if (!strncmp(p, "};\n", 3)) break;
            int hi = hexval(p[2]), lo = hexval(p[3]);
            if (p[0] != '0' || p[1] != 'x' || hi < 0 || lo < 0 || p[4] != ',') {
                ok = false;
                break;
            }
            if (n == cap) {
                cap = cap ? cap * 2 : 4096;
                uint8_t *nb = realloc(bytes, cap);
                if (!nb) {
                    ok = false;
                    break;
                }
                bytes = nb;
            }
            bytes[n++] = (uint8_t)(hi << 4 | lo);
            p += 5;
        }
        if (!ok) break;
        char name[220], file[240], txt[1600];
        snprintf(name, sizeof name, "%.*s", (int)nl, nm);
        snprintf(file, sizeof file, "%s.bin", name);
        int r = write_all(dir, file, bytes, n);
        if (r < 0) {
            *werr = r;
            ok = false;
            break;
        }
        snprintf(txt, sizeof txt,
                 "extern const u8 %s[%zu] __attribute__((visibility(\"hidden\")));\n"
                 "__asm__(\".pushsection .rodata\\n.balign 16\\n.type %s, @object\\n.size %s, %zu\\n%s:\\n"
                 ".incbin \\\"%s\\\"\\n.popsection\\n\");\n",
                 name, n, name, name, n, name, file);
        if (!puts_(o, txt)) ok = false;
        s = p + 3;
    }
    free(bytes);
    return ok;
}

/* ---- runs of constant copies folded into a loop over a table ----
 *
 * circom's code sets a template's constant arrays (circomlib's MixS copies its 289 values of S on
 * every run) and a function's constant tables (POSEIDON_S: 18,302 values) one value at a time, each
 * copy 7 lines of wasm2c:
 *     A = Ku;  B = Mu;  A *= B;  B = w2c_BASE;  A += B;  B = Cu;  w2c_Fr_copy(instance, A, B);
 * (A, B the wasm's operand registers, BASE a local holding the frame). A run of them, line after
 * line, is the same calls in the same order as a loop over a table of (K * M, C) followed by the
 * registers' last values: BASE is neither register, so nothing in the run changes it, and a run
 * holds no label (every line is one of the seven), so no jump enters it. At 2^20 the straight-line
 * copies were 38 % of the witness time (each MixS function 7.7 KB of machine code, 1.3 KB folded)
 * and most of the C the compiler met. */

/* "w2c_" identifier followed by `after` at p: its length, else 0 */
static size_t ident_then(const char *p, const char *after) {
    size_t n = ident_len(p);
    return n && !strncmp(p + n, after, strlen(after)) ? n : 0;
}

/* an unsigned decimal then "u;\n" at p: the value (< 2^32) and *len, else -1 */
static long long uconst(const char *p, size_t *len) {
    unsigned long long v = 0;
    size_t n = 0;
    while (p[n] >= '0' && p[n] <= '9' && n < 11) v = v * 10 + (unsigned)(p[n++] - '0');
    if (!n || v > 0xffffffffull || strncmp(p + n, "u;\n", 3)) return -1;
    *len = n + 3;
    return (long long)v;
}

typedef struct {
    const char *reg_a, *reg_b, *base; /* each a "w2c_" identifier in the text */
    size_t la, lb, lbase, ind;
    uint32_t k, m, c;
} copy_t;

/* One copy of the pattern at line p (indented by spaces): its parts and the end of its 7 lines,
 * else NULL. */
static const char *match_copy(const char *p, copy_t *x) {
    size_t ind = 0, n;
    long long v;
    while (p[ind] == ' ' && ind < 100) ind++;
#define LINE_START() (!strncmp(p, line0, ind) && p[ind] != ' ' ? (p += ind, true) : false)
    const char *line0 = p;
    p += ind;
    /* A = Ku; */
    if (!(x->la = ident_then(p, " = "))) return NULL;
    x->reg_a = p, p += x->la + 3;
    if ((v = uconst(p, &n)) < 0) return NULL;
    x->k = (uint32_t)v, p += n;
    /* B = Mu; */
    if (!LINE_START() || !(x->lb = ident_then(p, " = "))) return NULL;
    x->reg_b = p, p += x->lb + 3;
    if ((v = uconst(p, &n)) < 0) return NULL;
    x->m = (uint32_t)v, p += n;
    if (x->la == x->lb && !strncmp(x->reg_a, x->reg_b, x->la)) return NULL;
    /* A *= B; B = w2c_BASE; A += B; B = Cu; w2c_Fr_copy(instance, A, B); */
    char l[200];
    snprintf(l, sizeof l, "%.*s *= %.*s;\n", (int)x->la, x->reg_a, (int)x->lb, x->reg_b);
    if (!LINE_START() || strncmp(p, l, strlen(l))) return NULL;
    p += strlen(l);
    if (!LINE_START() || strncmp(p, x->reg_b, x->lb) || strncmp(p + x->lb, " = ", 3)) return NULL;
    p += x->lb + 3;
    if (!(x->lbase = ident_then(p, ";\n")) || x->la > 64 || x->lb > 64 || x->lbase > 64) return NULL;
    x->base = p, p += x->lbase + 2;
    if ((x->lbase == x->la && !strncmp(x->base, x->reg_a, x->la)) ||
        (x->lbase == x->lb && !strncmp(x->base, x->reg_b, x->lb)))
        return NULL;
    snprintf(l, sizeof l, "%.*s += %.*s;\n", (int)x->la, x->reg_a, (int)x->lb, x->reg_b);
    if (!LINE_START() || strncmp(p, l, strlen(l))) return NULL;
    p += strlen(l);
    if (!LINE_START() || strncmp(p, x->reg_b, x->lb) || strncmp(p + x->lb, " = ", 3)) return NULL;
    p += x->lb + 3;
    if ((v = uconst(p, &n)) < 0) return NULL;
    x->c = (uint32_t)v, p += n;
    snprintf(l, sizeof l, "w2c_Fr_copy(instance, %.*s, %.*s);\n", (int)x->la, x->reg_a, (int)x->lb, x->reg_b);
    if (!LINE_START() || strncmp(p, l, strlen(l))) return NULL;
#undef LINE_START
    x->ind = ind;
    return p + strlen(l);
}

static bool same_run(const copy_t *a, const copy_t *b) {
    return a->ind == b->ind && a->m == b->m && a->la == b->la && a->lb == b->lb && a->lbase == b->lbase &&
           !strncmp(a->reg_a, b->reg_a, a->la) && !strncmp(a->reg_b, b->reg_b, a->lb) &&
           !strncmp(a->base, b->base, a->lbase);
}

#define FOLD_MIN 4 /* shorter runs stay as they are */

/* Appends the text [s, e) (the buffer NUL-terminated at or after e) to o with every run of FOLD_MIN
 * or more constant copies folded. */
static bool fold_copies(buf_t *o, const char *s, const char *e) {
    char l[400];
    while (s < e) {
        copy_t first, x, last;
        const char *p = s, *q;
        size_t n = 0;
        if (match_copy(s, &first))
            while ((q = match_copy(p, &x)) && q <= e && same_run(&first, &x)) p = q, last = x, n++;
        if (n < FOLD_MIN) {
            const char *eol = memchr(s, '\n', (size_t)(e - s));
            eol = eol ? eol + 1 : e;
            if (!put(o, s, (size_t)(eol - s))) return false;
            s = eol;
            continue;
        }
        int ind = (int)first.ind;
        snprintf(l, sizeof l, "%*s{\n%*s  static const u32 witgen_cp[%zu][2] = {", ind, "", ind, "", n);
        if (!puts_(o, l)) return false;
        for (q = s; q < p;) {
            q = match_copy(q, &x);
            snprintf(l, sizeof l, "{%uu, %uu}", (uint32_t)(x.k * x.m), x.c);
            if (!puts_(o, l) || (q < p && !puts_(o, ", "))) return false;
        }
        snprintf(l, sizeof l,
                 "};\n%*s  for (u32 witgen_j = 0; witgen_j < %zu; witgen_j++)\n"
                 "%*s    w2c_Fr_copy(instance, witgen_cp[witgen_j][0] + %.*s, witgen_cp[witgen_j][1]);\n"
                 "%*s}\n%*s%.*s = %uu + %.*s;\n%*s%.*s = %uu;\n",
                 ind, "", n, ind, "", (int)first.lbase, first.base, ind, "", ind, "", (int)last.la, last.reg_a,
                 (uint32_t)(last.k * last.m), (int)last.lbase, last.base, ind, "", (int)last.lb, last.reg_b, last.c);
        if (!puts_(o, l)) return false;
        s = p;
    }
    return true;
}

char *witgen_fold_copies(const char *text, size_t *ret_n) {
    buf_t o = {0};
    if (!fold_copies(&o, text, text + strlen(text)) || !put(&o, "", 0)) {
        free(o.b);
        return NULL;
    }
    *ret_n = o.n;
    return o.b;
}

typedef struct {
    const char *s;
    size_t n, off; /* off: where its folded text starts in the fold buffer */
    int unit;
} fn_t;

#define UNIT_MIN (512u << 10)

int witgen_split(const char *dir, const char *unit_prefix, int fr_curve, int max_units, int *ret_units, zk_err_t *err) {
    *ret_units = 0;
    char path[1300];
    snprintf(path, sizeof path, "%s/circuit.c", dir);
    FILE *f = fopen(path, "re");
    if (!f) return zk_fail(err, errno, "%s: cannot open: %s", path, strerror(errno));
    buf_t in = {0};
    char chunk[1 << 16];
    size_t k;
    bool mem = true;
    while ((k = fread(chunk, 1, sizeof chunk, f)) > 0) mem &= put(&in, chunk, k);
    int rerr = ferror(f);
    fclose(f);
    if (!mem) {
        free(in.b);
        return zk_fail(err, ENOMEM, "%s: out of memory", path);
    }
    if (rerr || !in.b) {
        free(in.b);
        return zk_fail(err, EIO, "%s: cannot read", path);
    }
    const char *t = in.b, *end = in.b + in.n;
    /* the layout: preamble | data segments ... init functions | definitions | exports */
    const char *data = strstr(t, "\nstatic const u8 data_segment_data_");
    const char *defs = NULL, *tail = strstr(t, "\n/* export: ");
    for (const char *p = data ? data : t; p && p < end && !defs;) {
        const char *eol = strchr(p + 1, '\n');
        if (!eol) break;
        if (fn_line(p + 1, eol)) defs = p + 1;
        p = eol;
    }
    fn_t *fns = NULL;
    size_t nf = 0, cf = 0;
    buf_t pre = {0}, main = {0}, fold = {0}, units[WITGEN_MAX_UNITS] = {{0}};
    size_t load[WITGEN_MAX_UNITS] = {0};
    int werr = 0, r = 0, nu = max_units < WITGEN_MAX_UNITS ? max_units : WITGEN_MAX_UNITS;
    if (!data || !defs || !tail || tail < defs || nu < 1) goto keep;
    tail++;
    data++;
    /* the definitions, each from "static ..." to "\n}\n", blank lines between */
    for (const char *p = defs; p < tail;) {
        if (*p == '\n') {
            p++;
            continue;
        }
        const char *eol = strchr(p, '\n');
        const char *nm = eol ? fn_line(p, eol) : NULL;
        const char *e = nm ? strstr(p, "\n}\n") : NULL;
        if (!e || e + 3 > tail) goto keep;
        if (nf == cf) {
            cf = cf ? cf * 2 : 256;
            fn_t *nb = realloc(fns, cf * sizeof *fns);
            if (!nb) goto oom;
            fns = nb;
        }
        /* the field runtime stays in the main unit (-1) */
        fns[nf++] = (fn_t){p, (size_t)(e + 3 - p), 0, strncmp(nm, "w2c_Fr_", 7) ? 0 : -1};
        p = e + 3;
    }
    /* the circuit's functions with their runs of constant copies folded (the field runtime stays as
     * it is: build.c fingerprinted that text) */
    for (size_t i = 0; i < nf; i++) {
        if (fns[i].unit) continue;
        fns[i].off = fold.n;
        if (!fold_copies(&fold, fns[i].s, fns[i].s + fns[i].n)) goto oom;
        fns[i].n = fold.n - fns[i].off;
    }
    for (size_t i = 0; i < nf; i++)
        if (!fns[i].unit) fns[i].s = fold.b + fns[i].off;
    /* a unit per UNIT_MIN bytes of the circuit's functions at most (a small circuit is one unit: each
     * unit costs a compiler start and the preamble) */
    size_t movable = 0;
    for (size_t i = 0; i < nf; i++) movable += fns[i].unit == 0 ? fns[i].n : 0;
    if ((size_t)nu > movable / UNIT_MIN) nu = (int)(movable / UNIT_MIN);
    if (nu == 0)
        for (size_t i = 0; i < nf; i++) fns[i].unit = -1;
    /* largest first onto the lightest unit */
    for (;;) {
        size_t best = nf;
        for (size_t i = 0; i < nf; i++)
            if (fns[i].unit == 0 && (best == nf || fns[i].n > fns[best].n)) best = i;
        if (best == nf) break;
        int u = 0;
        for (int j = 1; j < nu; j++)
            if (load[j] < load[u]) u = j;
        load[u] += fns[best].n;
        fns[best].unit = u + 1;
    }
    if (!rewrite_preamble(&pre, t, data, fr_curve)) goto keep;
    if (!puts_(&main, "#include \"pre.c\"\n")) goto oom;
    if (!rewrite_data(&main, dir, data, defs, &werr)) {
        if (werr) goto werr_out;
        goto keep;
    }
    for (int u = 0; u < nu; u++) {
        if (!puts_(&units[u], unit_prefix) ||
            !puts_(&units[u], "#define WITGEN_UNIT 1\n#include \"pre.c\"\n"
                              "#if WITGEN_NATIVE_FR\n#include \"fr_native.c\"\n#endif\n"))
            goto oom;
    }
    for (size_t i = 0; i < nf; i++) {
        buf_t *o = fns[i].unit < 0 ? &main : &units[fns[i].unit - 1];
        const char *s = fns[i].s;
        /* the definition loses `static` unless it is a replaced runtime function (w2c_Fr_X_wasm) */
        const char *nm = fn_line(s, strchr(s, '\n'));
        size_t nl = ident_len(nm);
        bool keep_static = nl > 5 && !strncmp(nm + nl - 5, "_wasm", 5);
        if (!keep_static) s += 7;
        if (!put(o, s, fns[i].n - (size_t)(s - fns[i].s)) || !put(o, "\n", 1)) goto oom;
    }
    if (!put(&main, tail, (size_t)(end - tail))) goto oom;
    char name[32];
    if ((werr = write_all(dir, "pre.c", pre.b, pre.n)) < 0) goto werr_out;
    for (int u = 0; u < nu; u++) {
        snprintf(name, sizeof name, "unit-%d.c", u);
        if ((werr = write_all(dir, name, units[u].b, units[u].n)) < 0) goto werr_out;
    }
    /* last: the main unit replaces circuit.c (until here a failure leaves the one-unit build) */
    if ((werr = write_all(dir, "circuit.c", main.b, main.n)) < 0) goto werr_out;
    *ret_units = nu;
    goto done;
oom:
    r = zk_fail(err, ENOMEM, "%s: out of memory", path);
    goto done;
werr_out:
    r = zk_fail(err, -werr, "%s: cannot write: %s", dir, strerror(-werr));
    goto done;
keep:
    r = 0;
done:
    free(in.b);
    free(fns);
    free(pre.b);
    free(main.b);
    free(fold.b);
    for (int u = 0; u < WITGEN_MAX_UNITS; u++) free(units[u].b);
    return r;
}
