/* tree_burn: a fixed CPU-bound workload inside a process tree of a chosen size, for measuring
 * what resource sampling costs it (bench/sampler-cost.sh). Forks N-1 children that sleep, then
 * does a fixed amount of arithmetic on T threads, then ends the children.
 * Usage: tree_burn PROCESSES THREADS ITERATIONS */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static long iterations;

static void *work(void *arg)
{
    volatile double x = 1;
    for (long i = 0; i < iterations; i++)
        x = x * 1.0000001 + 1e-9;
    (void)arg;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: tree_burn PROCESSES THREADS ITERATIONS\n");
        return 2;
    }
    int procs = atoi(argv[1]), threads = atoi(argv[2]);
    iterations = atol(argv[3]);
    if (procs < 1 || procs > 1000 || threads < 1 || threads > 64 || iterations < 1) {
        fprintf(stderr, "tree_burn: bad arguments '%s %s %s'\n", argv[1], argv[2], argv[3]);
        return 2;
    }
    pid_t *kids = calloc((size_t)procs, sizeof *kids);
    for (int i = 1; i < procs; i++) {
        kids[i] = fork();
        if (kids[i] == 0) {
            pause();
            _exit(0);
        }
    }
    pthread_t t[64];
    for (int i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, work, NULL);
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    for (int i = 1; i < procs; i++) {
        kill(kids[i], SIGKILL);
        waitpid(kids[i], NULL, 0);
    }
    free(kids);
    return 0;
}
