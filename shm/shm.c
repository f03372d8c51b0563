/* The shared segment: create-or-attach, process table with crash-safe owner tags, slab state
 * machine, job table, futex waits, event ring, reclaim of dead owners. No logging, no policy. */
#include "shm.h"

#include "base/align.h"
#include "base/cleanup.h"
#include "base/text.h"

#include <errno.h>
#include <poll.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define ACQ memory_order_acquire
#define REL memory_order_release
#define RLX memory_order_relaxed
#define ACQREL memory_order_acq_rel

static const uint64_t ALIGN2M = CFG_SLAB_ALIGN;
/* The sinks of the steps (and of shm_job_end, shm_reclaim): reached through shm_step only. */
static void event_put(shm_t *s, uint32_t type, uint32_t job_slot, uint32_t part, uint32_t slab, uint64_t t_ns,
                      uint64_t dur_ns, uint64_t value);
static void hist_add(shm_t *s, uint32_t h, uint64_t ns);

uint64_t shm_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

uint64_t shm_realtime_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void seterr(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void seterr(char *err, size_t errlen, const char *fmt, ...) {
    if (!err || !errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static void layout(shm_header_t *h, const shm_geometry_t *g) {
    h->n_slabs = g->slabs;
    h->n_jobs = g->jobs;
    h->n_events = g->events;
    h->n_procs = SHM_MAX_PROCS;
    h->slab_size = g->slab_size;
    h->header_size = sizeof(shm_header_t);
    h->procs_off = align_up(sizeof(shm_header_t), 4096);
    h->slabs_off = align_up(h->procs_off + sizeof(shm_proc_t) * SHM_MAX_PROCS, 4096);
    h->jobs_off = align_up(h->slabs_off + sizeof(shm_slab_t) * g->slabs, 4096);
    h->events_off = align_up(h->jobs_off + sizeof(shm_job_t) * g->jobs, 4096);
    h->data_off = align_up(h->events_off + sizeof(shm_event_t) * g->events, ALIGN2M);
    h->total_size = h->data_off + g->slab_size * g->slabs;
}

uint64_t shm_segment_size(const shm_geometry_t *g) {
    shm_header_t h;
    layout(&h, g);
    return h.total_size;
}

/* Maps the segment at a 2 MiB-aligned address, so that slab data (2 MiB-aligned offsets) is
 * 2 MiB-aligned in memory too (huge pages, cudaHostRegister). The caller keeps the fd. */
static int map_fd(shm_t *s, int fd, size_t size, int prot) {
    size_t span = size + ALIGN2M;
    uint8_t *area = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (area == MAP_FAILED) return -errno;
    uint8_t *aligned = (uint8_t *)align_up((uintptr_t)area, ALIGN2M);
    if (aligned > area) munmap(area, aligned - area);
    if (aligned + size < area + span) munmap(aligned + size, area + span - (aligned + size));
    void *p = mmap(aligned, size, prot, MAP_SHARED | MAP_FIXED, fd, 0);
    if (p == MAP_FAILED) {
        int e = errno;
        munmap(aligned, size);
        return -e;
    }
    s->base = p;
    s->size = size;
    s->hdr = p;
    return 0;
}

static void unmap(shm_t *s) {
    if (s->base) munmap(s->base, s->size);
    s->base = NULL;
    s->hdr = NULL;
}

static void set_views(shm_t *s) {
    shm_header_t *h = s->hdr;
    s->procs = (shm_proc_t *)(s->base + h->procs_off);
    s->slabs = (shm_slab_t *)(s->base + h->slabs_off);
    s->jobs = (shm_job_t *)(s->base + h->jobs_off);
    s->events = (shm_event_t *)(s->base + h->events_off);
    s->data = s->base + h->data_off;
}

static int geometry_check(const shm_t *s, const shm_geometry_t *g, char *err, size_t errlen) {
    const shm_header_t *h = s->hdr;
    if (!g) return 0;
    char diff[512] = "";
    size_t n = 0;
#define DIFF(field, fmt, a, b)                                                                                         \
    if ((a) != (b))                                                                                                    \
    n += snprintf(diff + n, n < sizeof diff ? sizeof diff - n : 0,                                                     \
                  "%s" field " is " fmt " in the segment, " fmt " in the config", n ? "; " : "", a, b)
    DIFF("slabs", "%u", h->n_slabs, g->slabs);
    DIFF("slab_size", "%llu", (unsigned long long)h->slab_size, (unsigned long long)g->slab_size);
    DIFF("jobs", "%u", h->n_jobs, g->jobs);
    DIFF("events", "%u", h->n_events, g->events);
#undef DIFF
    if (n) {
        seterr(err, errlen,
               "%s: geometry differs: %s (stop every process of this pipeline and remove the segment to change it)",
               s->path, diff);
        return -ESTALE;
    }
    return 0;
}

static int attach(shm_t *s, const shm_geometry_t *g, char *err, size_t errlen) {
    _cleanup_close_ int fd = open(s->path, (s->readonly ? O_RDONLY : O_RDWR) | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        if (e != ENOENT)
            seterr(err, errlen, "%s: cannot open: %s", s->path, strerror(e));
        else
            seterr(err, errlen, "%s: no such segment (is the pipeline running?)", s->path);
        return -e;
    }
    struct stat st;
    uint64_t magic = 0;
    /* the magic first: a file of another kind is named as such, whatever its size */
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && pread(fd, &magic, sizeof magic, 0) == (ssize_t)sizeof magic &&
        magic != SHM_MAGIC)
        return seterr(err, errlen, "%s: not a zkpipe segment (bad magic)", s->path), -EBADMSG;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size < sizeof(shm_header_t))
        return seterr(err, errlen, "%s: too small to be a zkpipe segment (or not a regular file)", s->path), -EBADMSG;
    shm_header_t h;
    if (pread(fd, &h, sizeof h, 0) != (ssize_t)sizeof h || h.magic != SHM_MAGIC)
        return seterr(err, errlen, "%s: not a zkpipe segment (bad magic)", s->path), -EBADMSG;
    if (h.version != SHM_LAYOUT_VERSION || h.header_size != sizeof(shm_header_t))
        return seterr(err, errlen, "%s: layout version %u (header %u bytes), this build uses %u (%zu bytes)", s->path,
                      h.version, h.header_size, SHM_LAYOUT_VERSION, sizeof(shm_header_t)),
               -EPROTO;
    shm_header_t want = {0};
    layout(&want, &(shm_geometry_t){.slabs = h.n_slabs, .jobs = h.n_jobs, .events = h.n_events, .slab_size = h.slab_size});
    if (h.n_procs != SHM_MAX_PROCS || want.total_size != h.total_size || want.data_off != h.data_off ||
        want.jobs_off != h.jobs_off || want.events_off != h.events_off || !h.n_events || h.slab_size % ALIGN2M)
        return seterr(err, errlen, "%s: corrupt header (its offsets do not follow from its geometry)", s->path),
               -EBADMSG;
    if ((uint64_t)st.st_size < h.total_size)
        return seterr(err, errlen, "%s: %lld bytes, header says %llu", s->path, (long long)st.st_size,
                      (unsigned long long)h.total_size),
               -EBADMSG;
    int r = map_fd(s, fd, h.total_size, s->readonly ? PROT_READ : PROT_READ | PROT_WRITE);
    if (r < 0)
        return seterr(err, errlen, "%s: cannot map %llu bytes: %s", s->path, (unsigned long long)h.total_size,
                      strerror(-r)),
               r;
    set_views(s);
    r = geometry_check(s, g, err, errlen);
    if (r < 0) {
        unmap(s);
        return r;
    }
    s->fd = TAKE_FD(fd);
    return 0;
}

static void unlink_pathp(char **p) {
    if (*p) (void)unlink(*p);
}

static int create(shm_t *s, const shm_geometry_t *g, char *err, size_t errlen) {
    if (!g || !g->slabs || !g->jobs || g->events < 16 || !g->slab_size || g->slab_size % ALIGN2M)
        return seterr(err, errlen, "%s: invalid geometry (slab_size must be a non-zero multiple of 2 MiB)", s->path),
               -EINVAL;
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", s->path, (int)getpid());
    _cleanup_close_ int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0660);
    if (fd < 0) {
        int e = errno;
        return seterr(err, errlen, "%s: cannot create: %s", tmp, strerror(e)), -e;
    }
    /* the temporary name goes on every path; after link() the segment keeps its final name */
    __attribute__((cleanup(unlink_pathp))) char *tmp_name = tmp;
    shm_header_t h = {0};
    layout(&h, g);
    /* Reserve every byte now: a segment larger than its file system would otherwise be created and
     * kill every stage with SIGBUS the first time a page beyond the free space is touched. */
    int r = posix_fallocate(fd, 0, (off_t)h.total_size);
    if (r) {
        struct statvfs v;
        char avail[64] = "unknown";
        if (fstatvfs(fd, &v) == 0)
            snprintf(avail, sizeof avail, "%llu MiB", (unsigned long long)((uint64_t)v.f_bavail * v.f_frsize >> 20));
        return seterr(err, errlen, "%s: cannot reserve %llu MiB for the segment: %s (the file system has %s free)",
                      s->path, (unsigned long long)(h.total_size >> 20), strerror(r), avail),
               -r;
    }
    r = map_fd(s, fd, h.total_size, PROT_READ | PROT_WRITE);
    if (r < 0) return seterr(err, errlen, "%s: cannot map: %s", tmp, strerror(-r)), r;
    memcpy(s->hdr, &h, sizeof h);
    s->hdr->version = SHM_LAYOUT_VERSION;
    s->hdr->created_ns = shm_realtime_ns();
    if (getrandom(&s->hdr->generation, sizeof s->hdr->generation, 0) != sizeof s->hdr->generation)
        s->hdr->generation = s->hdr->created_ns ^ (uint64_t)getpid();
    const char *base = strrchr(s->path, '/');
    snprintf(s->hdr->name, sizeof s->hdr->name, "%.63s", base ? base + 1 : s->path);
    set_views(s);
    for (uint32_t i = 0; i < g->slabs; i++) {
        atomic_store_explicit(&s->slabs[i].word, shm_word(SLAB_FREE, SHM_NONE, 0), RLX);
        atomic_store_explicit(&s->slabs[i].job, UINT32_MAX, RLX);
    }
    for (uint32_t i = 0; i < SHM_MAX_PROCS; i++) atomic_store_explicit(&s->procs[i].cur_slab, SHM_NONE, RLX);
    atomic_store_explicit(&s->hdr->next_order, 1, RLX);
    atomic_thread_fence(memory_order_release);
    s->hdr->magic = SHM_MAGIC; /* last; link() below publishes the finished segment */
    if (link(tmp, s->path) < 0) {
        r = -errno;
        unmap(s);
        return r; /* -EEXIST: someone else won; caller attaches */
    }
    s->fd = TAKE_FD(fd);
    s->created = true;
    return 0;
}

