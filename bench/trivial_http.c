/* trivial-http: the smallest HTTP server on libmicrohttpd, the target of the load generators'
 * benchmarks (bench/load-capacity.sh, bench/load-latency.sh): every request, whatever its method
 * and path, is answered 200 with the same 2-byte body "ok" on a keep-alive connection (the body
 * of a request is read and dropped). One shared response object, built once.
 *
 * Without --delay-us: MHD_USE_EPOLL_INTERNAL_THREAD with a pool of --threads event loops (each
 * loop serves many connections). With --delay-us U: a thread per connection that sleeps U
 * microseconds before answering, so that a fixed server time separates the generators'
 * latencies from their own costs (an event loop cannot sleep without stalling its other
 * connections).
 * Usage: trivial-http [--listen HOST:PORT] [--threads N] [--delay-us U] [--per-connection]
 *   --listen      IPv4 address and port (default 127.0.0.1:0; port 0: any free port); prints
 *                 "listening on http://HOST:PORT" once ready
 *   --threads     event-loop threads (default 1)
 *   --delay-us    sleep before each answer (default 0; > 0 implies --per-connection)
 *   --per-connection  a thread per connection instead of the epoll pool (to compare the two)
 * Runs until SIGTERM or SIGINT; exit 2 on bad options. */
#define _DEFAULT_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#if MHD_VERSION < 0x00097002
typedef int mhd_result; /* before 0.9.71 handlers returned int */
#else
typedef enum MHD_Result mhd_result;
#endif

static struct MHD_Response *ok_response;
static unsigned delay_us;

/* Answers at the request's last call (after its body), so the connection stays open. */
static mhd_result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                         const char *version, const char *data, size_t *size, void **con_cls)
{
    static int first_call;
    (void)cls;
    (void)url;
    (void)method;
    (void)version;
    (void)data;
    if (*con_cls == NULL) { /* headers in: nothing to answer yet */
        *con_cls = &first_call;
        return MHD_YES;
    }
    if (*size) { /* a piece of the body: dropped */
        *size = 0;
        return MHD_YES;
    }
    if (delay_us)
        usleep(delay_us);
    return MHD_queue_response(c, MHD_HTTP_OK, ok_response);
}

/* The long option's value as an integer from lo to hi into *v; 0, or 2 after a message. */
static int parse_uint(const char *name, const char *s, long lo, long hi, long *v)
{
    char *end;
    errno = 0;
    long x = s ? strtol(s, &end, 10) : 0;
    if (!s || errno || *end || end == s || x < lo || x > hi) {
        fprintf(stderr, "trivial-http: %s '%s' must be an integer from %ld to %ld\n", name,
                s ? s : "", lo, hi);
        return 2;
    }
    *v = x;
    return 0;
}

/* "HOST:PORT" (IPv4) into *sa; 0, or 2 after a message. */
static int parse_listen(const char *s, struct sockaddr_in *sa)
{
    const char *colon = strrchr(s, ':');
    char host[64];
    long port = -1;
    size_t n = colon ? (size_t)(colon - s) : 0;
    memset(sa, 0, sizeof *sa);
    sa->sin_family = AF_INET;
    if (colon && n < sizeof host) {
        memcpy(host, s, n);
        host[n] = '\0';
        char *end;
        errno = 0;
        port = strtol(colon + 1, &end, 10);
        if (errno || *end || end == colon + 1 || port > 65535)
            port = -1;
        if (inet_pton(AF_INET, n ? host : "127.0.0.1", &sa->sin_addr) != 1)
            port = -1;
    }
    if (port < 0) {
        fprintf(stderr, "trivial-http: --listen '%s': expected IPV4:PORT, e.g. 127.0.0.1:0 "
                        "(port 0: any free port)\n", s);
        return 2;
    }
    sa->sin_port = htons((unsigned short)port);
    return 0;
}

int main(int argc, char **argv)
{
    const char *listen_at = "127.0.0.1:0";
    long threads = 1, delay = 0;
    int per_connection = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int rc = 0;
        if (!strcmp(a, "--listen") && v)
            listen_at = argv[++i];
        else if (!strcmp(a, "--threads"))
            rc = parse_uint(a, v, 1, 256, &threads), i++;
        else if (!strcmp(a, "--delay-us"))
            rc = parse_uint(a, v, 0, 10000000, &delay), i++;
        else if (!strcmp(a, "--per-connection"))
            per_connection = 1;
        else {
            fprintf(stderr, "trivial-http: unknown option '%s' (see the header of "
                            "bench/trivial_http.c)\n", a);
            return 2;
        }
        if (rc)
            return rc;
    }
    struct sockaddr_in sa;
    if (parse_listen(listen_at, &sa))
        return 2;
    delay_us = (unsigned)delay;
    if (delay_us)
        per_connection = 1;

    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd >= 0)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 1024) < 0) {
        fprintf(stderr, "trivial-http: cannot listen on %s: %s\n", listen_at, strerror(errno));
        return 1;
    }
    socklen_t len = sizeof sa;
    getsockname(fd, (struct sockaddr *)&sa, &len);

    static char body[] = "ok";
    ok_response = MHD_create_response_from_buffer(2, body, MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(ok_response, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain");
    /* SIGTERM and SIGINT blocked before libmicrohttpd's threads start (they inherit the mask),
     * so that only sigwait below takes them. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    unsigned flags = per_connection ? MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD
                                          | MHD_USE_POLL
                                    : MHD_USE_EPOLL_INTERNAL_THREAD;
    struct MHD_OptionItem opts[] = {
        {MHD_OPTION_LISTEN_SOCKET, fd, NULL},
        {MHD_OPTION_CONNECTION_LIMIT, 4096, NULL},
        {MHD_OPTION_CONNECTION_TIMEOUT, 60, NULL},
        {per_connection || threads == 1 ? MHD_OPTION_END : MHD_OPTION_THREAD_POOL_SIZE, threads,
         NULL},
        {MHD_OPTION_END, 0, NULL},
    };
    struct MHD_Daemon *d = MHD_start_daemon(flags, 0, NULL, NULL, handle, NULL, MHD_OPTION_ARRAY,
                                            opts, MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "trivial-http: libmicrohttpd did not start\n");
        return 1;
    }
    char host[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &sa.sin_addr, host, sizeof host);
    printf("listening on http://%s:%u\n", host, (unsigned)ntohs(sa.sin_port));
    fflush(stdout);

    int sig;
    sigwait(&set, &sig);
    MHD_stop_daemon(d);
    MHD_destroy_response(ok_response);
    return 0;
}
