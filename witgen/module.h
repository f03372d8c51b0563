/* The interface between the loader (witgen/runtime.c) and a compiled generator (witgen/build.c
 * writes WITGEN_GLUE_SOURCE next to wasm2c's output and compiles both into one shared object).
 * The shared object exports exactly one symbol, WITGEN_MODULE_SYMBOL; everything else in it is
 * hidden. The wasm runtime (wasm_rt_*) is the host's: libwasm-rt-impl.a linked into the executable
 * and exported from it (witgen/meson.build), so that all generators share one trap handler. */
#pragma once
#include <stdint.h>

#define WITGEN_ABI 3
#define WITGEN_MODULE_SYMBOL "zkpipe_witgen_module"

/* The four imports circom's wasm makes from "runtime", called with the loader's context. They do
 * not return when the generator must stop (exception): they longjmp out through wasm_rt_trap. */
struct witgen_host {
    void (*exception_handler)(void *ctx, uint32_t code);
    void (*print_error_message)(void *ctx);
    void (*write_buffer_message)(void *ctx);
    void (*show_shared_rw_memory)(void *ctx);
};

struct witgen_memory_view {
    uint8_t *data;
    uint32_t pages, max_pages, size;
};

struct witgen_module {
    uint32_t abi;
    void (*init_module)(void);
    /* allocates and instantiates one instance; host and ctx are passed back to the imports */
    void *(*instantiate)(const struct witgen_host *host, void *ctx);
    void (*free_instance)(void *inst);
    /* the instance's wasm_rt_memory_t, which starts with the fields of witgen_memory_view */
    void *(*memory)(void *inst);
    uint32_t (*get_version)(void *inst);
    uint32_t (*get_field_num_len32)(void *inst);
    void (*get_raw_prime)(void *inst);
    uint32_t (*read_shared_rw_memory)(void *inst, uint32_t i);
    void (*write_shared_rw_memory)(void *inst, uint32_t i, uint32_t v);
    void (*init)(void *inst, uint32_t sanity_check);
    uint32_t (*get_input_signal_size)(void *inst, uint32_t hmsb, uint32_t hlsb);
    void (*set_input_signal)(void *inst, uint32_t hmsb, uint32_t hlsb, uint32_t pos);
    uint32_t (*get_input_size)(void *inst);
    uint32_t (*get_witness_size)(void *inst);
    uint32_t (*get_message_char)(void *inst);
    /* which native field runtime (witgen/fr_native.c) the object was compiled with: 0 none (the wasm's
     * own code throughout), 1 bn128, 2 bls12381 */
    uint32_t native_fr;
    /* with native_fr: 0 when the instance's q (at the address the runtime reads it) is the prime
     * the native code was compiled for, else -1 (the loader then refuses the object) */
    int (*check_native)(void *inst);
    /* for test_witgen: calls runtime function `fn` (WITGEN_FR_NATIVES order) of the instance, the
     * native version (native = 1; 2: with the portable product even where the CPU has ADX) or the
     * wasm's own (native = 0), with the wasm's arguments in order (b is the i64 argument
     * of rawCopyS2L); returns its result (0 for a void function) or 0xdeadbeef for an unknown fn */
    uint32_t (*fr_call)(void *inst, uint32_t fn, uint32_t native, uint32_t a, uint64_t b, uint32_t c);
    /* getWitness(i) then readSharedRWMemory(0 .. n32-1) for i = 0 .. n-1, the words written LE to out
     * (n * n32 * 4 bytes): the protocol's calls, made inside the object */
    void (*get_witness_all)(void *inst, uint32_t n, uint32_t n32, uint8_t *out);
};

/* The runtime functions fr_native.c replaces, in fr_call's order, with their wasm signature:
 * X(name, kind), kind: r = (r), x = (x) -> u32, xr = (x, r), rx = (r, x), xy = (x, y) -> u32, xyr = (x, y, r),
 * xyr_ret = (x, y, r) -> u32, rv = (r, i64 v); r, x, y are wasm memory offsets. build.c renames each
 * w2c_Fr_<name> of wasm2c's output to w2c_Fr_<name>_wasm; the glue's frn_call reaches both. */
