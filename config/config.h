/* The zkpipe ini (docs/config.md; its place in the pipeline: docs/architecture.md): parsed with inih into one validated
 * struct. Read by every daemon, the zkpipe CLI and the systemd generator.
 * Errors are one line "FILE:LINE: what is wrong" (LINE omitted when it is about the whole file). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/shared.h"

#define CFG_DEFAULT_PATH "/etc/zkpipe/zkpipe.ini"
#define CFG_MAX_CIRCUITS 32
#define CFG_NAME_MAX 64
#define CFG_PATH_MAX 1024

typedef enum { CFG_TRIM_ALWAYS = 0, CFG_TRIM_NEVER = 1, CFG_TRIM_ABOVE = 2 } cfg_trim_t;
typedef enum { CFG_COMPAT_OFF = 0, CFG_COMPAT_OPEN = 1, CFG_COMPAT_TOKEN = 2 } cfg_compat_t;
/* The most partitions a job may have (the job table's, shm/shm.h SHM_MAX_PARTS). */
#define CFG_MAX_PARTITIONS 256
typedef enum { CFG_BACKEND_AUTO = 0, CFG_BACKEND_CPU = 1, CFG_BACKEND_CUDA = 2, CFG_BACKEND_REPLAY = 3 } cfg_backend_t;

typedef struct cfg_circuit {
    char name[CFG_NAME_MAX];
    char zkey[CFG_PATH_MAX]; /* required */
    char r1cs[CFG_PATH_MAX]; /* optional ("" = no constraint check in synthd) */
    bool preload;            /* gpud loads the key at start (default yes) */
    cfg_priority_t priority; /* default priority of jobs for this circuit (NORMAL) */
    int line;                /* line of the [circuit NAME] header, for later errors */
    /* witness generation from inputs (docs/witgen.md); at most one of wasm and witness_cmd */
    char wasm[CFG_PATH_MAX];        /* circom's witness-generator wasm ("" = none) */
    char witness_cmd[CFG_PATH_MAX]; /* native generator run as PROGRAM input.json out.wtns ("" = none) */
    uint32_t witness_timeout;       /* seconds a generator (witness_cmd or wasm) may run (default 600, 0 = no limit) */
    uint64_t witness_memory;        /* bytes: RLIMIT_AS of witness_cmd, cap of the wasm's memory (0 = none) */
} cfg_circuit_t;

