/* stage_prog: test workload for the integration tests. Emits stages with known sleeps through
 * the C marker API, from one thread, two threads or two child processes, and can crash, hang,
 * fail or send malformed datagrams, so tests can check what mlbench records.
 * Usage: stage_prog MODE   (modes listed in main) */
#define _GNU_SOURCE /* nanosleep, fork in C11 mode */
#include <mlbench/marker.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static void stage(const char *name, long ms)
{
    mlb_stage_begin(name);
    sleep_ms(ms);
    mlb_stage_end(name);
}

/* load 50 ms, then train 100 ms made of two nested 50 ms steps. */
static int seq(void)
{
    mlb_meta("batch_size", "32");
    mlb_meta("model", "test model");
    stage("load", 50);
    mlb_stage_begin("train");
    for (int i = 0; i < 2; i++) {
        stage("step", 50);
        mlb_counter("images", 32);
    }
    mlb_stage_end("train");
    mlb_counter("accuracy", 0.875);
    mlb_instant("checkpoint");
    return 0;
}

static void *worker(void *arg)
{
    (void)arg;
    stage("work", 50);
    return NULL;
}

/* Two threads each hold stage "work" for 50 ms at the same time. */
static int threads(void)
{
    pthread_t t[2];
    mlb_stage_begin("main");
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    mlb_stage_end("main");
    return 0;
}

