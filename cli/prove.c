/* zkpipe prove: one-shot Groth16 proof in one process, with rapidsnark's positional arguments. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/file.h"
#include "base/mem.h"
#include "commands.h"
#include "zk/binfile.h"
#include "zk/kernels.h"
#include "zk/groth16.h"
#include "zk/r1cs.h"
#include "zk/threads.h"
#include "zk/verify.h"
#include "zk/wtns.h"
#include "zk/zkey.h"

static void prove_usage(FILE *f) {
    fprintf(f,
            "Usage: zkpipe prove [options] <circuit.zkey> <witness.wtns> <proof.json> <public.json>\n"
            "\n"
            "Proves one witness with a snarkjs Groth16 key (bn128 or bls12381, taken from the zkey) and writes\n"
            "proof.json and public.json in snarkjs's format. The arguments are those of rapidsnark's prover.\n"
            "\n"
            "Options:\n"
            "  --threads N    worker threads (default: every CPU this process may run on)\n"
            "  --r1cs FILE    check the witness against the circuit's constraints first and name the first\n"
            "                 constraint it fails\n"
            "  --timings      print per-stage times on stderr\n"
            "  --no-verify    do not check the proof with the native verifier before writing it (by default\n"
            "                 a proof that does not verify is never written: a witness that does not satisfy\n"
            "                 the circuit is reported instead)\n"
            "  -h, --help     this text\n"
            "\n"
            "Exit status: 0 proof written, 1 bad input or failure (one line on stderr), 2 bad usage.\n");
}

static double ms_since(const struct timespec *t0) {
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* An output must not be one of the inputs: removing it (below) or writing it would destroy that input. */
static int output_is_input(const char *out, const char *const *in, int n_in, zk_err_t *err) {
    struct stat so, si;
    if (stat(out, &so) < 0) return 0;
    for (int i = 0; i < n_in; i++)
        if (in[i] && stat(in[i], &si) == 0 && si.st_dev == so.st_dev && si.st_ino == so.st_ino)
            return zk_fail(err, EINVAL, "%s: the output is the input %s; not overwriting it", out, in[i]);
    return 0;
}

/* Removes an older output before proving, so that a failed prove never leaves an older proof or public
 * file at the paths it was given (a new one appears only by rename, whole). */