int shm_open_segment(shm_t *s, const char *path, const shm_geometry_t *g, bool do_create, char *err, size_t errlen) {
    memset(s, 0, sizeof *s);
    s->fd = -1;
    s->self = -1;
    if (strlen(path) >= sizeof s->path - 32) return seterr(err, errlen, "%s: path too long", path), -ENAMETOOLONG;
    strcpy(s->path, path);
    for (int tries = 0; tries < 4; tries++) {
        int r = attach(s, g, err, errlen);
        if (r != -ENOENT || !do_create) return r;
        r = create(s, g, err, errlen);
        if (r != -EEXIST) return r;
    }
    seterr(err, errlen, "%s: segment keeps appearing and disappearing", path);
    return -EAGAIN;
}

int shm_open_readonly(shm_t *s, const char *path, char *err, size_t errlen) {
    memset(s, 0, sizeof *s);
    s->fd = -1;
    s->self = -1;
    s->readonly = true;
    if (strlen(path) >= sizeof s->path - 32) return seterr(err, errlen, "%s: path too long", path), -ENAMETOOLONG;
    strcpy(s->path, path);
    return attach(s, NULL, err, errlen);
}

void shm_close(shm_t *s) {
    if (s->self >= 0) shm_unregister(s);
    unmap(s);
    if (s->fd >= 0) close(s->fd);
    s->fd = -1;
}

int shm_unlink_segment(const char *path) { return unlink(path) < 0 ? -errno : 0; }

/* ---- processes ---- */

