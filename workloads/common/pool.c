/* pool: the fork-join thread pool of pool.h. A pool_run publishes the job and bumps a generation
 * counter; workers poll the counter for a short while (POOL_SPIN_NS) before they block on a
 * condition variable, so that back-to-back runs (several per training step) cost no system call,
 * while an idle pool costs no CPU. The caller, worker 0, waits for the others the same way.
 * The sleeping/waiting flags let the waker skip the mutex when nobody sleeps: each side writes
 * its own flag and then reads the other's (sequentially consistent atomics), so at least one of
 * them sees the other and no wake-up is lost. */
#include "common/pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define cpu_relax() _mm_pause()
#else
#define cpu_relax() ((void)0)
#endif

/* How long a waiter polls before it blocks (measured: a condvar round trip costs 20-60 us on
 * the 2-core test machine; a step of the CNN runs two pool_runs some milliseconds apart). */
#define POOL_SPIN_NS 50000

struct pool_thread {
    struct pool *pool;
    int index;
    pthread_t tid;
};

struct pool {
    int n;
    struct pool_thread *threads; /* n - 1 of them: workers 1..n-1 */
    void (*fn)(void *arg, int worker, int n);
    void *arg;
    int stop;                  /* written before the generation that asks the workers to exit */
    atomic_uint generation;    /* one more per pool_run */
    atomic_int pending;        /* workers 1..n-1 not yet done with this generation */
    atomic_int sleepers;       /* workers blocked (or about to block) on start */
    atomic_int caller_waiting; /* worker 0 blocked (or about to block) on done */
    pthread_mutex_t mutex;
    pthread_cond_t start;
    pthread_cond_t done;
};

static long long elapsed_ns(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)(t.tv_sec - t0->tv_sec) * 1000000000LL + (t.tv_nsec - t0->tv_nsec);
}

/* Polls until the generation differs from seen (POOL_SPIN_NS), then blocks. Returns the new one. */
static unsigned wait_generation(struct pool *p, unsigned seen)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 1;; i++) {
        unsigned g = atomic_load_explicit(&p->generation, memory_order_acquire);
        if (g != seen)
            return g;
        cpu_relax();
        if (i % 64 == 0 && elapsed_ns(&t0) > POOL_SPIN_NS)
            break;
    }
    pthread_mutex_lock(&p->mutex);
    atomic_fetch_add(&p->sleepers, 1);
    unsigned g;
    while ((g = atomic_load(&p->generation)) == seen)
        pthread_cond_wait(&p->start, &p->mutex);
    atomic_fetch_sub(&p->sleepers, 1);
    pthread_mutex_unlock(&p->mutex);
    return g;
}

static void *pool_thread_main(void *arg)
{
    struct pool_thread *t = arg;
    struct pool *p = t->pool;
    unsigned seen = 0;
    for (;;) {
        seen = wait_generation(p, seen);
        if (p->stop)
            return NULL;
        p->fn(p->arg, t->index, p->n);
        if (atomic_fetch_sub(&p->pending, 1) == 1 && atomic_load(&p->caller_waiting)) {
            pthread_mutex_lock(&p->mutex);
            pthread_cond_signal(&p->done);
            pthread_mutex_unlock(&p->mutex);
        }
    }
}

/* Starts generation + 1 (the job fields are written before). */
static void publish(struct pool *p)
{
    atomic_store(&p->pending, p->n - 1);
    atomic_fetch_add(&p->generation, 1);
    if (atomic_load(&p->sleepers) > 0) {
        pthread_mutex_lock(&p->mutex);
        pthread_cond_broadcast(&p->start);
        pthread_mutex_unlock(&p->mutex);
    }
}

static void wait_done(struct pool *p)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 1;; i++) {
        if (atomic_load_explicit(&p->pending, memory_order_acquire) == 0)
            return;
        cpu_relax();
        if (i % 64 == 0 && elapsed_ns(&t0) > POOL_SPIN_NS)
            break;
    }
    pthread_mutex_lock(&p->mutex);
    atomic_store(&p->caller_waiting, 1);
    while (atomic_load(&p->pending) != 0)
        pthread_cond_wait(&p->done, &p->mutex);
    atomic_store(&p->caller_waiting, 0);
    pthread_mutex_unlock(&p->mutex);
}

/* Stops and joins the first `started` threads. */
static void stop_threads(struct pool *p, int started)
{
    p->stop = 1;
    publish(p);
    for (int i = 0; i < started; i++)
        pthread_join(p->threads[i].tid, NULL);
}

struct pool *pool_create(int n)
{
    if (n < 1)
        return NULL;
    struct pool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->n = n;
    p->threads = calloc((size_t)n, sizeof *p->threads);
    if (!p->threads) {
        free(p);
        return NULL;
    }
    pthread_mutex_init(&p->mutex, NULL);
    pthread_cond_init(&p->start, NULL);
    pthread_cond_init(&p->done, NULL);
    for (int i = 0; i < n - 1; i++) {
        p->threads[i].pool = p;
        p->threads[i].index = i + 1;
        if (pthread_create(&p->threads[i].tid, NULL, pool_thread_main, &p->threads[i]) != 0) {
            p->n = i + 1; /* the started ones exit on stop */
            stop_threads(p, i);
            pthread_cond_destroy(&p->done);
            pthread_cond_destroy(&p->start);
            pthread_mutex_destroy(&p->mutex);
            free(p->threads);
            free(p);
            return NULL;
        }
    }
    return p;
}

void pool_free(struct pool *p)
{
    if (!p)
        return;
    stop_threads(p, p->n - 1);
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->start);
    pthread_mutex_destroy(&p->mutex);
    free(p->threads);
    free(p);
}

int pool_size(const struct pool *p)
{
    return p->n;
}

void pool_run(struct pool *p, void (*fn)(void *arg, int worker, int n), void *arg)
{
    if (p->n == 1) {
        fn(arg, 0, 1);
        return;
    }
    p->fn = fn;
    p->arg = arg;
    publish(p);
    fn(arg, 0, p->n);
    wait_done(p);
}