/* Two child processes each hold stage "child" for 50 ms, one after the other. */
static int children(void)
{
    mlb_stage_begin("parent");
    for (int i = 0; i < 2; i++) {
        pid_t p = fork();
        if (p == 0) {
            stage("child", 50);
            _exit(0);
        }
        waitpid(p, NULL, 0);
    }
    mlb_stage_end("parent");
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Keeps one core busy for the given seconds. */
static void *burn(void *arg)
{
    double until = now_s() + *(const double *)arg;
    volatile double x = 1;
    while (now_s() < until)
        for (int i = 0; i < 10000; i++)
            x = x * 1.0000001 + 1e-9;
    return NULL;
}

/* Stage "compute": n threads each burning a core for 1 s. */
static int burners(int n)
{
    pthread_t t[8];
    double seconds = 1.0;
    mlb_stage_begin("compute");
    for (int i = 0; i < n; i++)
        pthread_create(&t[i], NULL, burn, &seconds);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    mlb_stage_end("compute");
    return 0;
}

/* Uses the given seconds of CPU time (not wall time: the same work on a busy machine). */
static void burn_cpu(double seconds)
{
    struct timespec ts;
    volatile double x = 1;
    do {
        for (int i = 0; i < 10000; i++)
            x = x * 1.0000001 + 1e-9;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    } while ((double)ts.tv_sec + ts.tv_nsec / 1e9 < seconds);
}

/* Fixed CPU work, so that a run takes longer only when the CPU is shared: "load" uses 60 ms
 * of CPU, then "train" holds 25 "step" spans of 8 ms of CPU each. */
static int steps(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    double used = (double)ts.tv_sec + ts.tv_nsec / 1e9;
    mlb_stage_begin("load");
    burn_cpu(used += 0.06);
    mlb_stage_end("load");
    mlb_stage_begin("train");
    for (int i = 0; i < 25; i++) {
        mlb_stage_begin("step");
        burn_cpu(used += 0.008);
        mlb_stage_end("step");
    }
    mlb_stage_end("train");
    return 0;
}

/* Stage "workers": 20 short-lived processes, one after another, each using 50 ms of CPU. */
static int forkers(void)
{
    mlb_stage_begin("workers");
    for (int i = 0; i < 20; i++) {
        pid_t p = fork();
        if (p == 0) {
            burn_cpu(0.05);
            _exit(0);
        }
        waitpid(p, NULL, 0);
    }
    mlb_stage_end("workers");
    return 0;
}

/* A datagram socket connected to mlbench's marker socket, for datagrams that bypass the API;
 * -1 without one. */
static int marker_socket(void)
{
    const char *path = getenv("MLBENCH_MARKER_SOCKET");
    if (!path)
        return -1;
    int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

/* N distinct top-level stages open at once: each begun on a thread id of its own (raw
 * datagrams, so no N threads are needed), then all ended. */
static int wide(long n)
{
    int fd = marker_socket();
    if (fd < 0)
        return 1;
    char msg[128];
    for (int kind = 0; kind < 2; kind++) {
        for (long i = 0; i < n; i++) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            int len = snprintf(msg, sizeof msg, "%c %lld %d %ld s%ld", kind ? 'E' : 'B',
                               (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec, (int)getpid(),
                               1000000 + i, i);
            while (send(fd, msg, (size_t)len, 0) < 0)
                sleep_ms(1); /* the receiver's queue is full: wait for it */
        }
        sleep_ms(20);
    }
    close(fd);
    return 0;
}

/* Sends datagrams that bypass the API: malformed ones and an unbalanced end. */
static int malformed(void)
{
    int fd = marker_socket();
    if (fd < 0)
        return 1;
    char big[5000];
    memset(big, 'x', sizeof big);
    memcpy(big, "B 1 1 1 ", 8);
    const char *bad[] = {"", "Z 1 2 3 name", "B notanumber 1 1 x", "B 1 1 1 ", "C 1 1 1 loss abc"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        send(fd, bad[i], strlen(bad[i]), 0);
    send(fd, big, sizeof big, 0);
    close(fd);
    mlb_stage_end("never-begun");
    stage("fine", 20);
    return 0;
}

/* Writes path's contents atomically (a temporary file renamed into place). */
static int write_file(const char *path, const char *text)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0)
        return -1;
    return rename(tmp, path);
}

/* For the foreign-sender test: markers from this process ("own"), a child ("child"), a
 * grandchild ("grandchild") and a daemonised grandchild whose parent has ended ("orphan"); then
 * writes MLBENCH_MARKER_SOCKET into FILE and waits (10 s at most) for FILE.sent, which the test
 * creates once an outsider has sent its forgeries; then stage "after". */
static int tree_then_wait(const char *file)
{
    mlb_meta("model", "real");
    stage("own", 20);
    pid_t c = fork();
    if (c == 0) {
        stage("child", 20);
        pid_t g = fork();
        if (g == 0) {
            stage("grandchild", 20);
            _exit(0);
        }
        waitpid(g, NULL, 0);
        _exit(0);
    }
    waitpid(c, NULL, 0);
    int done[2];
    if (pipe(done) < 0)
        return 1;
    c = fork();
    if (c == 0) {
        if (fork() == 0) { /* the orphan: its parent ends at once, mlbench adopts it */
            close(done[0]);
            setsid();
            sleep_ms(30);
            stage("orphan", 20);
            _exit(0); /* closes done[1]: the leader stops waiting */
        }
        _exit(0);
    }
    close(done[1]);
    waitpid(c, NULL, 0);
    char byte;
    while (read(done[0], &byte, 1) > 0)
        ;
    const char *path = getenv("MLBENCH_MARKER_SOCKET");
    if (!path || write_file(file, path) < 0)
        return 1;
    char sent[4096];
    snprintf(sent, sizeof sent, "%s.sent", file);
    for (int i = 0; i < 1000 && access(sent, F_OK) != 0; i++)
        sleep_ms(10);
    stage("after", 10);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "seq";
    if (!strcmp(mode, "seq"))
        return seq();
    if (!strcmp(mode, "stages")) { /* stages NAME MS [NAME MS...]: one after the other */
        for (int i = 2; i + 1 < argc; i += 2)
            stage(argv[i], atol(argv[i + 1]));
        return 0;
    }
    if (!strcmp(mode, "threads"))
        return threads();
    if (!strcmp(mode, "children"))
        return children();
    if (!strcmp(mode, "malformed"))
        return malformed();
    if (!strcmp(mode, "burn1"))
        return burners(1);
    if (!strcmp(mode, "burn2"))
        return burners(2);
    if (!strcmp(mode, "forkers"))
        return forkers();
    if (!strcmp(mode, "steps"))
        return steps();
    if (!strcmp(mode, "tree-then-wait") && argc > 2)
        return tree_then_wait(argv[2]);
    if (!strcmp(mode, "sleeper")) { /* waits on nothing measurable */
        stage("wait", 1000);
        return 0;
    }
    if (!strcmp(mode, "many")) { /* more spans than a result file keeps */
        for (int i = 0; i < 25000; i++) {
            mlb_stage_begin("tick");
            mlb_stage_end("tick");
        }
        return 0;
    }
    if (!strcmp(mode, "wide"))
        return wide(argc > 2 ? atol(argv[2]) : 1000);
    if (!strcmp(mode, "counters")) { /* N distinct counter names (argv[2]) */
        long n = argc > 2 ? atol(argv[2]) : 1000;
        char name[32];
        for (long i = 0; i < n; i++) {
            snprintf(name, sizeof name, "c%ld", i);
            mlb_counter(name, (double)i);
        }
        return 0;
    }
    if (!strcmp(mode, "kill")) { /* dies by SIGKILL inside a stage */
        stage("setup", 20);
        mlb_stage_begin("doomed");
        sleep_ms(30);
        raise(SIGKILL);
    }
    if (!strcmp(mode, "hang")) { /* never ends its stage: for --timeout */
        mlb_stage_begin("forever");
        for (;;)
            pause();
    }
    if (!strcmp(mode, "stubborn")) { /* ignores SIGTERM: needs SIGKILL after the grace time */
        signal(SIGTERM, SIG_IGN);
        mlb_stage_begin("stubborn");
        for (;;)
            pause();
    }
    if (!strcmp(mode, "fail")) { /* fails with a message on stderr */
        stage("load", 10);
        fprintf(stderr, "stage_prog: dataset missing\n");
        return 3;
    }
    fprintf(stderr, "stage_prog: unknown mode '%s'\n", mode);
    return 2;
}
