/* The spool directory (docs/pipeline.md): tmp/ -> incoming/ -> active/ -> done/ | failed/.
 * A job directory holds job.ini, witness-<k>.wtns (or input-<k>.json: docs/witgen.md), and as partitions finish proof-<k>.json and
 * public-<k>.json; result.json is written when the job ends. Renames are the commit points. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SPOOL_ID_MAX 48

typedef struct spool_job {
    char id[SPOOL_ID_MAX];
    char circuit[64];
    int prio; /* 0 CRITICAL .. 3 LOW */
    uint32_t n_parts;
    uint64_t submit_ns; /* CLOCK_REALTIME */
    bool inputs;        /* partitions are input-<k>.json circuit inputs, not witness-<k>.wtns (job.ini inputs = yes) */
} spool_job_t;

/* Creates the spool and its subfolders (mode 0770 + setgid is left to tmpfiles.d). */
int spool_init(const char *spool, char *err, size_t errlen);
/* A new job id: time-ordered, unique ("20261130T051203.123456-3fa9c1"). */
void spool_new_id(char id[SPOOL_ID_MAX]);
bool spool_valid_id(const char *id);
int spool_write_job(const char *dir, const spool_job_t *j);
/* Parses DIR/job.ini; errors like "job.ini:3: unknown key 'x'". */
int spool_read_job(const char *dir, spool_job_t *j, char *err, size_t errlen);
/* Sorted entry names of a folder (skips dot files); *ret_names is malloc'd (free with spool_free_list). */
int spool_list(const char *dir, char ***ret_names, size_t *ret_n);
void spool_free_list(char **names, size_t n);
/* Atomic file write: NAME.tmp.<pid>, fsync, rename, fsync of the folder. */
int spool_write_atomic(const char *path, const char *data, size_t len);
int spool_fsync_dir(const char *dir);
bool spool_exists(const char *path);
/* Moves a job directory into failed/ with a result.json that says why (used for jobs that never
 * got registered: corrupt job.ini, unknown circuit). */
int spool_fail_dir(const char *spool, const char *from_dir, const char *id, const char *status, const char *reason);
/* JSON string escaping into out (always terminated). */
void spool_json_escape(const char *in, char *out, size_t cap);