#define WITGEN_FR_NATIVES(X)                                                                                           \
    X(int_add, xyr_ret) X(int_sub, xyr_ret) X(int_gt, xy) X(int_gte, xy) X(int_eq, xy) X(int_isZero, x)              \
    X(int_copy, xr) X(int_zero, r) X(F1m_add, xyr) X(F1m_sub, xyr) X(F1m_mul, xyr) X(F1m_fromMontgomery, xr)         \
    X(copy, rx) X(toNormal, r) X(rawCopyS2L, rv) X(toMontgomery, r) X(isNegative, x) X(getLsb32, x) X(neg, rx)       \
    X(toInt, x) X(isTrue, x)
#define WITGEN_FR_ID(name, kind) WITGEN_FR_##name,
enum { WITGEN_FR_NATIVES(WITGEN_FR_ID) WITGEN_FR_COUNT };
#undef WITGEN_FR_ID
#define WITGEN_FR_GLUE_ENUM(name, kind) "WITGEN_FR_" #name ", "
#define WITGEN_FR_GLUE_CASE(name, kind)                                                                                \
    "    case WITGEN_FR_" #name ": return nat ? FRN_CALL_" #kind "(w2c_Fr_" #name ") : FRN_CALL_" #kind "(w2c_Fr_" #name  \
    "_wasm);\n"

/* Compiled together with wasm2c's circuit.c (as `#include "circuit.c"`), wasm2c run with
 * `-n circuit`. Kept in sync with the structs above by test_witgen (which builds real circuits). */
