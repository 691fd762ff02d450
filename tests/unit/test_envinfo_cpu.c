/* Unit tests of MLBENCH_CPU_DISABLE in the environment capture (src/result/envinfo/cpu.c,
 * print.c): the parsing of its value, the features it removes from the cpu object (listed in
 * features_disabled), envinfo_cpuinfo_has on fixed texts and envinfo_cpu_has on this machine,
 * and the precision line of `mlbench env`. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "result/envinfo.h"

/* One x86 CPU; "avx512fx" is a word that must not count as avx512f. */
static const char cpuinfo[] =
    "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Test CPU\n"
    "flags\t\t: fpu sse4_2 avx avx2 fma avx512fx avx512bw amx_bf16 amx_tile hypervisor\n\n";

/* The strings of array joined by spaces into buf ("" for none or not an array). */
static const char *joined(const json_t *array, char *buf, size_t len)
{
    size_t used = 0, i;
    const json_t *v;
    buf[0] = '\0';
    json_array_foreach(array, i, v)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? " " : "",
                                 json_string_value(v) ? json_string_value(v) : "?");
    return buf;
}

/* What envinfo_print writes of env, owned by the caller. */
static char *printed(const json_t *env)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    envinfo_print(out, env);
    assert_int_equal(fclose(out), 0);
    return text;
}

static void test_disable_list(void **state)
{
    (void)state;
    assert_true(envinfo_cpu_disabled("avx512_bf16", "avx512_bf16"));
    assert_true(envinfo_cpu_disabled("avx512f,avx512_bf16", "avx512f"));
    assert_true(envinfo_cpu_disabled("avx512f,avx512_bf16", "avx512_bf16"));
    assert_true(envinfo_cpu_disabled(" amx_bf16 ,\tavx2,", "avx2"));
    assert_false(envinfo_cpu_disabled("avx512", "avx512f")); /* whole names only */
    assert_false(envinfo_cpu_disabled("avx512f", "avx512"));
    assert_false(envinfo_cpu_disabled("avx512_bf16;avx2", "avx2")); /* ';' separates nothing */
    assert_false(envinfo_cpu_disabled(NULL, "avx2"));
    assert_false(envinfo_cpu_disabled("", "avx2"));
    assert_false(envinfo_cpu_disabled(", ,", ""));
}

static void test_features_disabled(void **state)
{
    (void)state;
    char buf[512];
    json_t *o = envinfo_parse_cpuinfo(cpuinfo, "amx_bf16, avx2 avx512_bf16");
    assert_string_equal(joined(json_object_get(o, "features"), buf, sizeof buf),
                        "sse4_2 avx fma avx512bw amx_tile");
    /* in the table's order; avx512_bf16 is named but absent, so nothing removed it */
    assert_string_equal(joined(json_object_get(o, "features_disabled"), buf, sizeof buf),
                        "avx2 amx_bf16");
    json_decref(o);

    o = envinfo_parse_cpuinfo(cpuinfo, "sse2 neon");
    assert_null(json_object_get(o, "features_disabled")); /* removed nothing: left out */
    assert_string_equal(joined(json_object_get(o, "features"), buf, sizeof buf),
                        "sse4_2 avx avx2 fma avx512bw amx_tile amx_bf16");
    json_decref(o);

    /* every feature disabled: an empty features list, not a missing one */
    o = envinfo_parse_cpuinfo("processor : 0\nFeatures : fp asimd bf16\n", "asimd,bf16");
    assert_true(json_is_array(json_object_get(o, "features")));
    assert_int_equal(json_array_size(json_object_get(o, "features")), 0);
    assert_string_equal(joined(json_object_get(o, "features_disabled"), buf, sizeof buf),
                        "asimd bf16");
    json_decref(o);
}

