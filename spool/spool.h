/* The spool directory (docs/pipeline.md): tmp/ -> incoming/ -> active/ -> done/ | failed/.
 * A job directory holds job.ini, witness-<k>.wtns (or input-<k>.json: docs/witgen.md), and as
 * partitions finish proof-<k>.json and
 * public-<k>.json; result.json is written when the job ends. Renames are the commit points.
 *
 * Invariants:
 * - A job owns its inputs: submit copies (or reflinks) each one into the job directory; nothing in
 *   the spool is a link to a user's file.
 * - The stages never follow a symlink in the spool and never block on a file: job directories are
 *   opened with spool_open_dir, their files relative to it with the ground floor's reader
 *   (base/file.h: file_open_regular, file_read with FILE_NOFOLLOW), and must be directories /
 *   regular files.
 * - Every file a stage writes goes through the ground floor's atomic writer (file_write_atomic_at,
 *   or file_write_atomic_files_at for several at once: a temporary ".NAME.tmp.PID.RAND" made with
 *   O_CREAT|O_EXCL|O_NOFOLLOW, fsync, rename, fsync of the directory). Temporaries left by a crash
 *   are removed before the job directory leaves active/.
 * - result.json has one writer (spool_write_result) and one schema, and one reader
 *   (spool_read_result).
 * - The spool owns the job directory's state machine: every move between its places is one of
 *   spool_submit, spool_claim, spool_complete, spool_fail, spool_cancel; the daemons decide when.
 * - The spool names a partition's files (spool_file_name), and proofs and public signals are read
 *   back through one reader with one bound (spool_read_part). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>


#define SPOOL_ID_MAX 48
/* The most an input.json partition may be (inputs are numbers as text, a few per signal). */
#define SPOOL_INPUT_JSON_MAX (64u << 20)

/* A partition's files in its job directory. The spool names them (spool_file_name); every reader of
 * a proof or its public signals goes through spool_read_part, with one bound: a public-<k>.json is
 * about 80 bytes a public signal, so 64 MiB is some 800,000 of them. */
typedef enum { SPOOL_F_WITNESS, SPOOL_F_INPUT, SPOOL_F_PROOF, SPOOL_F_PUBLIC } spool_file_t;
#define SPOOL_FILE_NAME_MAX 32
#define SPOOL_PART_JSON_MAX (64u << 20)
/* "witness-<k>.wtns", "input-<k>.json", "proof-<k>.json" or "public-<k>.json"; returns name. */
const char *spool_file_name(char name[SPOOL_FILE_NAME_MAX], spool_file_t f, uint32_t k);
/* proof-<k>.json or public-<k>.json of the job directory dirfd, whole and NUL-terminated (free it),
 * by the spool's rules (no link followed, no FIFO blocked on, a regular file of at most
 * SPOOL_PART_JSON_MAX bytes). 0 or a negative errno with why naming the file. */
int spool_read_part(int dirfd, spool_file_t f, uint32_t k, char **ret_text, size_t *ret_len, char *why, size_t whylen);

typedef struct spool_job {
    char id[SPOOL_ID_MAX];
    char circuit[64];
    int prio; /* cfg_priority_t */
    uint32_t n_parts;
    uint64_t submit_ns; /* CLOCK_REALTIME */
    bool inputs;        /* partitions are input-<k>.json circuit inputs, not witness-<k>.wtns (job.ini inputs = yes) */
    char submitter[64]; /* zkpipe-api's token name (job.ini submitter =), "" for other submitters */
} spool_job_t;