#define WITGEN_GLUE_SOURCE                                                                                             \
    "#include <stdint.h>\n"                                                                                            \
    "#include <stdlib.h>\n"                                                                                            \
    "#include <string.h>\n"                                                                                            \
    "struct witgen_host { void (*exc)(void *, uint32_t); void (*perr)(void *); void (*wbuf)(void *);\n"                \
    "                     void (*shm)(void *); };\n"                                                                   \
    "struct Z_runtime_instance_t { const struct witgen_host *host; void *ctx; };\n"                                    \
    "#include \"circuit.c\"\n"                                                                                         \
    "void Z_runtimeZ_exceptionHandler(struct Z_runtime_instance_t *r, u32 c) { r->host->exc(r->ctx, c); }\n"           \
    "void Z_runtimeZ_printErrorMessage(struct Z_runtime_instance_t *r) { r->host->perr(r->ctx); }\n"                   \
    "void Z_runtimeZ_writeBufferMessage(struct Z_runtime_instance_t *r) { r->host->wbuf(r->ctx); }\n"                  \
    "void Z_runtimeZ_showSharedRWMemory(struct Z_runtime_instance_t *r) { r->host->shm(r->ctx); }\n"                   \
    "typedef struct { Z_circuit_instance_t w; struct Z_runtime_instance_t rt; } inst_t;\n"                             \
    "static void *g_inst(const struct witgen_host *h, void *ctx) {\n"                                                  \
    "    inst_t *i = calloc(1, sizeof *i); if (!i) return NULL;\n"                                                     \
    "    i->rt.host = h; i->rt.ctx = ctx; Z_circuit_instantiate(&i->w, &i->rt); return i; }\n"                         \
    "static void g_free(void *p) { inst_t *i = p; Z_circuit_free(&i->w); free(i); }\n"                                 \
    "#define W(p) (&((inst_t *)(p))->w)\n"                                                                             \
    "static void *g_mem(void *p) { return Z_circuitZ_memory(W(p)); }\n"                                                \
    "static u32 g_ver(void *p) { return Z_circuitZ_getVersion(W(p)); }\n"                                              \
    "static u32 g_n32(void *p) { return Z_circuitZ_getFieldNumLen32(W(p)); }\n"                                        \
    "static void g_prime(void *p) { Z_circuitZ_getRawPrime(W(p)); }\n"                                                 \
    "static u32 g_rd(void *p, u32 i) { return Z_circuitZ_readSharedRWMemory(W(p), i); }\n"                            \
    "static void g_wr(void *p, u32 i, u32 v) { Z_circuitZ_writeSharedRWMemory(W(p), i, v); }\n"                        \
    "static void g_init(void *p, u32 s) { Z_circuitZ_init(W(p), s); }\n"                                               \
    "static u32 g_isz(void *p, u32 a, u32 b) { return Z_circuitZ_getInputSignalSize(W(p), a, b); }\n"                  \
    "static void g_set(void *p, u32 a, u32 b, u32 c) { Z_circuitZ_setInputSignal(W(p), a, b, c); }\n"                  \
    "static u32 g_insz(void *p) { return Z_circuitZ_getInputSize(W(p)); }\n"                                           \
    "static u32 g_wsz(void *p) { return Z_circuitZ_getWitnessSize(W(p)); }\n"                                          \
    "static u32 g_msg(void *p) { return Z_circuitZ_getMessageChar(W(p)); }\n"                                          \
    "static void g_wit_all(void *p, u32 n, u32 n32, uint8_t *out) {\n"                                              \
    "    for (u32 i = 0; i < n; i++) {\n"                                                                            \
    "        Z_circuitZ_getWitness(W(p), i);\n"                                                                      \
    "        for (u32 j = 0; j < n32; j++, out += 4) { u32 v = Z_circuitZ_readSharedRWMemory(W(p), j); memcpy(out, &v, 4); }\n" \
    "    }\n"                                                                                                        \
    "}\n"                                                                                                            \
    /* the native runtime (build.c writes witgen/fr_native.c next to circuit.c and defines   \
     * WITGEN_NATIVE_FR when the wasm's runtime is the one it was written against) */            \
    "#ifdef WITGEN_NATIVE_FR\n"                                                                                      \
    "#include \"fr_native.c\"\n"                                                                                     \
    "enum { " WITGEN_FR_NATIVES(WITGEN_FR_GLUE_ENUM) "};\n"                                                          \
    "static u32 frn_dispatch(Z_circuit_instance_t *in, u32 fn, u32 nat, u32 a, u64 b, u32 c) {\n"                   \
    "    switch (fn) {\n" WITGEN_FR_NATIVES(WITGEN_FR_GLUE_CASE) "    }\n"                                            \
    "    return 0xdeadbeefu;\n"                                                                                      \
    "}\n"                                                                                                            \
    "static u32 frn_call(Z_circuit_instance_t *in, u32 fn, u32 nat, u32 a, u64 b, u32 c) {\n"                       \
    "    frn_portable(nat == 2);\n"                                                                                  \
    "    u32 r = frn_dispatch(in, fn, nat, a, b, c);\n"                                                              \
    "    frn_portable(0);\n"                                                                                         \
    "    return r;\n"                                                                                                \
    "}\n"                                                                                                            \
    "static int g_check(void *p) { return frn_check(W(p)); }\n"                                                      \
    "static u32 g_fr(void *p, u32 fn, u32 nat, u32 a, u64 b, u32 c) { return frn_call(W(p), fn, nat, a, b, c); }\n" \
    "#else\n"                                                                                                        \
    "#define WITGEN_NATIVE_FR 0\n"                                                                                   \
    "static int g_check(void *p) { (void)p; return 0; }\n"                                                           \
    "static u32 g_fr(void *p, u32 fn, u32 nat, u32 a, u64 b, u32 c) { return 0xdeadbeefu; }\n"                       \
    "#endif\n"                                                                                                       \
    "__attribute__((visibility(\"default\"))) const struct {\n"                                                        \
    "    uint32_t abi; void (*a)(void); void *(*b)(const struct witgen_host *, void *); void (*c)(void *);\n"          \
    "    void *(*d)(void *); u32 (*e)(void *); u32 (*f)(void *); void (*g)(void *); u32 (*h)(void *, u32);\n"          \
    "    void (*i)(void *, u32, u32); void (*j)(void *, u32); u32 (*k)(void *, u32, u32);\n"                           \
    "    void (*l)(void *, u32, u32, u32); u32 (*m)(void *); u32 (*n)(void *);\n"                                 \
    "    u32 (*q)(void *); uint32_t s; int (*t)(void *); u32 (*u)(void *, u32, u32, u32, u64, u32);\n"                \
    "    void (*v)(void *, u32, u32, uint8_t *);\n"                                                                  \
    "} zkpipe_witgen_module = {3, Z_circuit_init_module, g_inst, g_free, g_mem, g_ver, g_n32, g_prime, g_rd,\n"        \
    "    g_wr, g_init, g_isz, g_set, g_insz, g_wsz, g_msg, WITGEN_NATIVE_FR, g_check, g_fr, g_wit_all};\n"