static int remove_output(const char *path, zk_err_t *err) {
    struct stat st;
    if (lstat(path, &st) < 0) return errno == ENOENT ? 0 : zk_fail(err, errno, "%s: %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode)) return zk_fail(err, EISDIR, "%s: is a directory, not an output file", path);
    if (unlink(path) < 0)
        return zk_fail(err, errno, "%s: cannot remove the older output: %s", path, strerror(errno));
    return 0;
}

/* The proof made from z does not check out (verify_rc: -EINVAL for a point off its curve or outside its
 * subgroup, -EBADMSG for a failed pairing): a corrupt key point is named when there is one; a failed
 * pairing with a sound key is the witness's fault. */
static void explain_bad_proof(const zk_zkey_t *z, const char *zkey_path, const char *wtns_path, int verify_rc,
                              zk_err_t *err) {
    zk_err_t why;
    snprintf(why.msg, sizeof(why.msg), "%s", err->msg);
    zk_zkey_hold_all(z); /* a lazy key's sections, for the scan */
    if (zk_zkey_check_points(z, zkey_path, verify_rc == -EINVAL && strstr(why.msg, "subgroup"), err) < 0) {
        size_t l = strlen(err->msg);
        snprintf(err->msg + l, sizeof(err->msg) - l, ": the key is corrupt");
    } else if (verify_rc == -EBADMSG) {
        zk_fail(err, EBADMSG,
                "%s: the proof does not verify: the witness does not satisfy the circuit (run with --r1cs to find "
                "the constraint)",
                wtns_path);
    } else {
        zk_fail(err, EINVAL, "%s: the proof made with this key fails its check (%.200s)", zkey_path, why.msg);
    }
}

/* The private memory the proof of z will take beyond the witness: a, b, c and the twiddles, the
 * MSMs' digits and index lists (at most ~20 windows of 2 bytes and 8 bytes of lists a point), the
 * largest unaligned section's copy. The key's own pages are a file mapping the kernel can drop and
 * read again, so they do not count. Refused with one line when MemAvailable is smaller. */
static int check_memory(const zk_zkey_t *z, const char *zkey_path, zk_err_t *err) {
    uint64_t n = z->domain_size, m = n > z->n_vars ? n : z->n_vars, copy = 0;
    for (int id = 5; id <= 9; id++)
        if (z->lazy_size[id] > copy) copy = z->lazy_size[id];
    uint64_t need = zk_abc_size(z) + zk_core_inplace_scratch_size(z) + 48 * m + copy, avail = zk_mem_available();
    if (need <= avail) return 0;
    return zk_fail(err, ENOMEM,
                   "%s: proving domain 2^%u (%u wires) needs about %.1f GiB of memory, only %.1f GiB is available "
                   "(MemAvailable)",
                   zkey_path, z->log_domain, z->n_vars, (double)need / 1073741824.0, (double)avail / 1073741824.0);
}

int cli_parse_threads(const char *cmd, const char *arg, int *ret) {
    char *end;
    long v = strtol(arg, &end, 10);
    if (*end || v < 1 || v > 1024) {
        fprintf(stderr, "zkpipe %s: --threads wants a number from 1 to 1024, not '%s'\n", cmd, arg);
        return -EINVAL;
    }
    *ret = (int)v;
    return 0;
}

int cli_prepare_outputs(const char *proof_path, const char *public_path, const char *const *inputs, int n_inputs,
                        zk_err_t *err) {
    if (output_is_input(proof_path, inputs, n_inputs, err) < 0 || output_is_input(public_path, inputs, n_inputs, err) < 0)
        return -EINVAL;
    if (!strcmp(proof_path, public_path))
        return zk_fail(err, EINVAL, "%s: given as both the proof and the public output", proof_path);
    if (remove_output(proof_path, err) < 0 || remove_output(public_path, err) < 0) return -EIO;
    return 0;
}

void cli_discard_outputs(const char *proof_path, const char *public_path) {
    (void)unlink(proof_path);
    (void)unlink(public_path);
}

/* proof.json and public.json by base/file.h's two-step writer: one batch when both are in one
 * folder, else one each. Errors name the path ("P: cannot write: ..."). */
typedef struct {
    int dfd[2], nb;
    const char *path[2];
    file_atomic_t f[2];
    file_atomic_batch_t b[2];
} outputs_t;

static int cannot_write(zk_err_t *err, const char *path, int e) {
    return zk_fail(err, e, "%s: cannot write: %s", path, strerror(e));
}

static void outputs_close(outputs_t *o) {
    for (int i = 0; i < 2; i++)
        if (o->dfd[i] >= 0) close(o->dfd[i]);
}

static int outputs_prepare(outputs_t *o, const char *proof_path, const char *proof_json, const char *public_path,
                           const char *public_json, zk_err_t *err) {
    const char *paths[2] = {proof_path, public_path}, *texts[2] = {proof_json, public_json};
    o->dfd[0] = o->dfd[1] = -1;
    o->nb = 0;
    struct stat st[2];
    for (int i = 0; i < 2; i++) {
        const char *name;
        o->path[i] = paths[i];
        o->dfd[i] = file_open_dir_of(paths[i], &name);
        if (o->dfd[i] < 0 || fstat(o->dfd[i], &st[i]) < 0) {
            int e = o->dfd[i] < 0 ? -o->dfd[i] : errno;
            outputs_close(o);
            return cannot_write(err, paths[i], e);
        }
        o->f[i] = (file_atomic_t){name, texts[i], strlen(texts[i])};
    }
    bool one = st[0].st_dev == st[1].st_dev && st[0].st_ino == st[1].st_ino;
    for (int i = 0; i < (one ? 1 : 2); i++) {
        int r = file_atomic_prepare(&o->b[i], o->dfd[i], &o->f[i], one ? 2 : 1);
        if (r < 0) {
            for (int j = 0; j < i; j++) file_atomic_abort(&o->b[j]);
            outputs_close(o);
            return cannot_write(err, paths[i], -r);
        }
        o->nb++;
    }
    return 0;
}

static void outputs_abort(outputs_t *o) {
    for (int i = 0; i < o->nb; i++) file_atomic_abort(&o->b[i]);
    outputs_close(o);
}

static int outputs_commit(outputs_t *o, zk_err_t *err) {
    int rc = 0;
    for (int i = 0; i < o->nb; i++) {
        if (rc < 0) {
            file_atomic_abort(&o->b[i]);
            continue;
        }
        int r = file_atomic_commit(&o->b[i], NULL, -1);
        if (r < 0) rc = cannot_write(err, o->path[i], -r);
    }
    outputs_close(o);
    return rc;
}

/* Everything after the key and the witness are loaded: the optional r1cs check, synthesis, the
 * proof, the native verification and the two JSON files (zkpipe prove, zkpipe fullprove). */
int cli_prove_witness(const zk_zkey_t *z, const char *zkey_path, const zk_wtns_t *w, const char *wtns_path,
                      const cli_prove_opts_t *o, const char *proof_path, const char *public_path,
                      const struct timespec *t0, double t_load, zk_err_t *err) {
    int rc = -1, threads = o->threads;
    const char *r1cs_path = o->r1cs_path;
    struct timespec tstage;
    zk_r1cs_t r1cs = {0};
    bool have_r1cs = false;
    void *abc = NULL, *scratch = NULL;
    char *proof_json = NULL, *public_json = NULL;
    double t_check = 0;
    if (r1cs_path) {
        clock_gettime(CLOCK_MONOTONIC, &tstage);
        if (zk_r1cs_open(&r1cs, r1cs_path, err) < 0) goto fail;
        have_r1cs = true;
        if (r1cs.curve != z->curve) {
            zk_fail(err, EINVAL, "%s: the r1cs is for %s, the zkey for %s", r1cs_path, r1cs.curve->name,
                    z->curve->name);
            goto fail;
        }
        if (r1cs.n_wires != z->n_vars) {
            zk_fail(err, EINVAL, "%s: the r1cs has %u wires, the zkey %u: it is for another circuit", r1cs_path,
                    r1cs.n_wires, z->n_vars);
            goto fail;
        }
        int64_t bad = -1;
        if (zk_r1cs_check(&r1cs, r1cs_path, w->values, w->n, &bad, err) < 0) goto fail;
        t_check = ms_since(&tstage);
    }

    size_t n = z->domain_size;
    if (check_memory(z, zkey_path, err) < 0) goto fail;
    /* written once each, in 2 MiB pages where the kernel has them (base/mem.h) */
    abc = mem_big_alloc(zk_abc_size(z));
    scratch = mem_big_alloc(zk_core_inplace_scratch_size(z));
    if (!abc || !scratch) {
        zk_fail(err, ENOMEM, "%s: out of memory for a domain of %zu", zkey_path, n);
        goto fail;
    }
    uint8_t *a = abc, *b = a + 32 * n, *cc = b + 32 * n;
    int bound = zk_threads_place(threads); /* before the first parallel region: synthesis */

    clock_gettime(CLOCK_MONOTONIC, &tstage);
    zk_zkey_hold(z, 4);
    if (zk_synth(z, w->values, a, b, cc, threads) < 0) {
        zk_fail(err, EINVAL, "%s: synthesis failed", wtns_path);
        goto fail;
    }
    zk_zkey_drop(z, 4); /* a lazy key's coefs leave the process: the core never reads them */
    double t_synth = ms_since(&tstage);

    zk_raw_t raw;
    zk_core_times_t ct;
    clock_gettime(CLOCK_MONOTONIC, &tstage);
    if (zk_prove_core_inplace(z, w->values, abc, scratch, &raw, &ct, threads) < 0) { /* abc is not needed after */
        zk_fail(err, EINVAL, "%s: proving failed", zkey_path);
        goto fail;
    }
    double t_core = ms_since(&tstage);

    clock_gettime(CLOCK_MONOTONIC, &tstage);
    uint8_t rr[32], ss[32];
    int ret = zk_random_rs(z->curve, rr, ss);
    if (ret < 0) {
        zk_fail(err, -ret, "getrandom failed: %s", strerror(-ret));
        goto fail;
    }
    zk_proof_t proof;
    zk_vk_t vk;
    int vk_ret = 0;
    double t_verify = 0;
    /* The proof's last products and the verifying key's preparation (its points checked, the
     * pairing e(α, β)) side by side: neither reads what the other writes. */
#pragma omp parallel sections num_threads(o->verify && threads >= 2 ? 2 : 1)
    {
#pragma omp section
        zk_finalize(z, &raw, rr, ss, &proof);
#pragma omp section
        if (o->verify) {
            struct timespec tv;
            clock_gettime(CLOCK_MONOTONIC, &tv);
            vk_ret = zk_vk_from_zkey(&vk, z, err);
            t_verify = ms_since(&tv);
        }
    }
    if (o->verify && vk_ret < 0) {
        zk_err_t why = *err;
        zk_zkey_hold_all(z);
        if (zk_zkey_check_points(z, zkey_path, true, err) == 0) zk_fail(err, EINVAL, "%s: %.400s", zkey_path, why.msg);
        goto fail;
    }
    if (zk_proof_json(z->curve, &proof, &proof_json) < 0 || zk_public_json(w->values, z->n_pub, &public_json) < 0) {
        if (o->verify) zk_vk_free(&vk);
        zk_fail(err, ENOMEM, "out of memory for the proof's JSON");
        goto fail;
    }
    /* The two files written and synced under temporary names while the proof is verified; they
     * take their names only once it passed (a proof that fails is never written). */
    outputs_t out;
    zk_err_t werr = {{0}};
    int wret = 0;
#pragma omp parallel sections num_threads(o->verify && threads >= 2 ? 2 : 1)
    {
#pragma omp section
        wret = outputs_prepare(&out, proof_path, proof_json, public_path, public_json, &werr);
#pragma omp section
        if (o->verify) {
            struct timespec tv;
            clock_gettime(CLOCK_MONOTONIC, &tv);
            /* public signals are w[1..nPub] */
            ret = zk_verify_proof(&vk, &proof, w->values + 32, z->n_pub, err);
            zk_vk_free(&vk);
            t_verify += ms_since(&tv);
        }
    }
    if (o->verify && ret < 0) {
        if (wret == 0) outputs_abort(&out);
        if (ret == -EBADMSG || ret == -EINVAL) explain_bad_proof(z, zkey_path, wtns_path, ret, err);
        goto fail;
    }
    if (wret < 0 || outputs_commit(&out, &werr) < 0) {
        *err = werr;
        goto fail;
    }
    double t_final = ms_since(&tstage);

    if (o->timings) {
        fprintf(stderr, "curve %s, domain 2^%u, nVars %u, threads %d", z->curve->name, z->log_domain, z->n_vars, threads);
        if (bound == 1) fprintf(stderr, " (1 worker bound to a CPU of its own)");
        if (bound > 1) fprintf(stderr, " (%d workers bound to a CPU each)", bound);
        fputc('\n', stderr);
        fprintf(stderr, "load        %8.2f ms%s%s%s\n", t_load, o->load_detail ? " (" : "",
                o->load_detail ? o->load_detail : "", o->load_detail ? ")" : "");
        if (r1cs_path) fprintf(stderr, "r1cs check  %8.2f ms\n", t_check);
        fprintf(stderr, "synthesis   %8.2f ms\n", t_synth);
        fprintf(stderr, "core        %8.2f ms (ntt+H %.2f, msm A %.2f, B1 %.2f, B2 %.2f, C %.2f, H %.2f)\n", t_core,
                ct.ntt_ns / 1e6, ct.msm_a_ns / 1e6, ct.msm_b1_ns / 1e6, ct.msm_b2_ns / 1e6, ct.msm_c_ns / 1e6,
                ct.msm_h_ns / 1e6);
        fprintf(stderr, "finalize    %8.2f ms (verify %.2f)\n", t_final, t_verify);
        fprintf(stderr, "kernels     %s\n", zk_kernels_describe());
        fprintf(stderr, "total       %8.2f ms\n", ms_since(t0));
    }
    rc = 0;
fail:
    free(proof_json);
    free(public_json);
    mem_big_free(abc, zk_abc_size(z));
    mem_big_free(scratch, zk_core_inplace_scratch_size(z));
    if (have_r1cs) zk_r1cs_close(&r1cs);
    return rc;
}

int zkpipe_cmd_prove(int argc, char **argv) {
    static const struct option opts[] = {
        {"threads", required_argument, NULL, 't'},
        {"r1cs", required_argument, NULL, 'r'},
        {"timings", no_argument, NULL, 'T'},
        {"no-verify", no_argument, NULL, 'V'},
        {"help", no_argument, NULL, 'h'},
        {0, 0, 0, 0},
    };
    int threads = 0, timings = 0, verify = 1, c;
    const char *r1cs_path = NULL;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 't':
            if (cli_parse_threads("prove", optarg, &threads) < 0) return 2;
            break;
        case 'r': r1cs_path = optarg; break;
        case 'T': timings = 1; break;
        case 'V': verify = 0; break;
        case 'h': prove_usage(stdout); return 0;
        default: prove_usage(stderr); return 2;
        }
    }
    if (argc - optind != 4) {
        fprintf(stderr, "zkpipe prove: expected 4 arguments, got %d\n", argc - optind);
        prove_usage(stderr);
        return 2;
    }
    const char *zkey_path = argv[optind], *wtns_path = argv[optind + 1];
    const char *proof_path = argv[optind + 2], *public_path = argv[optind + 3];
    if (threads == 0) threads = zk_threads_default();

    int rc = 1;
    zk_err_t err = {{0}};
    zk_zkey_t z = {0};
    zk_wtns_t w = {0};
    bool have_zkey = false, have_wtns = false, outputs_removed = false;
    struct timespec t0, tstage;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    const char *inputs[3] = {zkey_path, wtns_path, r1cs_path};
    if (cli_prepare_outputs(proof_path, public_path, inputs, 3, &err) < 0) goto fail;
    outputs_removed = true;

    tstage = t0;
    /* lazy: an unaligned point section is copied only for its MSM (zk/zkey.h), one at a time */
    if (zk_zkey_open_flags(&z, zkey_path, ZK_ZKEY_LAZY, &err) < 0) goto fail;
    have_zkey = true;
    double t_zkey = ms_since(&tstage);
    if (zk_wtns_load(&w, wtns_path, &err) < 0) goto fail;
    have_wtns = true;
    if (zk_wtns_check_zkey(&w, wtns_path, &z, zkey_path, &err) < 0) goto fail;
    double t_load = ms_since(&tstage);
    char detail[160];
    snprintf(detail, sizeof detail, "zkey %.2f ms: %.1f MiB mapped read-only, checked; witness %.2f ms", t_zkey,
             (double)z.map_size / 1048576.0, t_load - t_zkey);

    cli_prove_opts_t po = {
        .threads = threads, .r1cs_path = r1cs_path, .timings = timings, .verify = verify, .load_detail = detail};
    if (cli_prove_witness(&z, zkey_path, &w, wtns_path, &po, proof_path, public_path, &t0, t_load, &err) < 0) goto fail;
    rc = 0;
    goto out;
fail:
    fprintf(stderr, "zkpipe prove: %s\n", err.msg[0] ? err.msg : "failed");
    if (outputs_removed) cli_discard_outputs(proof_path, public_path); /* the proof may be written, the public not */
out:
    if (have_wtns) zk_wtns_free(&w);
    if (have_zkey) zk_zkey_close(&z);
    return rc;
}