/* Creates the spool and its subfolders (mode 0770 + setgid is left to tmpfiles.d). */
int spool_init(const char *spool, char *err, size_t errlen);
/* A new job id: time-ordered, unique ("20261130T051203.123456-3fa9c1"). */
void spool_new_id(char id[SPOOL_ID_MAX]);
bool spool_valid_id(const char *id);
/* A token name of zkpipe-api: [A-Za-z0-9._-], 1 to 63 characters. */
bool spool_valid_submitter(const char *name);
int spool_write_job(const char *dir, const spool_job_t *j);
/* Parses DIR/job.ini; errors like "job.ini:3: unknown key 'x'". */
int spool_read_job(const char *dir, spool_job_t *j, char *err, size_t errlen);
/* Sorted entry names of a folder (skips dot files); *ret_names is malloc'd (free with spool_free_list). */
int spool_list(const char *dir, char ***ret_names, size_t *ret_n);
void spool_free_list(char **names, size_t n);
/* Removes the temporaries of file_write_atomic_at that writers which died left in the folder. */
void spool_remove_temporaries(int dirfd);
/* Opens a job directory (or a spool folder) without following a final symlink: -ENOTDIR for
 * anything but a directory, a symlink included. */
int spool_open_dir(const char *path);
/* Copies src (symlinks followed, once, here) into DIRFD/NAME: a reflink where the file system has
 * them, else a copy; refused unless src is a regular file of at most cap bytes. ENOSPC and EDQUOT
 * say so. The new file is synced. why: one line naming src. */
int spool_copy_in(const char *src, int dirfd, const char *name, uint64_t cap, char *why, size_t whylen);
/* Free space of the spool's file system, in bytes (or a negative errno). */
int64_t spool_free_bytes(const char *spool);
/* Removes folders in SPOOL/tmp whose submitter is gone (it holds a lock on its folder while it
 * builds it) and that are older than min_age_s. Returns how many. */
int spool_clean_tmp(const char *spool, unsigned min_age_s);
/* Takes the submitter's lock on a folder of SPOOL/tmp (kept while fd is open). */
int spool_lock_tmp(int dirfd);
/* result.json, the one schema (docs/pipeline.md "Spool"). */
typedef struct spool_part_result {
    const char *status; /* "done", "failed", "dropped", ... */
    double queue_ms, synth_ms, ready_wait_ms, gpu_ms, finalize_ms;
    uint32_t synth_count, prove_count, gpu_lost_count;
    uint64_t t_ready_ns, t_prove_start_ns, t_done_ns;
    bool reused; /* a proof found on disk after a restart, verified again */
} spool_part_result_t;
typedef struct spool_result {
    const char *job, *status, *circuit, *error; /* circuit "" when unknown */
    int prio;                                   /* -1 when unknown */
    uint64_t submitted_ns;                      /* CLOCK_REALTIME, 0 when unknown */
    double total_ms;                            /* submission to the end */
    uint32_t n_parts;
    const spool_part_result_t *parts; /* n_parts, or NULL for a job that never started */
    void *owner;                      /* spool_read_result's: what the strings point into */
} spool_result_t;
int spool_write_result(int dirfd, const spool_result_t *r);
/* The places of the spool, in the order a job moves through them (docs/pipeline.md "Spool"). */
typedef enum spool_place {
    SPOOL_TMP,
    SPOOL_INCOMING,
    SPOOL_ACTIVE,
    SPOOL_DONE,
    SPOOL_FAILED,
    SPOOL_NPLACES,
    SPOOL_NOWHERE = -1 /* spool_job_place: no such job */
} spool_place_t;
const char *spool_place_name(spool_place_t p);
/* SPOOL/PLACE, or SPOOL/PLACE/NAME with name non-NULL. */
void spool_path(char *buf, size_t len, const char *spool, spool_place_t p, const char *name);
/* The claim of incoming/NAME (synthd's intake). What cannot be a job (not a directory, a symlink,
 * an id already in done/, failed/ or active/) is moved to failed/ under a new id (ret_id), the
 * reason in why: -ECANCELED. Else it is renamed into active/ (RENAME_NOREPLACE, the commit point),
 * the outputs nobody may bring (proofs, publics, result.json, temporaries) are removed and job.ini is
 * read (spool_load_active). 0: claimed, *ret_job read; -ENOENT: another synthd took it;
 * -ECANCELED: failed (ret_id, why); another negative errno: it stays in incoming/ (why, as
 * "(SRC -> DST): what; it stays in incoming/"). */
int spool_claim(const char *spool, const char *name, spool_job_t *ret_job, char ret_id[SPOOL_ID_MAX], char *why,
                size_t whylen);