int shm_proc_starttime(int pid, uint64_t *ret) {
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -errno;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return -EIO;
    buf[n] = 0;
    char *p = strrchr(buf, ')'); /* comm may contain spaces and parentheses */
    if (!p) return -EIO;
    if (p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X')) return -ESRCH; /* a zombie owns nothing any more */
    /* after ") " comes field 3 (state); starttime is field 22 */
    int field = 2;
    for (p++; *p && field < 22; p++)
        if (*p == ' ') field++;
    if (field != 22) return -EIO;
    *ret = strtoull(p, NULL, 10);
    return 0;
}

bool shm_owner_alive(shm_t *s, uint64_t word) {
    uint32_t slot = shm_word_slot(word), inc = shm_word_inc(word);
    if (slot >= SHM_MAX_PROCS) return false;
    shm_proc_t *p = &s->procs[slot];
    uint64_t claim = atomic_load_explicit(&p->claim, ACQ);
    if ((uint32_t)(claim >> 32) != inc) return false; /* the slot has a newer incarnation */
    int pid = (int)(claim & 0xffffffffu);
    if (pid == 0) return false;
    if (kill(pid, 0) < 0 && errno == ESRCH) return false;
    if (atomic_load_explicit(&p->ready_inc, ACQ) == inc) {
        uint64_t st;
        int r = shm_proc_starttime(pid, &st);
        if (r == -ENOENT || r == -ESRCH || (r == 0 && st != atomic_load_explicit(&p->starttime, RLX)))
            return false; /* pid reused */
    }
    return true;
}

static bool proc_slot_dead(shm_t *s, uint32_t slot, uint64_t claim) {
    if ((claim & 0xffffffffu) == 0) return true;
    return !shm_owner_alive(s, shm_word(0, slot, (uint32_t)(claim >> 32)));
}

int shm_register(shm_t *s, uint32_t role, uint32_t instance) {
    uint64_t st;
    int r = shm_proc_starttime(getpid(), &st);
    if (r < 0) return r;
    for (uint32_t i = 0; i < SHM_MAX_PROCS; i++) {
        shm_proc_t *p = &s->procs[i];
        uint64_t claim = atomic_load_explicit(&p->claim, ACQ);
        if (!proc_slot_dead(s, i, claim)) continue;
        uint32_t inc = (uint32_t)(claim >> 32) + 1;
        if (inc == 0) inc = 1;
        uint64_t mine = (uint64_t)inc << 32 | (uint32_t)getpid();
        if (!atomic_compare_exchange_strong_explicit(&p->claim, &claim, mine, ACQREL, ACQ)) continue;
        atomic_store_explicit(&p->starttime, st, RLX);
        atomic_store_explicit(&p->role, role, RLX);
        atomic_store_explicit(&p->instance, instance, RLX);
        atomic_store_explicit(&p->cur_slab, SHM_NONE, RLX);
        atomic_store_explicit(&p->started_ns, shm_now_ns(), RLX);
        atomic_store_explicit(&p->heartbeat_ns, shm_now_ns(), RLX);
        atomic_store_explicit(&p->busy_ns, 0, RLX);
        atomic_store_explicit(&p->steps, 0, RLX);
        atomic_store_explicit(&p->disk_wait, 0, RLX);
        atomic_store_explicit(&p->disk_wait_since_ns, 0, RLX);
        atomic_store_explicit(&p->keys, 0, RLX);
        memset(p->device, 0, sizeof p->device);
        atomic_store_explicit(&p->compile_since_ns, 0, RLX);
        atomic_store_explicit(&p->ready_inc, inc, REL);
        s->self = (int)i;
        s->self_inc = inc;
        s->self_role = role;
        return (int)i;
    }
    return -ENOSPC;
}

void shm_unregister(shm_t *s) {
    if (s->self < 0) return;
    shm_proc_t *p = &s->procs[s->self];
    uint64_t mine = (uint64_t)s->self_inc << 32 | (uint32_t)getpid();
    /* keep the incarnation, clear the pid: words tagged with us now read as dead */
    (void)atomic_compare_exchange_strong_explicit(&p->claim, &mine, (uint64_t)s->self_inc << 32, ACQREL, RLX);
    s->self = -1;
}

uint64_t shm_tag(const shm_t *s, uint32_t state) { return shm_word(state, (uint32_t)s->self, s->self_inc); }

void shm_heartbeat(shm_t *s, uint32_t cur_slab) {
    if (s->self < 0) return;
    atomic_store_explicit(&s->procs[s->self].heartbeat_ns, shm_now_ns(), RLX);
    atomic_store_explicit(&s->procs[s->self].cur_slab, cur_slab, RLX);
}

/* ---- futex ---- */

static int futex_wait(_Atomic uint32_t *word, uint32_t seen, const struct timespec *ts) {
    if (atomic_load_explicit(word, ACQ) != seen) return 0;
    long r = syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT, seen, ts, NULL, 0);
    if (r == 0 || errno == EAGAIN) return 0;
    return -errno;
}

int shm_wait(_Atomic uint32_t *word, uint32_t seen, int timeout_ms) {
    struct timespec ts = {.tv_sec = timeout_ms / 1000, .tv_nsec = (long)(timeout_ms % 1000) * 1000000L};
    return futex_wait(word, seen, timeout_ms < 0 ? NULL : &ts);
}

int shm_wait_ns(_Atomic uint32_t *word, uint32_t seen, uint64_t timeout_ns) {
    struct timespec ts = {.tv_sec = (time_t)(timeout_ns / 1000000000ull),
                          .tv_nsec = (long)(timeout_ns % 1000000000ull)};
    return futex_wait(word, seen, &ts);
}

void shm_bump(_Atomic uint32_t *word) {
    atomic_fetch_add_explicit(word, 1, ACQREL);
    (void)syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
}

/* ---- slabs ---- */

uint32_t shm_slab_state(shm_t *s, uint32_t i) { return shm_word_state(atomic_load_explicit(&s->slabs[i].word, ACQ)); }

void shm_slab_counts(shm_t *s, uint32_t counts[SLAB_NSTATES]) {
    memset(counts, 0, sizeof(uint32_t) * SLAB_NSTATES);
    for (uint32_t i = 0; i < s->hdr->n_slabs; i++) {
        uint32_t st = shm_slab_state(s, i);
        if (st < SLAB_NSTATES) counts[st]++;
    }
}

static bool owned_state(uint32_t st) { return st == SLAB_FILLING || st == SLAB_PROVING || st == SLAB_FINALIZING; }

int shm_slab_take_free(shm_t *s, uint32_t reserve, bool critical_ok, uint32_t *ret_idx, bool *ret_reserved) {
    uint32_t n = s->hdr->n_slabs;
    for (int attempt = 0; attempt < 8; attempt++) {
        uint32_t free_n = 0;
        int first = -1;
        for (uint32_t i = 0; i < n; i++)
            if (shm_slab_state(s, i) == SLAB_FREE) {
                if (first < 0) first = (int)i;
                free_n++;
            }
        if (first < 0) return -EAGAIN;
        bool reserved = free_n <= reserve;
        if (reserved && !critical_ok) return -EAGAIN;
        for (uint32_t i = (uint32_t)first; i < n; i++) {
            uint64_t w = atomic_load_explicit(&s->slabs[i].word, ACQ);
            if (shm_word_state(w) != SLAB_FREE) continue;
            if (atomic_compare_exchange_strong_explicit(&s->slabs[i].word, &w, shm_tag(s, SLAB_FILLING), ACQREL, ACQ)) {
                atomic_fetch_add_explicit(&s->slabs[i].fills, 1, RLX);
                shm_bump(&s->hdr->slab_seq);
                *ret_idx = i;
                if (ret_reserved) *ret_reserved = reserved;
                return 0;
            }
        }
    }
    return -EAGAIN;
}

static bool key_less(uint32_t p1, uint64_t o1, uint32_t q1, uint32_t p2, uint64_t o2, uint32_t q2) {
    if (p1 != p2) return p1 < p2;
    if (o1 != o2) return o1 < o2;
    return q1 < q2;
}

int shm_slab_pick(shm_t *s, uint32_t from, uint32_t to, uint32_t *ret_idx) {
    uint32_t n = s->hdr->n_slabs;
    for (int attempt = 0; attempt < 16; attempt++) {
        int best = -1;
        uint64_t best_w = 0, bo = 0;
        uint32_t bp = 0, bq = 0;
        for (uint32_t i = 0; i < n; i++) {
            uint64_t w = atomic_load_explicit(&s->slabs[i].word, ACQ);
            if (shm_word_state(w) != from) continue;
            uint32_t p = atomic_load_explicit(&s->slabs[i].prio, RLX), q = atomic_load_explicit(&s->slabs[i].part, RLX);
            uint64_t o = atomic_load_explicit(&s->slabs[i].order, RLX);
            if (best < 0 || key_less(p, o, q, bp, bo, bq)) best = (int)i, best_w = w, bp = p, bo = o, bq = q;
        }
        if (best < 0) return -EAGAIN;
        uint64_t next = owned_state(to) ? shm_tag(s, to) : shm_word(to, SHM_NONE, 0);
        if (atomic_compare_exchange_strong_explicit(&s->slabs[best].word, &best_w, next, ACQREL, ACQ)) {
            shm_bump(&s->hdr->slab_seq);
            *ret_idx = (uint32_t)best;
            return 0;
        }
    }
    return -EAGAIN;
}