static void test_cpuinfo_has(void **state)
{
    (void)state;
    assert_true(envinfo_cpuinfo_has(cpuinfo, NULL, "amx_bf16"));
    assert_true(envinfo_cpuinfo_has(cpuinfo, "avx2", "amx_bf16"));
    assert_false(envinfo_cpuinfo_has(cpuinfo, "avx2,amx_bf16", "amx_bf16"));
    assert_true(envinfo_cpuinfo_has(cpuinfo, NULL, "hypervisor")); /* any word of the line */
    assert_true(envinfo_cpuinfo_has(cpuinfo, NULL, "fpu"));         /* the first word */
    assert_false(envinfo_cpuinfo_has(cpuinfo, NULL, "avx512f"));    /* "avx512fx" is another */
    assert_false(envinfo_cpuinfo_has(cpuinfo, NULL, ""));
    assert_false(envinfo_cpuinfo_has(cpuinfo, NULL, "avx amx_tile"));
    assert_false(envinfo_cpuinfo_has("processor : 0\n", NULL, "avx"));
    assert_true(envinfo_cpuinfo_has("processor : 0\nFeatures\t: fp asimd bf16\n", NULL, "bf16"));
}

/* This machine: the first word of its flags line is there until the override names it. */
static void test_cpu_has_machine(void **state)
{
    (void)state;
    FILE *in = fopen("/proc/cpuinfo", "r");
    char line[16384], word[64] = "";
    while (in && fgets(line, sizeof line, in))
        if ((!strncmp(line, "flags", 5) || !strncmp(line, "Features", 8)) && strchr(line, ':')) {
            if (sscanf(strchr(line, ':') + 1, "%63s", word) != 1)
                word[0] = '\0';
            break;
        }
    if (in)
        fclose(in);
    const char *saved = getenv("MLBENCH_CPU_DISABLE");
    char *keep = saved ? strdup(saved) : NULL;
    assert_int_equal(unsetenv("MLBENCH_CPU_DISABLE"), 0);
    if (word[0]) {
        assert_true(envinfo_cpu_has(word));
        assert_int_equal(setenv("MLBENCH_CPU_DISABLE", word, 1), 0);
        assert_false(envinfo_cpu_has(word));
    } else {
        assert_false(envinfo_cpu_has("avx2")); /* no flags line: nothing is there */
    }
    assert_false(envinfo_cpu_has("no_such_feature"));
    if (keep)
        assert_int_equal(setenv("MLBENCH_CPU_DISABLE", keep, 1), 0);
    else
        assert_int_equal(unsetenv("MLBENCH_CPU_DISABLE"), 0);
    free(keep);
}

static void test_precision_line(void **state)
{
    (void)state;
    json_t *env = json_pack("{s:{s:[s,s,s,s], s:[s]}}", "cpu", "features", "avx2",
                            "avx512_vnni", "avx_vnni", "amx_tile", "features_disabled",
                            "avx512_bf16");
    char *text = printed(env);
    assert_non_null(strstr(text, "\n  precision  bf16: avx512_bf16 (disabled by "
                                 "MLBENCH_CPU_DISABLE); fp16: none; int8: avx512_vnni "
                                 "avx_vnni; amx: amx_tile\n"));
    free(text);
    json_decref(env);

    env = json_pack("{s:{s:[s,s]}}", "cpu", "features", "avx512_bf16", "asimdhp");
    text = printed(env);
    assert_non_null(strstr(text, "\n  precision  bf16: avx512_bf16 (CPU training with "
                                 "--precision bf16); fp16: asimdhp; int8: none; amx: none\n"));
    free(text);
    json_decref(env);

    /* an old result without features: no precision line, not a line of "none" */
    env = json_pack("{s:{s:s}}", "cpu", "model", "Old CPU");
    text = printed(env);
    assert_null(strstr(text, "precision"));
    free(text);
    json_decref(env);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_disable_list),
        cmocka_unit_test(test_features_disabled),
        cmocka_unit_test(test_cpuinfo_has),
        cmocka_unit_test(test_cpu_has_machine),
        cmocka_unit_test(test_precision_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
