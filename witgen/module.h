/* The interface between the loader (witgen/runtime.c) and a compiled generator (witgen/build.c
 * writes WITGEN_GLUE_SOURCE next to wasm2c's output and compiles both into one shared object).
 * The shared object exports exactly one symbol, WITGEN_MODULE_SYMBOL; everything else in it is
 * hidden. The wasm runtime (wasm_rt_*) is the host's: libwasm-rt-impl.a linked into the executable
 * and exported from it (witgen/meson.build), so that all generators share one trap handler. */
#pragma once
#include <stdint.h>

#define WITGEN_ABI 2
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
    void (*get_witness)(void *inst, uint32_t i);
    uint32_t (*get_message_char)(void *inst);
    /* gives the field's prime (n32 LE words) to the native field multiplication; with n32 != 8, or
     * when build.c found no Fr_F1m_mul to replace, the wasm's own code stays in use */
    void (*set_prime)(const uint32_t *prime, uint32_t n32);
};

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
    "static void g_wit(void *p, u32 i) { Z_circuitZ_getWitness(W(p), i); }\n"                                          \
    "static u32 g_msg(void *p) { return Z_circuitZ_getMessageChar(W(p)); }\n"                                          \
    /* circom's Fr_F1m_mul is a Montgomery product with R = 2^256: T = (x*y + m*q) / R for the one      \
     * m < R that makes the division exact, then T - q when T carries past 2^256 or T >= q. Any word  \
     * size computes the same T, so 4 x 64-bit CIOS gives the wasm's bytes (build.c renames the     \
     * wasm's version to w2c_Fr_F1m_mul_wasm and defines WITGEN_NATIVE_MUL). */                      \
    "static uint64_t g_q[4], g_np; static int g_native;\n"                                                            \
    "static void g_set_prime(const uint32_t *p, uint32_t n32) {\n"                                                    \
    "    if (n32 != 8) return;\n"                                                                                     \
    "    for (int i = 0; i < 4; i++) g_q[i] = (uint64_t)p[2 * i] | (uint64_t)p[2 * i + 1] << 32;\n"                   \
    "    uint64_t inv = 1; for (int i = 0; i < 7; i++) inv *= 2 - g_q[0] * inv;\n"                                    \
    "    g_np = -inv;\n"                                                                                              \
    "#ifdef WITGEN_NATIVE_MUL\n"                                                                                      \
    "    g_native = 1;\n"                                                                                             \
    "#endif\n"                                                                                                        \
    "}\n"                                                                                                             \
    "#ifdef WITGEN_NATIVE_MUL\n"                                                                                      \
    "__attribute__((optimize(\"unroll-loops\"))) static void w2c_Fr_F1m_mul(Z_circuit_instance_t *in, u32 px, u32 py,\n" \
    "                                                                         u32 pr) {\n"                              \
    "    if (!g_native) { w2c_Fr_F1m_mul_wasm(in, px, py, pr); return; }\n"                                           \
    "    uint8_t *mem = in->w2c_memory.data;\n"                                                                       \
    "    uint64_t a[4], b[4], t[6] = {0};\n"                                                                          \
    "    memcpy(a, mem + px, 32); memcpy(b, mem + py, 32);\n"                                                         \
    "    for (int i = 0; i < 4; i++) {\n"                                                                             \
    "        unsigned __int128 c = 0;\n"                                                                              \
    "        for (int j = 0; j < 4; j++) { c += (unsigned __int128)a[j] * b[i] + t[j]; t[j] = (uint64_t)c; c >>= 64; }\n" \
    "        c += t[4]; t[4] = (uint64_t)c; t[5] = (uint64_t)(c >> 64);\n"                                            \
    "        uint64_t m = t[0] * g_np;\n"                                                                             \
    "        c = (unsigned __int128)m * g_q[0] + t[0]; c >>= 64;\n"                                                   \
    "        for (int j = 1; j < 4; j++) { c += (unsigned __int128)m * g_q[j] + t[j]; t[j - 1] = (uint64_t)c; c >>= 64; }\n" \
    "        c += t[4]; t[3] = (uint64_t)c; t[4] = t[5] + (uint64_t)(c >> 64);\n"                                     \
    "    }\n"                                                                                                         \
    "    int ge = t[4] != 0;\n"                                                                                       \
    "    if (!ge) { ge = 1; for (int j = 3; j >= 0; j--) if (t[j] != g_q[j]) { ge = t[j] > g_q[j]; break; } }\n"      \
    "    if (ge) { unsigned __int128 bw = 0;\n"                                                                       \
    "        for (int j = 0; j < 4; j++) { unsigned __int128 d = (unsigned __int128)t[j] - g_q[j] - bw;\n"              \
    "            t[j] = (uint64_t)d; bw = (d >> 64) & 1; } }\n"                                                       \
    "    memcpy(mem + pr, t, 32);\n"                                                                                  \
    "}\n"                                                                                                             \
    "#endif\n"                                                                                                        \
    "__attribute__((visibility(\"default\"))) const struct {\n"                                                        \
    "    uint32_t abi; void (*a)(void); void *(*b)(const struct witgen_host *, void *); void (*c)(void *);\n"          \
    "    void *(*d)(void *); u32 (*e)(void *); u32 (*f)(void *); void (*g)(void *); u32 (*h)(void *, u32);\n"          \
    "    void (*i)(void *, u32, u32); void (*j)(void *, u32); u32 (*k)(void *, u32, u32);\n"                           \
    "    void (*l)(void *, u32, u32, u32); u32 (*m)(void *); u32 (*n)(void *); void (*o)(void *, u32);\n"              \
    "    u32 (*q)(void *); void (*s)(const uint32_t *, uint32_t);\n"                                                 \
    "} zkpipe_witgen_module = {2, Z_circuit_init_module, g_inst, g_free, g_mem, g_ver, g_n32, g_prime, g_rd,\n"        \
    "    g_wr, g_init, g_isz, g_set, g_insz, g_wsz, g_wit, g_msg, g_set_prime};\n"
