/* nvtx_prog: a program annotated with NVTX only (the CUDA toolkit's header-only NVTX v3 API,
 * no mlbench code) that makes every kind of NVTX call libmlbench_nvtx.so handles, from two
 * threads. tests/integration/test_nvtx.py runs it under `mlbench run --nvtx` and checks the
 * stages, spans and instants that come out.
 *
 * Main thread (its tid is the pid); stage names as the injection library writes them, and
 * depths on the thread:
 *   outer                         push A, depth 0
 *     inner_step                  push A (space -> '_'), depth 1, 20 ms
 *     wide_grüße                  push W, depth 1
 *       ex_ascii                  push Ex ASCII, depth 2, 10 ms
 *     ex_ünicode_Ω                push Ex UNICODE, depth 1, 10 ms
 *     my_category                 push Ex without message, category 7 named "my category"
 *     nvtx                        push Ex without message nor category
 *     ctl_name_x                  push A "ctl\tname\nx"
 *     bad?utf8                    push A with a byte that is not UTF-8
 *     LLL...                      push A of 5000 'L': cut to fit one datagram
 *     my_domain:dstep             domain push Ex, depth 1 (level 0 in its domain), 10 ms
 *       my_domain:registered_name domain push Ex of a registered string, depth 2
 *       my_domain:dmark           domain mark Ex (instant)
 *     (fork)                      the child pops the inherited "outer" (sends nothing) and
 *                                 makes `child`, depth 0 on its own thread
 *   mark_a, mark_wé, mark_ex      marks A, W, Ex (instants)
 *   handoff                       start A on main, ended by the worker thread >= 40 ms later:
 *                                 a span on the main thread
 *   start_wide, start_ex          start W / start Ex ended on the same thread, 5 ms each
 * Worker thread:
 *   worker                        push A, depth 0
 *     worker_inner                push Ex ASCII, depth 1, 10 ms
 *     my_domain:wstep             domain push Ex, depth 1
 *   my_domain:drange              domain start Ex / end on the same thread, 5 ms
 *   then waits 40 ms and ends `handoff`.
 *
 * With --check it also verifies the levels NVTX returns (push: 0-based level of the new
 * range in its domain; pop: level of the range ended; pop of an empty stack: negative) and
 * exits 1 naming the first wrong one. Without an injection library NVTX returns no levels, so
 * --check is only meaningful under `mlbench run --nvtx`.
 * Usage: nvtx_prog [--check]
 */
#define _POSIX_C_SOURCE 200809L
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MY_CATEGORY 7
#define LONG_NAME_BYTES 5000

static int g_check;
static int g_failures;
static nvtxDomainHandle_t g_domain;

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* Records a wrong level (with --check). */
static void expect(const char *what, int got, int want)
{
    if (g_check && got != want) {
        fprintf(stderr, "nvtx_prog: %s returned %d, expected %d\n", what, got, want);
        g_failures++;
    }
}

static nvtxEventAttributes_t ascii_attr(const char *message)
{
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = message;
    return a;
}

static nvtxEventAttributes_t unicode_attr(const wchar_t *message)
{
    nvtxEventAttributes_t a = ascii_attr(NULL);
    a.messageType = NVTX_MESSAGE_TYPE_UNICODE;
    a.message.unicode = message;
    return a;
}

