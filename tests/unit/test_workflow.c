/* Unit tests of workflow.c: the forms of a workflow file, stage commands split into words,
 * parameters and their overrides, cwd resolution, and every error with its line and column. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "measure/workflow.h"
#include "util/xalloc.h"

static char dir[PATH_MAX];  /* private directory of this test run (realpath) */
static char path[PATH_MAX + 16]; /* dir/wf.yaml */
static char err[1024];

static int setup(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/mlbench-test-workflow-XXXXXX";
    if (!mkdtemp(tmpl) || !realpath(tmpl, dir))
        return -1;
    snprintf(path, sizeof path, "%s/wf.yaml", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char sub[PATH_MAX + 8];
    unlink(path);
    snprintf(sub, sizeof sub, "%s/wf.yml", dir);
    unlink(sub);
    snprintf(sub, sizeof sub, "%s/sub", dir);
    rmdir(sub);
    return rmdir(dir);
}

/* Writes text to wf.yaml and loads it. */
static struct workflow *load(const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    err[0] = '\0';
    return workflow_load(path, err, sizeof err);
}

/* Loads text, which must fail with "wf.yaml:<where>: <message>" (where is "LINE:COLUMN"). */
static void expect_error(const char *text, const char *where, const char *message)
{
    struct workflow *wf = load(text);
    char want[PATH_MAX + 1200];
    snprintf(want, sizeof want, "%s:%s: %s", path, where, message);
    if (wf || strcmp(err, want) != 0)
        fail_msg("for:\n%s\nwant: %s\ngot:  %s", text, want, wf ? "(loaded)" : err);
}

static void assert_argv(const struct workflow *wf, size_t i, const char *const *want)
{
    char **argv = workflow_stage_argv(wf, i, err, sizeof err);
    if (!argv)
        fail_msg("stage %zu: %s", i, err);
    size_t n = 0;
    for (; want[n]; n++) {
        assert_non_null(argv[n]);
        assert_string_equal(argv[n], want[n]);
    }
    assert_null(argv[n]);
    workflow_argv_free(argv);
}

#define ARGV(...) ((const char *const[]){__VA_ARGS__, NULL})

static void test_forms(void **state)
{
    (void)state;
    struct workflow *wf = load("# an image-classification pipeline\n"
                               "stages:\n"
                               "  load: python3 load.py --out 'data dir'\n"
                               "  preprocess: [python3, prep.py, \"$HOME\", '*']\n"
                               "  train:\n"
                               "    cmd: >\n"
                               "      python3 train.py\n"
                               "      --epochs 3\n"
                               "    cwd: sub\n"
                               "    env:\n"
                               "      OMP_NUM_THREADS: 4\n"
                               "      EMPTY: ''\n"
                               "  evaluate:\n"
                               "    cmd: echo a | tee log\n"
                               "    shell: true\n"
                               "    cwd: /var\n");
    assert_non_null(wf);
    assert_string_equal(wf->path, path);
    assert_string_equal(wf->dir, dir);
    assert_int_equal(wf->n_stages, 4);
    assert_int_equal(wf->n_params, 0);
    const char *names[] = {"load", "preprocess", "train", "evaluate"};
    const unsigned long lines[] = {3, 4, 5, 13};
    for (size_t i = 0; i < 4; i++) {
        assert_string_equal(wf->stages[i].name, names[i]);
        assert_int_equal(wf->stages[i].line, lines[i]);
    }
    assert_argv(wf, 0, ARGV("python3", "load.py", "--out", "data dir"));
    assert_argv(wf, 1, ARGV("python3", "prep.py", "$HOME", "*")); /* a list is literal */
    assert_argv(wf, 2, ARGV("python3", "train.py", "--epochs", "3"));
    assert_argv(wf, 3, ARGV("/bin/sh", "-c", "echo a | tee log"));
    assert_false(wf->stages[0].shell);
    assert_true(wf->stages[3].shell);

    /* cwd: the file's directory by default; relative ones from it; absolute ones as given */
    char want[PATH_MAX + 8];
    assert_string_equal(wf->stages[0].cwd, dir);
    snprintf(want, sizeof want, "%s/sub", dir);
    assert_string_equal(wf->stages[2].cwd, want);
    assert_string_equal(wf->stages[3].cwd, "/var");

    assert_int_equal(wf->stages[2].n_env, 2);
    assert_string_equal(wf->stages[2].env[0], "OMP_NUM_THREADS=4");
    assert_string_equal(wf->stages[2].env[1], "EMPTY=");
    assert_null(wf->stages[2].env[2]);
    assert_int_equal(wf->stages[0].n_env, 0);
    assert_null(wf->stages[0].env[0]);
    workflow_free(wf);

    /* anchors and aliases are resolved; "." is the file's directory */
    wf = load("stages:\n"
              "  a: {cmd: true, env: &e {A: '1'}, cwd: .}\n"
              "  b: {cmd: 'true', env: *e}\n");
    assert_non_null(wf);
    assert_string_equal(wf->stages[1].env[0], "A=1");
    assert_string_equal(wf->stages[0].cwd, dir);
    workflow_free(wf);
}

static void test_words(void **state)
{
    (void)state;
    setenv("MLBENCH_TEST_WORD", "from env", 1);
    struct workflow *wf = load("stages:\n"
                               "  a: printf '%s\\n' \"$MLBENCH_TEST_WORD\" $MLBENCH_TEST_WORD x\\ y\n"
                               "  b: ./run.sh \"a 'b'\" ''\n");
    assert_non_null(wf);
    /* variables come from the environment when the words are made (workflow-exec applies the
     * stage's env first) */
    assert_argv(wf, 0, ARGV("printf", "%s\\n", "from env", "from", "env", "x y"));
    assert_argv(wf, 1, ARGV("./run.sh", "a 'b'", ""));
    setenv("MLBENCH_TEST_WORD", "changed", 1);
    assert_argv(wf, 0, ARGV("printf", "%s\\n", "changed", "changed", "x y"));
    unsetenv("MLBENCH_TEST_WORD");
    workflow_free(wf);

    /* a command that is only an unset variable has no words at the stage */
    wf = load("stages:\n  a: $MLBENCH_TEST_UNSET_VARIABLE\n");
    assert_non_null(wf);
    assert_null(workflow_stage_argv(wf, 0, err, sizeof err));
    assert_string_equal(err, "'cmd' of stage 'a' has no words once its variables are expanded");
    workflow_free(wf);
}

static void test_params(void **state)
{
    (void)state;
    struct workflow *wf = load("params:\n"
                               "  epochs: 3\n"
                               "  msg: hello world; *\n"
                               "  out: sub\n"
                               "  lr: '0.1'\n"
                               "stages:\n"
                               "  train:\n"
                               "    cmd: train --epochs=${params.epochs} --lr ${params.lr} ${params.msg}\n"
                               "    cwd: ${params.out}\n"
                               "    env: {MSG: '${params.msg}!', EPOCHS: '${params.epochs}${params.epochs}'}\n"
                               "  list: [echo, '${params.msg}', 'x${params.lr}y']\n"
                               "  sh:\n"
                               "    cmd: echo ${params.msg}\n"
                               "    shell: true\n");
    assert_non_null(wf);
    assert_int_equal(wf->n_params, 4);
    assert_string_equal(wf->params[0].name, "epochs");
    assert_string_equal(wf->params[0].value, "3");
    assert_string_equal(wf->params[1].value, "hello world; *");
    /* a value is never split, globbed nor parsed: it goes into the word it is in */
    assert_argv(wf, 0, ARGV("train", "--epochs=3", "--lr", "0.1", "hello world; *"));
    assert_argv(wf, 1, ARGV("echo", "hello world; *", "x0.1y"));
    /* with shell: true the shell sees the value as it is */
    assert_argv(wf, 2, ARGV("/bin/sh", "-c", "echo hello world; *"));
    char want[PATH_MAX + 16];
    snprintf(want, sizeof want, "%s/sub", dir);
    assert_string_equal(wf->stages[0].cwd, want);
    assert_string_equal(wf->stages[0].env[0], "MSG=hello world; *!");
    assert_string_equal(wf->stages[0].env[1], "EPOCHS=33");

    /* overrides: everything is substituted again */
    assert_int_equal(workflow_set_param(wf, "epochs=10", err, sizeof err), 0);
    assert_int_equal(workflow_set_param(wf, "out=/abs", err, sizeof err), 0);
    assert_int_equal(workflow_set_param(wf, "msg=", err, sizeof err), 0);
    assert_int_equal(workflow_set_param(wf, "lr=a=b", err, sizeof err), 0);
    assert_argv(wf, 0, ARGV("train", "--epochs=10", "--lr", "a=b", ""));
    assert_argv(wf, 1, ARGV("echo", "", "xa=by"));
    assert_string_equal(wf->stages[0].cwd, "/abs");
    assert_string_equal(wf->stages[0].env[0], "MSG=!");
    assert_string_equal(wf->stages[0].env[1], "EPOCHS=1010");
    assert_string_equal(wf->params[0].value, "10");

    /* bad overrides leave the workflow as it was */
    assert_int_equal(workflow_set_param(wf, "nope=1", err, sizeof err), -1);
    char msg[PATH_MAX + 200];
    snprintf(msg, sizeof msg, "--param 'nope=1': %s has no parameter 'nope' (its parameters: "
             "epochs, msg, out, lr)", path);
    assert_string_equal(err, msg);
    assert_int_equal(workflow_set_param(wf, "epochs", err, sizeof err), -1);
    assert_string_equal(err, "--param 'epochs' is not NAME=VALUE");
    assert_int_equal(workflow_set_param(wf, "=1", err, sizeof err), -1);
    assert_string_equal(err, "--param '=1' is not NAME=VALUE");
    assert_string_equal(wf->params[0].value, "10");
    workflow_free(wf);

    wf = load("stages:\n  a: 'true'\n");
    assert_non_null(wf);
    assert_int_equal(workflow_set_param(wf, "x=1", err, sizeof err), -1);
    snprintf(msg, sizeof msg, "--param 'x=1': %s declares no parameters (add a 'params:' mapping "
             "with a default for 'x')", path);
    assert_string_equal(err, msg);
    workflow_free(wf);
}

static void test_syntax_errors(void **state)
{
    (void)state;
    expect_error("stages:\n  a: x\n b: y\n", "3:2",
                 "did not find expected key (while parsing a block mapping at line 1, column 1)");
    expect_error("stages:\n  a: [x\n", "3:1",
                 "did not find expected ',' or ']' (while parsing a flow sequence at line 2, "
                 "column 6)");
    expect_error("stages:\n\ta: x\n", "2:1",
                 "found character that cannot start any token (while scanning for the next token "
                 "at line 2, column 1)");
    expect_error("stages:\n  a: *nowhere\n", "2:6", "found undefined alias");
    expect_error("stages:\n  a: \"\xff\"\n", "2:7",
                 "invalid leading UTF-8 octet (the file must be UTF-8 text)");
    expect_error("", "1:1", "the file is empty: a workflow needs 'stages:' (see docs/workflow.md)");
    expect_error("# only a comment\n", "1:1",
                 "the file is empty: a workflow needs 'stages:' (see docs/workflow.md)");
    expect_error("stages:\n  a: x\n---\nstages:\n  b: y\n", "3:1",
                 "a second YAML document: a workflow file holds one");
}

static void test_structure_errors(void **state)
{
    (void)state;
    expect_error("- a\n", "1:1", "a workflow is a mapping with 'stages:' (and optional "
                 "'params:'), found a list (see docs/workflow.md)");
    expect_error("params: {a: 1}\n", "1:1", "no 'stages:': a workflow needs at least one stage "
                 "(see docs/workflow.md)");
    expect_error("stages:\n  a: x\nstage:\n  b: y\n", "3:1",
                 "unknown key 'stage' (expected: params, stages)");
    expect_error("stages:\n  a: x\nstages:\n  b: y\n", "3:1", "duplicate key 'stages' at the top (first at line 1)");
    expect_error("stages:\n", "1:8", "'stages' is empty: give at least one stage (name: command)");
    expect_error("stages: {}\n", "1:9", "'stages' is empty: give at least one stage (name: command)");
    expect_error("stages:\n  - a: x\n", "2:3", "'stages' must be a mapping of stage name to stage "
                 "(name: command, or name: {cmd: ...}), found a list");
    expect_error("stages: x\n", "1:9", "'stages' must be a mapping of stage name to stage "
                 "(name: command, or name: {cmd: ...}), found a string");
    expect_error("stages:\n  train: x\n  load: y\n  train: z\n", "4:3",
                 "duplicate stage 'train' in 'stages' (first at line 2)");
    expect_error("stages:\n  ? [a]\n  : x\n", "2:5", "a key in 'stages' is a list: keys are names");
    expect_error("stages:\n  'a b': x\n", "2:3", "stage name 'a b' holds white space or a control "
                 "character (it is a marker name: use '-' or '_')");
    expect_error("stages:\n  '': x\n", "2:3", "a stage name is empty: give each stage a name");
    char big[600];
    snprintf(big, sizeof big, "stages:\n  %0300d: x\n", 0);
    expect_error(big, "2:3", "stage name '00000000000000000000000000000000...' is longer than 256 "
                 "bytes");
}

static void test_stage_errors(void **state)
{
    (void)state;
    expect_error("stages:\n  load: x\n  train:\n    comand: python3 train.py\n", "4:5",
                 "unknown key 'comand' in stage 'train' (expected: cmd, cwd, env, shell)");
    expect_error("stages:\n  train:\n    cwd: sub\n", "3:5",
                 "stage 'train' has no 'cmd': give the command to run");
    expect_error("stages:\n  train:\n", "2:9", "stage 'train' has no command: give 'cmd'");
    expect_error("stages:\n  train: {cmd: x, cmd: y}\n", "2:19",
                 "duplicate key 'cmd' in stage 'train' (first at line 2)");
    expect_error("stages:\n  train:\n    cmd:\n", "3:9",
                 "'cmd' of stage 'train' is empty: give the command to run");
    expect_error("stages:\n  train:\n    cmd: '  '\n", "3:10",
                 "'cmd' of stage 'train' is empty: give the command to run");
    expect_error("stages:\n  train: []\n", "2:10",
                 "'cmd' of stage 'train' is an empty list: give the command and its arguments");
    expect_error("stages:\n  train: {cmd: {a: b}}\n", "2:16",
                 "'cmd' of stage 'train' must be a string or a list of words, found a mapping");
    expect_error("stages:\n  train: [python3, [a]]\n", "2:20",
                 "word 2 of 'cmd' of stage 'train' must be a string, found a list");
    expect_error("stages:\n  train: [python3, ~]\n", "2:20",
                 "word 2 of 'cmd' of stage 'train' must be a string, found nothing");
    expect_error("stages:\n  train: ['', a]\n", "2:11",
                 "word 1 of 'cmd' of stage 'train' is empty: it is the program to run");
    expect_error("stages:\n  train: python3 train.py | tee log\n", "2:10",
                 "'cmd' of stage 'train' holds a shell operator (| & ; < > ( ) { }): set 'shell: "
                 "true' to run it through /bin/sh, or give cmd as a list of words");
    expect_error("stages:\n  train: python3 $(which train.py)\n", "2:10",
                 "'cmd' of stage 'train' uses command substitution: set 'shell: true' to run it "
                 "through /bin/sh");
    /* glibc's wordexp crashes on ${UNSET?} (fuzz_workflow): refused before it */
    expect_error("stages:\n  train: echo ${NOSUCH_VAR_X?}\n", "2:10",
                 "'cmd' of stage 'train' uses ${VAR?} or ${VAR:?} (fail when unset), which only a "
                 "shell does: set 'shell: true' to run it through /bin/sh, or use ${VAR:-default}");
    expect_error("stages:\n  train: echo \"${X:?}\"\n", "2:10",
                 "'cmd' of stage 'train' uses ${VAR?} or ${VAR:?} (fail when unset), which only a "
                 "shell does: set 'shell: true' to run it through /bin/sh, or use ${VAR:-default}");
    /* ... also where a quote inside another expansion's word hid it from a quote-aware scan */
    expect_error("stages:\n  train: x ${p-'a ${NOSUCH_VAR_X?}\n", "2:10",
                 "'cmd' of stage 'train' uses ${VAR?} or ${VAR:?} (fail when unset), which only a "
                 "shell does: set 'shell: true' to run it through /bin/sh, or use ${VAR:-default}");
    expect_error("stages:\n  train: python3 'train.py\n", "2:10",
                 "'cmd' of stage 'train' has a syntax error (unbalanced quotes?)");
    expect_error("stages:\n  train:\n    cmd: |\n      a\n      b\n", "3:10",
                 "'cmd' of stage 'train' holds a line break: a stage runs one command (set "
                 "'shell: true' to run a script, or write it on one line; '>' folds lines)");
    expect_error("stages:\n  train: \"a\\x01b\"\n", "2:10",
                 "'cmd' of stage 'train' holds a control character (0x01)");
    expect_error("stages:\n  train: \"a\\0b\"\n", "2:10",
                 "'cmd' of stage 'train' holds a NUL character");
    expect_error("stages:\n  train: {cmd: [a], shell: true}\n", "2:16",
                 "'cmd' of stage 'train' must be one string with 'shell: true'");
    expect_error("stages:\n  train: {cmd: a, shell: yes}\n", "2:26",
                 "'shell' of stage 'train' must be true or false, not 'yes'");
    expect_error("stages:\n  train: {cmd: a, shell: [true]}\n", "2:26",
                 "'shell' of stage 'train' must be true or false, found a list");
    expect_error("stages:\n  train: {cmd: a, cwd: [x]}\n", "2:24",
                 "'cwd' of stage 'train' must be a string, found a list");
    expect_error("stages:\n  train: {cmd: a, cwd: ''}\n", "2:24",
                 "'cwd' of stage 'train' is empty: give a directory, or leave it out to run in "
                 "the workflow file's directory");
    expect_error("stages:\n  train: {cmd: a, env: [A=1]}\n", "2:24",
                 "'env' of stage 'train' must be a mapping of NAME: value, found a list");
    expect_error("stages:\n  train:\n    cmd: a\n    env:\n      A: 1\n      A: 2\n", "6:7",
                 "duplicate variable 'A' in 'env' of stage 'train' (first at line 5)");
    expect_error("stages:\n  train:\n    cmd: a\n    env:\n      A=B: 1\n", "5:7",
                 "variable name 'A=B' in 'env' of stage 'train' holds '='");
    expect_error("stages:\n  train:\n    cmd: a\n    env:\n      A:\n", "5:9",
                 "variable 'A' in 'env' of stage 'train' has no value (write '' for an empty one)");
    expect_error("stages:\n  train:\n    cmd: a\n    env:\n      A: {b: c}\n", "5:10",
                 "variable 'A' in 'env' of stage 'train' must be a string, found a mapping");
    expect_error("stages:\n  train:\n    cmd: a\n    env:\n      MLBENCH_MARKER_SOCKET: x\n", "5:7",
                 "MLBENCH_MARKER_SOCKET is set by mlbench: remove it from 'env' of stage 'train'");
}

static void test_param_errors(void **state)
{
    (void)state;
    expect_error("params: [a]\nstages:\n  a: x\n", "1:9",
                 "'params' must be a mapping of NAME: value, found a list");
    expect_error("params:\n  lr:\nstages:\n  a: x\n", "2:6",
                 "parameter 'lr' has no value: give it a default (--param lr=VALUE overrides it)");
    expect_error("params:\n  lr: [1]\nstages:\n  a: x\n", "2:7",
                 "parameter 'lr' must be a string or a number, found a list");
    expect_error("params:\n  1lr: 1\nstages:\n  a: x\n", "2:3",
                 "parameter name '1lr' is not valid: use letters, digits, '_' and '-', starting "
                 "with a letter or '_'");
    expect_error("params:\n  lr: 1\n  lr: 2\nstages:\n  a: x\n", "3:3",
                 "duplicate parameter 'lr' in 'params' (first at line 2)");
    /* unknown references are placed at the reference itself, in every kind of value */
    expect_error("params:\n  lr: 1\n  epochs: 2\nstages:\n"
                 "  train: python3 train.py --lr ${params.lr} --epochs ${params.epoch}\n",
                 "5:54", "unknown parameter 'epoch' (parameters: lr, epochs)");
    expect_error("stages:\n  train: [a, 'x ${params.lr}']\n", "2:17",
                 "unknown parameter 'lr': the file declares no 'params:'");
    expect_error("params: {a: 1}\nstages:\n  train:\n    cmd: a\n    cwd: \"d/${params.dir}\"\n",
                 "5:13", "unknown parameter 'dir' (parameters: a)");
    expect_error("params: {a: 1}\nstages:\n  train:\n    cmd: a\n    env:\n      X: >\n"
                 "        one\n        two ${params.b}\n", "8:13",
                 "unknown parameter 'b' (parameters: a)");
    expect_error("params: {a: 1}\nstages:\n  train: echo ${params.a\n", "3:15",
                 "malformed parameter reference: write ${params.NAME}");
    expect_error("params: {a: 1}\nstages:\n  train: echo ${params.}\n", "3:15",
                 "malformed parameter reference: write ${params.NAME}");
    /* ${OTHER} is left to the word split (a variable); only ${params.*} is a parameter */
    struct workflow *wf = load("params: {a: 1}\nstages:\n  train: echo ${MLBENCH_TEST_UNSET}x\n");
    assert_non_null(wf);
    assert_argv(wf, 0, ARGV("echo", "x"));
    workflow_free(wf);
}

static void test_file_errors(void **state)
{
    (void)state;
    char missing[PATH_MAX + 16];
    snprintf(missing, sizeof missing, "%s/missing.yaml", dir);
    assert_null(workflow_load(missing, err, sizeof err));
    char want[PATH_MAX + 100];
    snprintf(want, sizeof want, "cannot read workflow '%s': No such file or directory", missing);
    assert_string_equal(err, want);
    assert_null(workflow_load(dir, err, sizeof err));
    snprintf(want, sizeof want, "cannot read workflow '%s': Is a directory", dir);
    assert_string_equal(err, want);
}

static void test_is_file(void **state)
{
    (void)state;
    struct workflow *wf = load("stages:\n  a: x\n");
    workflow_free(wf);
    assert_true(workflow_is_file(path));
    char other[PATH_MAX + 16];
    snprintf(other, sizeof other, "%s/wf.yml", dir);
    FILE *f = fopen(other, "w");
    assert_non_null(f);
    fclose(f);
    assert_true(workflow_is_file(other));
    snprintf(other, sizeof other, "%s/none.yaml", dir);
    assert_false(workflow_is_file(other));
    assert_false(workflow_is_file(".yaml"));
    snprintf(other, sizeof other, "%s/sub", dir);
    mkdir(other, 0700);
    assert_false(workflow_is_file(other));
    assert_false(workflow_is_file("/etc/passwd"));
    workflow_free(NULL);
    workflow_argv_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forms),
        cmocka_unit_test(test_words),
        cmocka_unit_test(test_params),
        cmocka_unit_test(test_syntax_errors),
        cmocka_unit_test(test_structure_errors),
        cmocka_unit_test(test_stage_errors),
        cmocka_unit_test(test_param_errors),
        cmocka_unit_test(test_file_errors),
        cmocka_unit_test(test_is_file),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