typedef struct cfg {
    char path[CFG_PATH_MAX];
    /* [pipeline] */
    char name[CFG_NAME_MAX];    /* pipeline name: [A-Za-z0-9_.-]+ (default "main") */
    char spool[CFG_PATH_MAX];   /* default /var/spool/zkpipe/<name> */
    char segment[CFG_PATH_MAX]; /* default /dev/shm/zkpipe-<name> */
    uint32_t slabs;             /* slab count = the memory budget (default 8) */
    uint64_t slab_size;         /* bytes, multiple of 2 MiB; 0 when auto and not resolved yet */
    bool slab_size_auto;        /* slab_size = auto (the default) */
    bool hugepages;             /* huge pages for the slab data, key copies and window tables (docs/shm.md) */
    uint32_t reserve_critical;  /* slabs only CRITICAL work may fill (default 0) */
    uint32_t jobs;              /* job table size (default 64) */
    uint32_t events;            /* event ring records (default 65536) */
    uint64_t min_free;          /* submit refuses new jobs while the spool has less free (default 64 MiB) */
    char cache[CFG_PATH_MAX];   /* compiled witness generators (default /var/cache/zkpipe/<name>) */
    /* [synth] */
    uint32_t synth_instances; /* default 2 */
    uint32_t synth_threads;   /* 0 = all CPUs (default 1) */
    cfg_trim_t trim;          /* trim = always | never | SIZE (trim when the free heap exceeds SIZE) */
    uint64_t trim_above;
    /* [gpu] */
    uint32_t gpu_devices;  /* gpud instances, one per device (default 1) */
    cfg_backend_t backend; /* default auto */
    uint32_t gpu_inflight; /* partitions in flight per gpud, 0 = the backend's (cpu 1, cuda 2) */
    uint32_t gpu_threads;  /* CPU backend threads, 0 = all CPUs (default 0) */
    uint64_t gpu_precompute; /* CPU backend window tables, bytes, all keys together (default 0: none) */
    uint64_t gpu_device_memory; /* CUDA: device bytes a gpud may use (default 0: the device's free memory) */
    char replay_model[CFG_PATH_MAX]; /* backend = replay: the device model (docs/replay.md; required with it) */
    char replay_cache[CFG_PATH_MAX]; /* backend = replay: the results cache (default CACHE/replay) */
    /* [finalizer] */
    bool verify;                  /* default yes */
    uint32_t finalizer_instances; /* default 1 */
    /* [exporter] */
    char exporter_host[64]; /* listen = HOST:PORT, an IPv4 address or [IPv6] (default 127.0.0.1:9821) */
    uint16_t exporter_port;
    char exporter_hosts[256]; /* hosts = NAME, ...: Host header names served besides IP literals,
                                 localhost and this machine's host name (default none) */
    /* [api]: zkpipe-api (docs/api.md) */
    char api_host[64]; /* listen = HOST:PORT as [exporter] listen (default 127.0.0.1:9080) */
    uint16_t api_port;
    char api_hosts[256];          /* hosts: as [exporter] hosts */
    char api_tokens[CFG_PATH_MAX]; /* tokens file (default /etc/zkpipe/api-tokens) */
    uint64_t api_max_body;        /* bytes of a request body (default 64M) */
    uint32_t api_max_partitions;  /* partitions of one job (default 16) */
    uint32_t api_max_wait;        /* seconds a ?wait= long-poll may hold (default 60) */
    uint32_t api_max_connections; /* open connections (default 1024) */
    cfg_compat_t api_compat;      /* rapidsnark_compat = no | yes (loopback listen only) | token */
    /* [source postgres]: the fleet queue (docs/fleet.md); read by zkpipe-feeder only */
    char source_dsn[CFG_PATH_MAX]; /* libpq connection string; "" = no fleet source */
    char box[CFG_NAME_MAX];        /* this box's name in the fleet (default HOSTNAME-NAME) */
    uint32_t lease_s;              /* lease time in seconds (default 30) */
    uint32_t batch;                /* most jobs claimed in one transaction (default 4) */
    uint32_t max_attempts;         /* claims of a job whose lease keeps lapsing before it fails (default 3, 0 = no cap) */
    uint32_t poll_ms;              /* polling fallback when no NOTIFY comes (default 2000) */
    /* [circuit NAME] */
    uint32_t n_circuits;
    cfg_circuit_t circuits[CFG_MAX_CIRCUITS];
} cfg_t;

/* Parses and validates path. On error returns a negative errno and writes "path:line: ..." into
 * err. slab_size stays 0 when it is auto: plan/slab.h resolves it from the keys. */
int cfg_load(cfg_t *c, const char *path, char *err, size_t errlen);
/* Same from a string (name is used in messages). */
int cfg_load_string(cfg_t *c, const char *name, const char *text, char *err, size_t errlen);

const cfg_circuit_t *cfg_circuit(const cfg_t *c, const char *name);
int cfg_circuit_index(const cfg_t *c, const char *name);

/* A pipeline, box or circuit name: [A-Za-z0-9_.-], not starting with '.', shorter than CFG_NAME_MAX. */
bool cfg_valid_name(const char *s);
/* An IPv4 address in 127/8 or ::1. */
bool cfg_loopback(const char *addr);
/* "123", "4K", "2M", "1G" (binary multiples) -> bytes. */
int cfg_parse_size(const char *s, uint64_t *ret);