int shm_slab_move(shm_t *s, uint32_t idx, uint32_t from, uint32_t to) {
    uint64_t expect = owned_state(from) ? shm_tag(s, from) : shm_word(from, SHM_NONE, 0);
    uint64_t next = owned_state(to) ? shm_tag(s, to) : shm_word(to, SHM_NONE, 0);
    if (!atomic_compare_exchange_strong_explicit(&s->slabs[idx].word, &expect, next, ACQREL, ACQ)) return -ESTALE;
    shm_bump(&s->hdr->slab_seq);
    return 0;
}

/* ---- registration lock ---- */

/* Under the lock: a LOADING slot can only be left by a lock holder that died. */
static void clear_loading(shm_t *s) {
    for (uint32_t i = 0; i < s->hdr->n_jobs; i++)
        if (atomic_load_explicit(&s->jobs[i].state, ACQ) == JOB_LOADING)
            atomic_store_explicit(&s->jobs[i].state, JOB_FREE, REL);
}

int shm_lock(shm_t *s) {
    uint64_t mine = shm_tag(s, 1);
    for (;;) {
        uint64_t cur = 0;
        if (atomic_compare_exchange_strong_explicit(&s->hdr->reg_lock, &cur, mine, ACQREL, ACQ)) break;
        if (!shm_owner_alive(s, cur)) {
            if (atomic_compare_exchange_strong_explicit(&s->hdr->reg_lock, &cur, mine, ACQREL, ACQ)) break;
            continue;
        }
        /* Held by a live process for one job registration, or for one job's end (its result.json
         * written and synced, its directory renamed); the GPU stage takes it only to force open a
         * lock whose holder died (shm_reclaim). */
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
    clear_loading(s);
    return 0;
}

void shm_unlock(shm_t *s) {
    uint64_t mine = shm_tag(s, 1);
    (void)atomic_compare_exchange_strong_explicit(&s->hdr->reg_lock, &mine, 0, ACQREL, RLX);
}

/* ---- jobs ---- */

bool shm_job_live(uint32_t st) { return st == JOB_ACTIVE || st == JOB_FAILING || st == JOB_CANCELLING; }

int shm_job_find(shm_t *s, const char *id) {
    int best = -ENOENT;
    uint64_t best_order = 0;
    for (uint32_t i = 0; i < s->hdr->n_jobs; i++) {
        shm_job_t *j = &s->jobs[i];
        uint32_t st = atomic_load_explicit(&j->state, ACQ);
        if (st == JOB_FREE || st == JOB_LOADING) continue;
        if (strncmp(j->id, id, SHM_ID_MAX)) continue;
        if (best < 0 || j->order > best_order) best = (int)i, best_order = j->order;
    }
    return best;
}

int shm_job_register(shm_t *s, const char *id, const char *circuit, uint32_t prio, uint32_t n_parts, uint64_t submit_ns,
                     const bool *done_mask) {
    if (n_parts == 0 || n_parts > SHM_MAX_PARTS || strlen(id) >= SHM_ID_MAX || strlen(circuit) >= SHM_CIRCUIT_MAX)
        return -EINVAL;
    int ex = shm_job_find(s, id);
    if (ex >= 0 && shm_job_live(atomic_load_explicit(&s->jobs[ex].state, ACQ))) return ex;
    /* a free slot, else the terminal record that finished first */
    int slot = -1;
    uint64_t oldest = UINT64_MAX;
    for (uint32_t i = 0; i < s->hdr->n_jobs; i++) {
        uint32_t st = atomic_load_explicit(&s->jobs[i].state, ACQ);
        if (st == JOB_FREE) {
            slot = (int)i;
            break;
        }
        if (st >= JOB_DONE) {
            uint64_t d = atomic_load_explicit(&s->jobs[i].done_ns, RLX);
            if (d < oldest) oldest = d, slot = (int)i;
        }
    }
    if (slot < 0) return -ENOSPC;
    shm_job_t *j = &s->jobs[slot];
    atomic_store_explicit(&j->state, JOB_LOADING, REL);
    atomic_fetch_add_explicit(&j->gen, 1, ACQREL);
    snprintf(j->id, sizeof j->id, "%s", id);
    snprintf(j->circuit, sizeof j->circuit, "%s", circuit);
    memset(j->error, 0, sizeof j->error);
    atomic_store_explicit(&j->err_set, 0, RLX);
    j->prio = prio;
    j->n_parts = n_parts;
    j->order = atomic_fetch_add_explicit(&s->hdr->next_order, 1, RLX);
    j->submit_ns = submit_ns;
    j->registered_ns = shm_now_ns();
    atomic_store_explicit(&j->done_ns, 0, RLX);
    for (uint32_t k = 0; k < SHM_MAX_PARTS; k++) {
        shm_part_t *p = &j->parts[k];
        atomic_store_explicit(&p->word, (uint64_t)(done_mask && k < n_parts && done_mask[k] ? PART_DONE : PART_PENDING),
                              RLX);
        atomic_store_explicit(&p->synth_count, 0, RLX);
        atomic_store_explicit(&p->prove_count, 0, RLX);
        atomic_store_explicit(&p->lost_count, 0, RLX);
        atomic_store_explicit(&p->t_claim_ns, 0, RLX);
        atomic_store_explicit(&p->t_ready_ns, 0, RLX);
        atomic_store_explicit(&p->t_prove_start_ns, 0, RLX);
        atomic_store_explicit(&p->t_proved_ns, 0, RLX);
        atomic_store_explicit(&p->t_fin_start_ns, 0, RLX);
        atomic_store_explicit(&p->t_done_ns, 0, RLX);
        atomic_store_explicit(&p->synth_ns, 0, RLX);
        atomic_store_explicit(&p->gpu_ns, 0, RLX);
        atomic_store_explicit(&p->fin_ns, 0, RLX);
    }
    atomic_store_explicit(&j->state, JOB_ACTIVE, REL);
    shm_bump(&s->hdr->job_seq);
    return slot;
}

static uint64_t inflight_word(uint32_t slab) { return (uint64_t)PART_INFLIGHT | (uint64_t)slab << 8; }

/* Only the owner of the slab moves its partition: a stage that lost its slab (taken for dead and
 * reclaimed) moves nothing, even when the same partition went back into a slab of the same index.
 * The partition moves before the slab, so that a crash between the two leaves an owned slab for a
 * reclaimer, never a partition in flight in no slab. */
static bool own_slab(shm_t *s, uint32_t idx, uint32_t st) {
    return atomic_load_explicit(&s->slabs[idx].word, ACQ) == shm_tag(s, st);
}

bool shm_part_give_up(shm_t *s, uint32_t idx, uint32_t from, uint32_t job, uint32_t part, const char *reason) {
    shm_job_t *J = &s->jobs[job];
    bool moved = false;
    if (own_slab(s, idx, from)) {
        uint64_t w = inflight_word(idx);
        moved = atomic_compare_exchange_strong_explicit(&J->parts[part].word, &w,
                                                        (uint64_t)(reason ? PART_FAILED : PART_DROPPED), ACQREL, RLX);
        if (moved && reason) {
            shm_count(s, CNT_PART_FAILED, 1);
            shm_job_fail(s, job, reason);
        }
        (void)shm_slab_move(s, idx, from, SLAB_FREE);
    }
    shm_bump(&s->hdr->job_seq);
    return moved;
}

bool shm_part_retry(shm_t *s, uint32_t idx, uint32_t job, uint32_t part) {
    shm_job_t *J = &s->jobs[job];
    bool moved = false;
    if (own_slab(s, idx, SLAB_FILLING)) {
        /* the partition first, then the slab (as shm_reclaim) */
        uint64_t w = inflight_word(idx);
        uint64_t back = atomic_load_explicit(&J->state, ACQ) == JOB_ACTIVE ? PART_PENDING : PART_DROPPED;
        moved = atomic_compare_exchange_strong_explicit(&J->parts[part].word, &w, back, ACQREL, RLX);
        if (moved) atomic_fetch_sub_explicit(&J->parts[part].synth_count, 1, RLX);
        (void)shm_slab_move(s, idx, SLAB_FILLING, SLAB_FREE);
    }
    shm_bump(&s->hdr->job_seq);
    return moved;
}

int shm_part_finish(shm_t *s, uint32_t idx, uint32_t job, uint32_t part) {
    shm_job_t *J = &s->jobs[job];
    if (!own_slab(s, idx, SLAB_FINALIZING)) return -ESTALE;
    uint64_t w = inflight_word(idx);
    bool moved = atomic_compare_exchange_strong_explicit(&J->parts[part].word, &w, (uint64_t)PART_DONE, ACQREL, RLX);
    int r = shm_slab_move(s, idx, SLAB_FINALIZING, SLAB_FREE);
    shm_bump(&s->hdr->job_seq);
    return moved && r == 0 ? 0 : -ESTALE;
}

void shm_part_counts(shm_t *s, uint32_t slot, uint32_t counts[PART_NSTATES]) {
    shm_job_t *j = &s->jobs[slot];
    memset(counts, 0, sizeof(uint32_t) * PART_NSTATES);
    for (uint32_t k = 0; k < j->n_parts && k < SHM_MAX_PARTS; k++) {
        uint32_t st = shm_part_state(&j->parts[k]);
        if (st < PART_NSTATES) counts[st]++;
    }
}

const char *shm_job_error(const shm_job_t *j) {
    return atomic_load_explicit(&j->err_set, ACQ) == 2 ? j->error : "";
}

bool shm_job_set_error(shm_t *s, uint32_t slot, const char *reason) {
    shm_job_t *j = &s->jobs[slot];
    uint32_t zero = 0;
    if (!atomic_compare_exchange_strong_explicit(&j->err_set, &zero, 1, ACQREL, RLX)) return false;
    /* valid UTF-8 whatever an input put in the reason, never cut inside a character */
    text_utf8_escape(reason, j->error, sizeof j->error);
    atomic_store_explicit(&j->err_set, 2, REL);
    return true;
}

uint32_t shm_job_outcome(shm_t *s, uint32_t slot) {
    shm_job_t *J = &s->jobs[slot];
    uint32_t st = shm_job_state(J);
    if (!shm_job_live(st) || shm_job_outstanding(s, slot)) return 0;
    if (st == JOB_CANCELLING) return JOB_CANCELLED;
    uint32_t counts[PART_NSTATES];
    shm_part_counts(s, slot, counts);
    if (st == JOB_ACTIVE && counts[PART_DONE] == J->n_parts) return JOB_DONE;
    /* ACTIVE with a partition not done cannot happen without a FAILED/DROPPED one: keep a reason */
    (void)shm_job_set_error(s, slot, "some partitions were dropped");
    return JOB_FAILED;
}

void shm_job_end(shm_t *s, uint32_t slot, uint32_t final) {
    shm_job_t *J = &s->jobs[slot];
    uint64_t now = shm_now_ns();
    atomic_store_explicit(&J->done_ns, now, RLX);
    atomic_store_explicit(&J->state, final, REL);
    shm_count(s, final == JOB_DONE ? CNT_JOBS_DONE : CNT_JOBS_FAILED, 1);
    uint64_t rt = shm_realtime_ns(); /* end to end: from the submission when its time is sane */
    if (J->prio < CFG_PRIO_COUNT)
        hist_add(s, HIST_JOB + J->prio, J->submit_ns && rt > J->submit_ns ? rt - J->submit_ns : now - J->registered_ns);
    event_put(s, EV_JOB_DONE, slot, J->n_parts, SHM_NONE, J->registered_ns, now - J->registered_ns, final);
    shm_bump(&s->hdr->job_seq);
}

void shm_job_fail(shm_t *s, uint32_t slot, const char *reason) {
    shm_job_t *j = &s->jobs[slot];
    (void)shm_job_set_error(s, slot, reason);
    uint32_t st = JOB_ACTIVE;
    (void)atomic_compare_exchange_strong_explicit(&j->state, &st, JOB_FAILING, ACQREL, RLX);
    shm_job_drop_pending(s, slot);
    shm_bump(&s->hdr->job_seq);
    shm_bump(&s->hdr->slab_seq); /* the finalizer completes failed jobs; it waits on slab_seq */
}

int shm_job_cancel(shm_t *s, uint32_t slot) {
    shm_job_t *j = &s->jobs[slot];
    uint32_t st = JOB_ACTIVE;
    if (!atomic_compare_exchange_strong_explicit(&j->state, &st, JOB_CANCELLING, ACQREL, ACQ))
        return st == JOB_CANCELLING ? 0 : -EALREADY;
    shm_job_drop_pending(s, slot);
    shm_bump(&s->hdr->job_seq);
    shm_bump(&s->hdr->slab_seq); /* gpud and finalizerd drop its slabs at their next step */
    return 0;
}

void shm_job_drop_pending(shm_t *s, uint32_t slot) {
    shm_job_t *j = &s->jobs[slot];
    for (uint32_t k = 0; k < j->n_parts; k++) {
        uint64_t w = PART_PENDING;
        (void)atomic_compare_exchange_strong_explicit(&j->parts[k].word, &w, PART_DROPPED, ACQREL, RLX);
    }
}

uint32_t shm_job_outstanding(shm_t *s, uint32_t slot) {
    shm_job_t *j = &s->jobs[slot];
    uint32_t n = 0;
    for (uint32_t k = 0; k < j->n_parts; k++) {
        uint32_t st = shm_part_state(&j->parts[k]);
        if (st == PART_PENDING || st == PART_INFLIGHT) n++;
    }
    return n;
}

bool shm_slab_stale(shm_t *s, uint32_t idx) {
    shm_slab_t *d = &s->slabs[idx];
    shm_job_t *j = &s->jobs[atomic_load_explicit(&d->job, RLX)];
    return shm_job_gen(j) != atomic_load_explicit(&d->job_gen, RLX) || shm_job_state(j) != JOB_ACTIVE;
}

bool shm_part_pending(shm_t *s, bool critical_only, bool (*skip)(uint32_t job, void *ctx), void *ctx) {
    for (uint32_t i = 0; i < s->hdr->n_jobs; i++) {
        shm_job_t *j = &s->jobs[i];
        if (atomic_load_explicit(&j->state, ACQ) != JOB_ACTIVE) continue;
        if (critical_only && j->prio != CFG_PRIO_CRITICAL) continue;
        for (uint32_t k = 0; k < j->n_parts; k++)
            if (shm_part_state(&j->parts[k]) == PART_PENDING) {
                if (skip && skip(i, ctx)) break;
                return true;
            }
    }
    return false;
}

int shm_part_claim(shm_t *s, uint32_t slab, bool critical_only, uint32_t *ret_job, uint32_t *ret_part) {
    return shm_part_claim_skip(s, slab, critical_only, NULL, NULL, ret_job, ret_part);
}

int shm_part_claim_skip(shm_t *s, uint32_t slab, bool critical_only, bool (*skip)(uint32_t job, void *ctx), void *ctx,
                        uint32_t *ret_job, uint32_t *ret_part) {
    for (int attempt = 0; attempt < 64; attempt++) {
        int bj = -1;
        uint32_t bk = 0;
        for (uint32_t i = 0; i < s->hdr->n_jobs; i++) {
            shm_job_t *j = &s->jobs[i];
            if (atomic_load_explicit(&j->state, ACQ) != JOB_ACTIVE) continue;
            if (critical_only && j->prio != CFG_PRIO_CRITICAL) continue;
            if (bj >= 0 && !key_less(j->prio, j->order, 0, s->jobs[bj].prio, s->jobs[bj].order, 0)) continue;
            if (skip && skip(i, ctx)) continue;
            for (uint32_t k = 0; k < j->n_parts; k++)
                if (shm_part_state(&j->parts[k]) == PART_PENDING) {
                    bj = (int)i, bk = k;
                    break;
                }
        }
        if (bj < 0) return -EAGAIN;
        shm_job_t *j = &s->jobs[bj];
        shm_slab_t *d = &s->slabs[slab];
        /* descriptor first: a reclaimer of this slab finds the partition through it */
        atomic_store_explicit(&d->job, (uint32_t)bj, RLX);
        atomic_store_explicit(&d->job_gen, atomic_load_explicit(&j->gen, ACQ), RLX);
        atomic_store_explicit(&d->part, bk, RLX);
        atomic_store_explicit(&d->prio, j->prio, RLX);
        atomic_store_explicit(&d->order, j->order, RLX);
        atomic_thread_fence(memory_order_seq_cst);
        uint64_t w = PART_PENDING;
        if (atomic_compare_exchange_strong_explicit(&j->parts[bk].word, &w, inflight_word(slab), ACQREL, ACQ)) {
            atomic_store_explicit(&j->parts[bk].t_claim_ns, shm_now_ns(), RLX);
            atomic_fetch_add_explicit(&j->parts[bk].synth_count, 1, RLX);
            *ret_job = (uint32_t)bj;
            *ret_part = bk;
            return 0;
        }
    }
    return -EAGAIN;
}

/* ---- reclaim ---- */

int shm_reclaim(shm_t *s) {
    int n = 0;
    for (uint32_t i = 0; i < s->hdr->n_slabs; i++) {
        shm_slab_t *d = &s->slabs[i];
        uint64_t w = atomic_load_explicit(&d->word, ACQ);
        uint32_t st = shm_word_state(w);
        if (!owned_state(st) || shm_owner_alive(s, w)) continue;
        uint32_t to = st == SLAB_FILLING ? SLAB_FREE : st == SLAB_PROVING ? SLAB_READY : SLAB_PROVED;
        if (st == SLAB_FILLING) {
            /* the partition first, then the slab (see the invariants at the top of shm.h) */
            uint32_t jb = atomic_load_explicit(&d->job, RLX), k = atomic_load_explicit(&d->part, RLX);
            if (jb < s->hdr->n_jobs && k < SHM_MAX_PARTS &&
                atomic_load_explicit(&s->jobs[jb].gen, ACQ) == atomic_load_explicit(&d->job_gen, RLX)) {
                uint64_t pw = inflight_word(i);
                uint32_t js = atomic_load_explicit(&s->jobs[jb].state, ACQ);
                uint64_t back = js == JOB_ACTIVE ? PART_PENDING : PART_DROPPED;
                if (atomic_compare_exchange_strong_explicit(&s->jobs[jb].parts[k].word, &pw, back, ACQREL, RLX))
                    shm_bump(&s->hdr->job_seq);
            }
        }
        if (atomic_compare_exchange_strong_explicit(&d->word, &w, shm_word(to, SHM_NONE, 0), ACQREL, RLX)) {
            n++;
            shm_count(s, CNT_RECLAIMED, 1);
            event_put(s, EV_RECLAIM, atomic_load_explicit(&d->job, RLX), atomic_load_explicit(&d->part, RLX), i,
                      shm_now_ns(), 0, st);
            shm_bump(&s->hdr->slab_seq);
        }
    }
    /* A dead holder's lock is forced open here without ever waiting: taken over by one CAS from the
     * dead tag (a live process that got it first is left alone), LOADING slots cleared, released. */
    uint64_t lk = atomic_load_explicit(&s->hdr->reg_lock, ACQ);
    if (lk && !shm_owner_alive(s, lk) &&
        atomic_compare_exchange_strong_explicit(&s->hdr->reg_lock, &lk, shm_tag(s, 1), ACQREL, RLX)) {
        clear_loading(s);
        shm_unlock(s);
    }
    return n;
}

/* ---- events ---- */

static void event_put(shm_t *s, uint32_t type, uint32_t job_slot, uint32_t part, uint32_t slab, uint64_t t_ns,
                      uint64_t dur_ns, uint64_t value) {
    uint64_t h = atomic_fetch_add_explicit(&s->hdr->ev_head, 1, RLX);
    shm_event_t *e = &s->events[h % s->hdr->n_events];
    atomic_store_explicit(&e->seq, 0, RLX);
    atomic_thread_fence(memory_order_release);
    e->t_ns = t_ns;
    e->dur_ns = dur_ns;
    e->value = value;
    e->pid = (uint32_t)getpid();
    e->role = s->self_role;
    e->type = type;
    e->slab = slab;
    e->part = part;
    e->job_slot = job_slot;
    if (job_slot < s->hdr->n_jobs)
        snprintf(e->job, sizeof e->job, "%.31s", s->jobs[job_slot].id);
    else
        e->job[0] = 0;
    atomic_store_explicit(&e->seq, h + 1, REL);
}

bool shm_proc_info(shm_t *s, uint32_t slot, shm_proc_info_t *ret) {
    shm_proc_t *p = &s->procs[slot];
    uint64_t claim = atomic_load_explicit(&p->claim, ACQ);
    if ((claim & 0xffffffffu) == 0) return false;
    ret->pid = (uint32_t)(claim & 0xffffffffu);
    ret->alive = !proc_slot_dead(s, slot, claim);
    ret->role = atomic_load_explicit(&p->role, RLX);
    ret->instance = atomic_load_explicit(&p->instance, RLX);
    ret->cur_slab = atomic_load_explicit(&p->cur_slab, RLX);
    ret->heartbeat_ns = atomic_load_explicit(&p->heartbeat_ns, RLX);
    ret->started_ns = atomic_load_explicit(&p->started_ns, RLX);
    ret->busy_ns = atomic_load_explicit(&p->busy_ns, RLX);
    ret->disk_wait = atomic_load_explicit(&p->disk_wait, RLX);
    ret->disk_wait_since_ns = atomic_load_explicit(&p->disk_wait_since_ns, RLX);
    ret->keys = atomic_load_explicit(&p->keys, RLX);
    ret->steps = atomic_load_explicit(&p->steps, RLX);
    memcpy(ret->device, p->device, sizeof ret->device);
    ret->device[sizeof ret->device - 1] = 0;
    /* the name between two reads of its time: a compile that changed meanwhile reads as none */
    uint64_t since = atomic_load_explicit(&p->compile_since_ns, ACQ);
    memcpy(ret->compiling, p->compiling, sizeof ret->compiling);
    ret->compiling[sizeof ret->compiling - 1] = 0;
    atomic_thread_fence(ACQ);
    if (!since || atomic_load_explicit(&p->compile_since_ns, RLX) != since) since = 0, ret->compiling[0] = 0;
    ret->compile_since_ns = since;
    return true;
}

void shm_proc_compiling(shm_t *s, const char *circuit) {
    if (s->self < 0) return;
    shm_proc_t *p = &s->procs[s->self];
    atomic_store_explicit(&p->compile_since_ns, 0, REL);
    if (!circuit) return;
    atomic_thread_fence(memory_order_seq_cst);
    snprintf(p->compiling, sizeof p->compiling, "%s", circuit);
    atomic_store_explicit(&p->compile_since_ns, shm_now_ns(), REL);
}

void shm_proc_device(shm_t *s, const char *name) {
    if (s->self >= 0) snprintf(s->procs[s->self].device, sizeof s->procs[s->self].device, "%s", name);
}

void shm_keys_resident(shm_t *s, uint32_t n) {
    if (s->self >= 0) atomic_store_explicit(&s->procs[s->self].keys, n, RLX);
}

void shm_slab_info(shm_t *s, uint32_t idx, shm_slab_info_t *ret) {
    shm_slab_t *d = &s->slabs[idx];
    uint64_t w = atomic_load_explicit(&d->word, ACQ);
    memset(ret, 0, sizeof *ret);
    ret->state = shm_word_state(w);
    ret->job = ret->part = SHM_NONE;
    if (ret->state != SLAB_FREE) {
        ret->job = atomic_load_explicit(&d->job, RLX);
        ret->part = atomic_load_explicit(&d->part, RLX);
        ret->prio = atomic_load_explicit(&d->prio, RLX);
    }
    if (owned_state(ret->state) && shm_word_slot(w) < SHM_MAX_PROCS) {
        uint64_t claim = atomic_load_explicit(&s->procs[shm_word_slot(w)].claim, ACQ);
        ret->owner_alive = shm_owner_alive(s, w);
        ret->owner_pid = ret->owner_alive ? (uint32_t)(claim & 0xffffffffu) : 0;
    }
}

/* ---- histograms ---- */

static void hist_add(shm_t *s, uint32_t h, uint64_t ns) {
    if (h >= HIST_MAX) return;
    shm_hist_t *x = &s->hdr->hist[h];
    atomic_fetch_add_explicit(&x->bucket[shm_hist_bucket(ns)], 1, RLX);
    atomic_fetch_add_explicit(&x->sum_ns, ns, RLX);
    atomic_fetch_add_explicit(&x->count, 1, REL);
}

bool shm_hist_read(shm_t *s, uint32_t h, shm_hist_snap_t *ret) {
    memset(ret, 0, sizeof *ret);
    if (h >= HIST_MAX) return true;
    shm_hist_t *x = &s->hdr->hist[h];
    uint64_t total = 0;
    for (int tries = 0; tries < 8; tries++) {
        uint64_t c1 = atomic_load_explicit(&x->count, ACQ);
        ret->sum_ns = atomic_load_explicit(&x->sum_ns, RLX);
        total = 0;
        for (uint32_t k = 0; k < SHM_HIST_BUCKETS; k++)
            total += ret->bucket[k] = atomic_load_explicit(&x->bucket[k], RLX);
        atomic_thread_fence(memory_order_acquire);
        if (total == c1 && atomic_load_explicit(&x->count, RLX) == c1) {
            ret->count = c1;
            return true;
        }
    }
    ret->count = total; /* adds kept coming: the buckets are what a reader exports */
    return false;
}

void shm_hist_diff(const shm_hist_snap_t *now, const shm_hist_snap_t *before, shm_hist_snap_t *ret) {
    uint64_t total = 0;
    for (uint32_t k = 0; k < SHM_HIST_BUCKETS; k++) {
        ret->bucket[k] = now->bucket[k] >= before->bucket[k] ? now->bucket[k] - before->bucket[k] : now->bucket[k];
        total += ret->bucket[k];
    }
    ret->sum_ns = now->sum_ns >= before->sum_ns ? now->sum_ns - before->sum_ns : now->sum_ns;
    ret->count = total;
}

uint64_t shm_hist_quantile_ns(const shm_hist_snap_t *h, double q) {
    uint64_t total = 0;
    for (uint32_t k = 0; k < SHM_HIST_BUCKETS; k++) total += h->bucket[k];
    if (!total) return 0;
    double want = q * (double)total;
    uint64_t acc = 0;
    for (uint32_t k = 0; k < SHM_HIST_BUCKETS; k++) {
        acc += h->bucket[k];
        if ((double)acc >= want && acc) return shm_hist_bound_ns(k);
    }
    return UINT64_MAX;
}

/* ---- steps ---- */

#define STAGE_PREFIX_SYNTHD "synth"
#define STAGE_PREFIX_GPUD "gpu"
#define STAGE_PREFIX_FINALIZERD "finalize"
#define PART_OFF_none 0
#define PART_OFF_synth_ns offsetof(shm_part_t, synth_ns)
#define PART_OFF_gpu_ns offsetof(shm_part_t, gpu_ns)
#define PART_OFF_fin_ns offsetof(shm_part_t, fin_ns)
#define PART_NAME_none NULL
#define PART_NAME_synth_ns "synth_ns"
#define PART_NAME_gpu_ns "gpu_ns"
#define PART_NAME_fin_ns "fin_ns"

static const struct step_row {
    shm_step_info_t info;
    size_t part_off; /* 0: none (the partition word is at 0, never a step's) */
} steps[STEP_MAX] = {
/* clang-format off */
#define STEP_ROW(id, stage, nm, journal_field, field) \
    [STEP_##id] = {{ROLE_##stage, #nm, STAGE_PREFIX_##stage "." #nm, journal_field, PART_NAME_##field}, PART_OFF_##field},
    SHM_STEPS(STEP_ROW)
#undef STEP_ROW
    /* clang-format on */
};

const shm_step_info_t *shm_step_info(uint32_t step) { return step < STEP_MAX ? &steps[step].info : NULL; }

static _Atomic uint64_t *part_field(shm_part_t *p, size_t off) { return (_Atomic uint64_t *)((char *)p + off); }

uint64_t shm_part_step_ns(const shm_part_t *p, uint32_t step) {
    if (step >= STEP_MAX || !steps[step].part_off) return 0;
    return atomic_load_explicit(part_field((shm_part_t *)p, steps[step].part_off), RLX);
}

void shm_step(shm_t *s, shm_pass_t *pass, uint32_t step, uint64_t t_ns, uint64_t dur_ns, uint64_t value) {
    if (step >= STEP_MAX) return;
    const struct step_row *row = &steps[step];
    uint32_t job = pass ? pass->job : UINT32_MAX;
    event_put(s, EV_STEP + step, job, pass ? pass->part : 0, pass ? pass->slab : SHM_NONE, t_ns, dur_ns, value);
    hist_add(s, step, dur_ns);
    if (!pass) return;
    pass->ns[step] += dur_ns;
    pass->recorded |= 1ull << step;
    if (!row->part_off || job >= s->hdr->n_jobs || pass->part >= SHM_MAX_PARTS) return;
    /* the field is this pass's sum of the steps that name it: a pass again (a reclaimed partition)
     * replaces what an earlier one left */
    uint64_t sum = 0;
    for (uint32_t k = 0; k < STEP_MAX; k++)
        if (steps[k].part_off == row->part_off) sum += pass->ns[k];
    atomic_store_explicit(part_field(&s->jobs[job].parts[pass->part], row->part_off), sum, RLX);
}

void shm_disk_wait(shm_t *s, int delta) {
    if (s->self < 0 || !delta) return;
    shm_proc_t *p = &s->procs[s->self];
    uint32_t before = atomic_load_explicit(&p->disk_wait, RLX), after = (uint32_t)((int)before + delta);
    if (before == 0) atomic_store_explicit(&p->disk_wait_since_ns, shm_now_ns(), RLX);
    if (after == 0) atomic_store_explicit(&p->disk_wait_since_ns, 0, RLX);
    atomic_store_explicit(&p->disk_wait, after, RLX); /* only the owner writes it */
}

void shm_event_range(shm_t *s, uint64_t *ret_first, uint64_t *ret_head) {
    uint64_t head = atomic_load_explicit(&s->hdr->ev_head, ACQ), n = s->hdr->n_events;
    *ret_first = head > n ? head - n : 0;
    *ret_head = head;
}

bool shm_event_read(shm_t *s, uint64_t i, shm_event_t *ret) {
    shm_event_t *e = &s->events[i % s->hdr->n_events];
    if (atomic_load_explicit(&e->seq, ACQ) != i + 1) return false;
    ret->t_ns = e->t_ns;
    ret->dur_ns = e->dur_ns;
    ret->value = e->value;
    ret->pid = e->pid;
    ret->role = e->role;
    ret->type = e->type;
    ret->slab = e->slab;
    ret->part = e->part;
    ret->job_slot = e->job_slot;
    memcpy(ret->job, e->job, sizeof ret->job);
    ret->job[sizeof ret->job - 1] = 0;
    /* seqlock reader: the copy must be complete before the re-check reads seq again */
    atomic_thread_fence(memory_order_acquire);
    if (atomic_load_explicit(&e->seq, RLX) != i + 1) return false;
    atomic_store_explicit(&ret->seq, i + 1, RLX);
    return true;
}

/* ---- names ---- */

const char *shm_slab_state_name(uint32_t st) {
    static const char *n[] = {"FREE", "FILLING", "READY", "PROVING", "PROVED", "FINALIZING"};
    return st < SLAB_NSTATES ? n[st] : "?";
}
const char *shm_job_state_name(uint32_t st) {
    static const char *n[] = {"free", "loading", "active", "failing", "cancelling", "done", "failed", "cancelled"};
    return st < 8 ? n[st] : "?";
}
const char *shm_part_state_name(uint32_t st) {
    static const char *n[] = {"pending", "inflight", "done", "failed", "dropped"};
    return st < 5 ? n[st] : "?";
}
const char *shm_role_name(uint32_t role) {
    static const char *n[] = {"none", "synthd", "gpud", "finalizerd", "cli"};
    return role < 5 ? n[role] : "?";
}
const char *shm_event_name(uint32_t type) {
    if (type >= EV_STEP && type < EV_STEP + STEP_MAX) return steps[type - EV_STEP].info.event;
    return type == EV_JOB_DONE ? "job.done" : type == EV_RECLAIM ? "reclaim" : "?";
}

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif
#define HUGETLBFS_MAGIC_ 0x958458f6
#define TMPFS_MAGIC_ 0x01021994

int shm_hugepages_advise(void *p, size_t len, bool collapse) {
    if (!len) return 0;
    if (madvise(p, len, MADV_HUGEPAGE) < 0) return -errno;
    /* MADV_COLLAPSE (Linux 6.1) turns the pages already present into huge pages now, whatever the
     * system-wide THP settings; EINVAL where the kernel lacks it, EAGAIN/ENOMEM where memory is too
     * fragmented: the advice above still applies to what is faulted later. EAGAIN is also what a
     * stage gets while another collapses the same shared pages at that moment: tried again a few
     * times, 20 ms apart. */
    for (int tries = 0; collapse; tries++) {
        if (madvise(p, len, MADV_COLLAPSE) == 0) break;
        if (errno != EAGAIN || tries >= 5) return -errno;
        (void)poll(NULL, 0, 20);
    }
    return 0;
}

static uint64_t smaps_field(const char *text, const char *key) {
    const char *p = strstr(text, key);
    unsigned long long kib = 0;
    if (p && sscanf(p + strlen(key), " %llu kB", &kib) == 1) return (uint64_t)kib * 1024;
    return 0;
}

void shm_mem_usage(shm_mem_usage_t *u) {
    memset(u, 0, sizeof *u);
    char buf[8192];
    const char *files[2] = {"/proc/self/status", "/proc/self/smaps_rollup"};
    for (int i = 0; i < 2; i++) {
        _cleanup_close_ int fd = open(files[i], O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        ssize_t n = read(fd, buf, sizeof buf - 1);
        if (n <= 0) continue;
        buf[n] = 0;
        if (i == 0) {
            u->rss = smaps_field(buf, "VmRSS:");
            u->anon = smaps_field(buf, "RssAnon:");
            u->file = smaps_field(buf, "RssFile:");
            u->shmem = smaps_field(buf, "RssShmem:");
        } else {
            u->anon_huge = smaps_field(buf, "AnonHugePages:");
            u->shmem_huge = smaps_field(buf, "ShmemPmdMapped:") + smaps_field(buf, "FilePmdMapped:");
        }
    }
}

int shm_segment_hugepages(shm_t *s, char *desc, size_t desclen) {
    struct statfs f;
    if (fstatfs(s->fd, &f) == 0 && (unsigned long)f.f_type == HUGETLBFS_MAGIC_) {
        snprintf(desc, desclen, "hugetlbfs");
        return 0;
    }
    size_t len = (size_t)s->hdr->n_slabs * s->hdr->slab_size;
    int r = shm_hugepages_advise(s->data, len, true);
    shm_mem_usage_t u;
    shm_mem_usage(&u);
    /* collapse fails with EAGAIN where a page was busy (another stage collapsing the same file at
     * once): what it did collapse stays huge, so the figure below is what counts */
    uint64_t huge = u.shmem_huge < len ? u.shmem_huge : len;
    int n = snprintf(desc, desclen, "%s, collapsed into huge pages (MADV_COLLAPSE): %llu of %llu MiB",
                     (unsigned long)f.f_type == TMPFS_MAGIC_ ? "tmpfs" : "not tmpfs", (unsigned long long)(huge >> 20),
                     (unsigned long long)(len >> 20));
    if (r < 0 && n > 0 && (size_t)n < desclen) snprintf(desc + n, desclen - (size_t)n, " (the rest: %s)", strerror(-r));
    return huge == len ? 0 : r < 0 ? r : -ENOMEM;
}