/* Reads active/NAME/job.ini; a corrupt one, or an id that is not NAME, moves the directory to
 * failed/ (under NAME, or a new id when NAME cannot be one: ret_id) with the reason in why:
 * -ECANCELED. */
int spool_load_active(const char *spool, const char *name, spool_job_t *ret_job, char ret_id[SPOOL_ID_MAX], char *why,
                      size_t whylen);
/* The end of a registered job: active/<r->job> has its temporaries removed, gets result.json (r),
 * is renamed into done/ (r->status "done") or failed/, and that folder is synced. Repeatable: 0
 * too when active/<r->job> is gone (a previous end moved it). A negative errno (ENOSPC, EDQUOT, a
 * failed rename) leaves it in active/ for the caller to try again; why names the step. */
int spool_complete(const char *spool, const spool_result_t *r, char *why, size_t whylen);
/* Moves PLACE/NAME (a job directory, or whatever stands there) into failed/ID with a result.json
 * that says status and why (jobs that never got registered: corrupt job.ini, unknown circuit, not
 * a directory, cancelled); anything but a directory goes into a folder of its own, never followed. */
int spool_fail(const char *spool, spool_place_t from, const char *name, const char *id, const char *status,
               const char *reason);
/* Cancels a job no synthd has registered (the caller holds the segment's registration lock):
 * incoming/ID or active/ID → failed/ID, status cancelled. 0; -EALREADY: it has finished (*ret_place
 * says where); -ESRCH: no such job; another negative errno: the move failed (why). */
int spool_cancel(const char *spool, const char *id, spool_place_t *ret_place, char *why, size_t whylen);
/* Reads DIRFD/result.json (file_read with FILE_NOFOLLOW: no link followed, never blocking, bounded) into
 * *ret: the strings and parts stay valid until spool_result_free. -EINVAL with why for a file that
 * is not a result (no partitions array). */
int spool_read_result(int dirfd, spool_result_t *ret, char *why, size_t whylen);
void spool_result_free(spool_result_t *r);
/* Where a job is: SPOOL_INCOMING, SPOOL_ACTIVE, SPOOL_DONE, SPOOL_FAILED or SPOOL_NOWHERE. A job
 * only moves forward, each step one rename, so scanning in that order cannot miss a job that moves
 * while we look. */
spool_place_t spool_job_place(const char *spool, const char *id);
/* done/ or failed/: the job has ended and its result.json is there. */
static inline bool spool_place_ended(spool_place_t p) { return p == SPOOL_DONE || p == SPOOL_FAILED; }
/* One input of a new job: a file to copy in (spool_copy_in: a regular file, followed once), or,
 * with path NULL, bytes (the fleet feeder's inputs come from the database). */
typedef struct spool_input {
    const char *path;  /* a file to copy in, or */
    const void *data;  /* len bytes in memory, or */
    size_t len;
    /* when read is set: len bytes that read(ctx, k, ...) hands over when input k is written (*ret_len
     * holds len when it is called; the data stays valid until the next call), so that no more than one input is held at a time
     * (the fleet's feeder fetches each from the database then) */
    int (*read)(void *ctx, uint32_t k, const void **ret_data, size_t *ret_len, char *err, size_t errlen);
    void *ctx;
} spool_input_t;
/* The one submission path (zkpipe submit, zkpipe-feeder): refuses the job while the spool has less
 * than min_free + the inputs free; builds SPOOL/tmp/ID holding its lock, puts input k there as
 * witness-<k>.wtns, or input-<k>.json when j->inputs (each at most cap bytes), writes job.ini (j->id must be set), renames the folder
 * into incoming/ (the commit point) and fsyncs it. A tmp/ID left by a submitter that died (its lock
 * free) is removed first, so an id may be submitted again after a crash. 0, or a negative errno with one line in err; a
 * refused or failed submission leaves nothing behind. */
int spool_submit(const char *spool, const spool_job_t *j, const spool_input_t *in, uint64_t cap, uint64_t min_free,
                 char *err, size_t errlen);
/* JSON string escaping into out (always terminated). */
void spool_json_escape(const char *in, char *out, size_t cap);