static void *worker(void *arg)
{
    nvtxRangeId_t handoff = *(const nvtxRangeId_t *)arg;

    expect("worker push", nvtxRangePushA("worker"), 0);
    nvtxEventAttributes_t a = ascii_attr("worker inner");
    expect("worker push Ex", nvtxRangePushEx(&a), 1);
    sleep_ms(10);
    expect("worker pop", nvtxRangePop(), 1);
    a = ascii_attr("wstep");
    expect("worker domain push", nvtxDomainRangePushEx(g_domain, &a), 0);
    expect("worker domain pop", nvtxDomainRangePop(g_domain), 0);
    expect("worker pop", nvtxRangePop(), 0);

    a = ascii_attr("drange");
    nvtxRangeId_t drange = nvtxDomainRangeStartEx(g_domain, &a);
    sleep_ms(5);
    nvtxDomainRangeEnd(g_domain, drange);

    sleep_ms(40);
    nvtxRangeEnd(handoff);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 2 || (argc == 2 && strcmp(argv[1], "--check") != 0)) {
        fprintf(stderr, "usage: nvtx_prog [--check]\n");
        return 2;
    }
    g_check = argc == 2;

    nvtxNameCategoryA(MY_CATEGORY, "my category");
    g_domain = nvtxDomainCreateA("my domain");

    expect("push outer", nvtxRangePushA("outer"), 0);

    expect("push inner", nvtxRangePushA("inner step"), 1);
    sleep_ms(20);
    expect("pop inner", nvtxRangePop(), 1);

    expect("push W", nvtxRangePushW(L"wide grüße"), 1);
    nvtxEventAttributes_t a = ascii_attr("ex_ascii");
    expect("push Ex ascii", nvtxRangePushEx(&a), 2);
    sleep_ms(10);
    expect("pop Ex ascii", nvtxRangePop(), 2);
    expect("pop W", nvtxRangePop(), 1);

    a = unicode_attr(L"ex ünicode Ω");
    expect("push Ex unicode", nvtxRangePushEx(&a), 1);
    sleep_ms(10);
    expect("pop Ex unicode", nvtxRangePop(), 1);

    a = ascii_attr(NULL);
    a.messageType = NVTX_MESSAGE_UNKNOWN;
    a.category = MY_CATEGORY;
    expect("push category", nvtxRangePushEx(&a), 1);
    expect("pop category", nvtxRangePop(), 1);
    a.category = 0;
    expect("push no message", nvtxRangePushEx(&a), 1);
    expect("pop no message", nvtxRangePop(), 1);

    expect("push control", nvtxRangePushA("ctl\tname\nx"), 1);
    expect("pop control", nvtxRangePop(), 1);
    expect("push bad UTF-8", nvtxRangePushA("bad\xffutf8"), 1);
    expect("pop bad UTF-8", nvtxRangePop(), 1);
    static char long_name[LONG_NAME_BYTES + 1];
    memset(long_name, 'L', LONG_NAME_BYTES);
    expect("push long", nvtxRangePushA(long_name), 1);
    expect("pop long", nvtxRangePop(), 1);

    /* Domain ranges have a stack of their own: level 0 although "outer" is open. */
    a = ascii_attr("dstep");
    expect("domain push", nvtxDomainRangePushEx(g_domain, &a), 0);
    sleep_ms(10);
    nvtxStringHandle_t registered = nvtxDomainRegisterStringA(g_domain, "registered name");
    a = ascii_attr(NULL);
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = registered;
    expect("domain push registered", nvtxDomainRangePushEx(g_domain, &a), 1);
    a = ascii_attr("dmark");
    nvtxDomainMarkEx(g_domain, &a);
    expect("domain pop registered", nvtxDomainRangePop(g_domain), 1);
    expect("domain pop", nvtxDomainRangePop(g_domain), 0);

    /* A forked child inherits the open "outer": it may pop it (level 0), but sends nothing
     * for it, since that stage is the parent's. Its own range is a stage of its own. */
    fflush(NULL);
    pid_t child = fork();
    if (child == 0) {
        expect("child push", nvtxRangePushA("child"), 1);
        expect("child pop", nvtxRangePop(), 1);
        expect("child pop of inherited outer", nvtxRangePop(), 0);
        /* Alive a while after its last marker: mlbench accepts a grandchild's markers only
         * once it has verified the sender as a descendant, which needs it in /proc, and on a
         * loaded machine the receiver can lag by tens of milliseconds (docs/security.md, "a
         * sender gone before its datagram is checked"). This test is about NVTX across fork,
         * not that race. */
        sleep_ms(300);
        _exit(g_failures != 0);
    }
    int status = 1;
    if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0) {
        fprintf(stderr, "nvtx_prog: the forked child failed\n");
        g_failures++;
    }

    expect("pop outer", nvtxRangePop(), 0);

    nvtxMarkA("mark a");
    nvtxMarkW(L"mark wé");
    a = ascii_attr("mark_ex");
    nvtxMarkEx(&a);

    /* A range started here and ended by the worker thread. */
    nvtxRangeId_t handoff = nvtxRangeStartA("handoff");
    pthread_t thread;
    if (pthread_create(&thread, NULL, worker, &handoff) != 0) {
        fprintf(stderr, "nvtx_prog: cannot start a thread\n");
        return 1;
    }
    nvtxRangeId_t id = nvtxRangeStartW(L"start wide");
    sleep_ms(5);
    nvtxRangeEnd(id);
    a = ascii_attr("start_ex");
    id = nvtxRangeStartEx(&a);
    sleep_ms(5);
    nvtxRangeEnd(id);
    pthread_join(thread, NULL);

    /* Nothing is open any more: pops report an error, and send nothing. */
    if (g_check && nvtxRangePop() >= 0) {
        fprintf(stderr, "nvtx_prog: pop of an empty stack did not return a negative level\n");
        g_failures++;
    }
    if (g_check && nvtxDomainRangePop(g_domain) >= 0) {
        fprintf(stderr, "nvtx_prog: domain pop of an empty stack did not return a negative "
                        "level\n");
        g_failures++;
    }
    nvtxDomainDestroy(g_domain);
    return g_failures != 0;
}
