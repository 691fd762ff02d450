/* fuzz_rank_link: the collector of `mlbench run --ranks-listen` (src/measure/rank_link.c), which
 * reads what the ranks of other hosts send over TCP. One collector listens on 127.0.0.1 (port
 * the system picks) over a marker receiver in a run; each input is the bytes of one connection:
 * a leading "H 1 @" has its '@' replaced by the collector's token (so that inputs reach past the
 * hello), the write side is shut and the replies read until the collector closes. Checked after
 * each: every event stored is a host's (its pid and tid carry a host index, 1..255), every
 * host's samples have as many columns as series and rows as times. */
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "measure/event_log.h"
#include "measure/markers.h"
#include "measure/rank_link.h"

static struct marker_receiver *receiver;
static struct rank_collector *collector;
static struct event_log run_log;
static struct sockaddr_in addr;
static char token[33];

static void setup(void)
{
    char err[512];
    receiver = markers_start(false, err, sizeof err); /* datagrams: the collector has no rings */
    if (receiver)
        collector = rank_collector_start("127.0.0.1:0", receiver, err, sizeof err);
    if (!collector) {
        fprintf(stderr, "fuzz_rank_link: %s\n", err);
        abort();
    }
    /* MLBENCH_RANK_COLLECTOR=127.0.0.1:PORT#TOKEN */
    const char *env = rank_collector_env(collector);
    const char *colon = strrchr(env, ':'), *hash = strrchr(env, '#');
    snprintf(token, sizeof token, "%s", hash + 1);
    addr.sin_family = AF_INET;
    addr.sin_port = htons((uint16_t)atoi(colon + 1));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    event_log_init(&run_log);
    markers_begin_run(receiver, &run_log);
}

static void check_and_reset(void)
{
    markers_end_run(receiver); /* the collector stores under the receiver's lock: none now */
    for (size_t i = 0; i < run_log.n; i++) {
        int32_t host = run_log.ev[i].pid >> RANK_LINK_PID_SHIFT;
        if (host < 1 || host > RANK_LINK_MAX_HOSTS ||
            run_log.ev[i].tid >> RANK_LINK_PID_SHIFT != host) {
            fprintf(stderr, "fuzz_rank_link: event %zu has pid %d tid %d: not a host's\n", i,
                    run_log.ev[i].pid, run_log.ev[i].tid);
            abort();
        }
    }
    for (size_t h = 0; h < run_log.n_hosts; h++) {
        const struct host_samples *hs = &run_log.hosts[h];
        if (!hs->host || !hs->tab.n_series || hs->tab.n > hs->tab.cap || !hs->tab.t_ns) {
            fprintf(stderr, "fuzz_rank_link: host samples %zu are not whole\n", h);
            abort();
        }
    }
    event_log_free(&run_log);
    event_log_init(&run_log);
    markers_begin_run(receiver, &run_log);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!collector)
        setup();
    size_t len = size;
    char *in = malloc(size + sizeof token);
    if (!in)
        return 0;
    if (size >= 5 && !memcmp(data, "H 1 @", 5)) {
        memcpy(in, "H 1 ", 4);
        memcpy(in + 4, token, 32);
        memcpy(in + 36, data + 5, size - 5);
        len = size + 31;
    } else {
        memcpy(in, data, size);
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int rc;
    while ((rc = connect(fd, (struct sockaddr *)&addr, sizeof addr)) < 0 && errno == EINTR)
        ;
    if (fd < 0 || rc < 0) {
        fprintf(stderr, "fuzz_rank_link: cannot connect: %s\n", strerror(errno));
        abort();
    }
    struct timeval tv = {.tv_sec = 2};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    for (size_t off = 0; off < len;) {
        ssize_t n = send(fd, in + off, len - off, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break; /* the collector closes a connection that breaks the protocol */
        off += (size_t)n;
    }
    free(in);
    shutdown(fd, SHUT_WR);
    char reply[4096];
    for (;;) { /* the collector closes once it has read the end */
        ssize_t n = recv(fd, reply, sizeof reply, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
    }
    close(fd);
    check_and_reset();
    return 0;
}
