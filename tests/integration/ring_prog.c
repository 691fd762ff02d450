/* ring_prog: test workload for the ring transport (test_rings.py).
 *   flood THREADS EVENTS  each thread sends EVENTS stage events as fast as it can, then the main
 *                         thread sends the counter "sent" with the total: with a small ring,
 *                         events are dropped and mlbench must count each one
 *   torn                  writes a ring by hand (include/mlbench/marker_ring.h): two records,
 *                         then begins a third and dies by SIGKILL in the middle of it
 *   hostile               hands mlbench broken rings: unsealed, naming another thread, records
 *                         with an unknown name, an unknown kind, a time in the future, and a
 *                         head beyond the capacity; then one good record
 */
#define _GNU_SOURCE
#include <mlbench/marker.h>
#include <mlbench/marker_ring.h>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static long g_events;

static void *flood_thread(void *arg)
{
    (void)arg;
    for (long i = 0; i < g_events; i++)
        (void)(i % 2 ? mlb_stage_end("tick") : mlb_stage_begin("tick"));
    return NULL;
}

static int flood(int threads, long events)
{
    g_events = events;
    pthread_t t[64];
    for (int i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, flood_thread, NULL);
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    mlb_counter("sent", (double)threads * (double)events);
    printf("sent %ld\n", threads * events);
    return 0;
}

/* ---- A client written by hand from marker_ring.h ---- */

static int g_sock = -1;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void send_event(const char *text, int fd)
{
    struct iovec iov = {.iov_base = (void *)text, .iov_len = strlen(text)};
    union {
        char bytes[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctl;
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
    if (fd >= 0) {
        memset(&ctl, 0, sizeof ctl);
        msg.msg_control = ctl.bytes;
        msg.msg_controllen = sizeof ctl.bytes;
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof fd);
    }
    if (sendmsg(g_sock, &msg, 0) < 0)
        perror("ring_prog: sendmsg");
}

static void connect_socket(void)
{
    const char *path = getenv(MLBENCH_MARKER_SOCKET_ENV);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (!path || strlen(path) >= sizeof a.sun_path) {
        fprintf(stderr, "ring_prog: not under mlbench\n");
        exit(2);
    }
    strcpy(a.sun_path, path);
    g_sock = socket(AF_UNIX, SOCK_DGRAM, 0);
    if (connect(g_sock, (struct sockaddr *)&a, sizeof a) != 0) {
        perror("ring_prog: connect");
        exit(2);
    }
}

/* A ring of 128 records: sealed or not, its header naming (pid, tid); announced. */
static struct mlb_ring_header *make_ring(bool seal, int32_t pid, int32_t tid)
{
    const uint64_t cap = MLB_RING_MIN_BYTES / MLB_RING_RECORD_BYTES;
    size_t bytes = MLB_RING_HEADER_BYTES + cap * MLB_RING_RECORD_BYTES;
    int fd = memfd_create("ring_prog", MFD_ALLOW_SEALING);
    if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0 ||
        (seal && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK) != 0)) {
        perror("ring_prog: memfd");
        exit(1);
    }
    struct mlb_ring_header *h = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (h == MAP_FAILED) {
        perror("ring_prog: mmap");
        exit(1);
    }
    memcpy(h->magic, MLB_RING_MAGIC, sizeof h->magic);
    h->version = MLB_RING_VERSION;
    h->record_bytes = MLB_RING_RECORD_BYTES;
    h->capacity = cap;
    h->pid = pid;
    h->tid = tid;
    char text[128];
    snprintf(text, sizeof text, "M %lld %ld %ld mlbench.ring %llu", (long long)now_ns(),
             (long)getpid(), (long)syscall(SYS_gettid), (unsigned long long)cap);
    send_event(text, fd);
    close(fd);
    return h;
}

static void announce_name(unsigned id, const char *name)
{
    char text[256];
    snprintf(text, sizeof text, "M %lld %ld %ld mlbench.name %u %s", (long long)now_ns(),
             (long)getpid(), (long)syscall(SYS_gettid), id, name);
    send_event(text, -1);
}

static void put(struct mlb_ring_header *h, char kind, uint32_t name, int64_t t_ns)
{
    struct mlb_ring_record *rec = (struct mlb_ring_record *)((char *)h + MLB_RING_HEADER_BYTES);
    uint64_t head = h->head;
    __atomic_store_n(&h->begun, head + 1, __ATOMIC_RELAXED);
    rec[head % h->capacity] = (struct mlb_ring_record){.t_ns = t_ns, .name = name,
                                                       .kind = (uint8_t)kind};
    __atomic_store_n(&h->head, head + 1, __ATOMIC_RELEASE);
}

static int torn(void)
{
    connect_socket();
    pid_t pid = getpid(), tid = (pid_t)syscall(SYS_gettid);
    struct mlb_ring_header *h = make_ring(true, pid, tid);
    announce_name(1, "work");
    put(h, 'B', 1, now_ns());
    usleep(20000);
    put(h, 'E', 1, now_ns());
    /* The third record, begun and never finished. */
    struct mlb_ring_record *rec = (struct mlb_ring_record *)((char *)h + MLB_RING_HEADER_BYTES);
    __atomic_store_n(&h->begun, h->head + 1, __ATOMIC_RELAXED);
    rec[h->head].kind = 'B';
    raise(SIGKILL);
    return 1;
}

static int hostile(void)
{
    connect_socket();
    pid_t pid = getpid(), tid = (pid_t)syscall(SYS_gettid);
    (void)make_ring(false, pid, tid);       /* not sealed: refused */
    (void)make_ring(true, pid + 1, tid);    /* another process's: refused */
    struct mlb_ring_header *bad = make_ring(true, pid, tid);
    announce_name(1, "good");
    put(bad, 'B', 99, now_ns());                       /* never announced */
    put(bad, 'Z', 1, now_ns());                        /* unknown kind */
    put(bad, 'I', 1, now_ns() + 3600 * 1000000000LL);  /* an hour ahead */
    put(bad, 'I', 1, now_ns());                        /* fine */
    usleep(50000); /* read */
    struct mlb_ring_header *wild = make_ring(true, pid, tid);
    __atomic_store_n(&wild->head, wild->capacity + 5, __ATOMIC_RELEASE); /* out of range */
    usleep(50000);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "flood") && argc == 4)
        return flood(atoi(argv[2]), atol(argv[3]));
    if (!strcmp(mode, "torn"))
        return torn();
    if (!strcmp(mode, "hostile"))
        return hostile();
    fprintf(stderr, "usage: ring_prog flood THREADS EVENTS | torn | hostile\n");
    return 2;
}
