/* envinfo/vars.c: the `variables` array of the environment: the variables that change ML
 * performance (threading, GPUs, frameworks, allocators, the loader), never those that look
 * like secrets nor Terraform's TF_* ones. */
#include "result/envinfo/internal.h"

#include <stdlib.h>
#include <string.h>

#include "util/units.h"
#include "util/xalloc.h"

/* Prefixes (ending in '_') and whole names of the variables that change ML performance. */
static const char *const recorded_vars[] = {
    /* threading and affinity of OpenMP and BLAS */
    "OMP_", "KMP_", "GOMP_", "MKL_", "OPENBLAS_", "GOTO_NUM_THREADS", "BLIS_",
    "VECLIB_MAXIMUM_THREADS", "NUMEXPR_", "ONEDNN_", "DNNL_", "TOKENIZERS_PARALLELISM",
    /* GPUs and collectives */
    "CUDA_", "NVIDIA_", "NCCL_", "CUBLAS_", "CUBLASLT_", "CUDNN_", "HIP_", "ROCR_", "HSA_",
    "MIOPEN_",
    /* frameworks */
    "TF_", "XLA_", "JAX_", "PYTORCH_", "TORCH_", "TORCHINDUCTOR_", "TRITON_",
    /* memory allocators and the loader */
    "MALLOC_", "TCMALLOC_", "GLIBC_TUNABLES", "LD_PRELOAD", "LD_LIBRARY_PATH",
    /* mlbench itself (a fake NVML, the store) */
    "MLBENCH_",
};

static bool looks_secret(const char *name)
{
    static const char *const words[] = {"TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strstr(name, words[i]))
            return true;
    for (const char *p = name; (p = strstr(p, "KEY")); p += 3) {
        bool start = p == name || p[-1] == '_';
        bool end = p[3] == '\0' || p[3] == '_' || (p[3] == 'S' && (p[4] == '\0' || p[4] == '_'));
        if (start && end)
            return true;
    }
    return false;
}

/* Terraform's variables share TensorFlow's TF_ prefix; TF_VAR_* may hold anything. */
static bool terraform_variable(const char *name)
{
    static const char *const tf[] = {
        "TF_VAR_", "TF_CLI_", "TF_TOKEN_", "TF_LOG", "TF_INPUT", "TF_DATA_DIR", "TF_WORKSPACE",
        "TF_IN_AUTOMATION", "TF_REGISTRY_", "TF_PLUGIN_", "TF_IGNORE", "TF_STATE_",
        "TF_APPEND_USER_AGENT", "TF_ACC",
    };
    for (size_t i = 0; i < sizeof tf / sizeof tf[0]; i++)
        if (!strncmp(name, tf[i], strlen(tf[i])))
            return true;
    return false;
}

bool envinfo_variable_recorded(const char *name)
{
    if (!name || !*name || looks_secret(name) || terraform_variable(name))
        return false;
    for (size_t i = 0; i < sizeof recorded_vars / sizeof recorded_vars[0]; i++) {
        const char *r = recorded_vars[i];
        size_t n = strlen(r);
        if (r[n - 1] == '_' ? !strncmp(name, r, n) && name[n] : !strcmp(name, r))
            return true;
    }
    return false;
}

static int var_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

json_t *envinfo_variables(char *const *envp)
{
    size_t n = 0;
    for (char *const *e = envp; e && *e; e++)
        n++;
    const char **picked = xcalloc(n + 1, sizeof *picked);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *eq = strchr(envp[i], '=');
        if (!eq || eq == envp[i])
            continue;
        char name[256];
        if ((size_t)(eq - envp[i]) >= sizeof name)
            continue;
        snprintf(name, sizeof name, "%.*s", (int)(eq - envp[i]), envp[i]);
        if (envinfo_variable_recorded(name))
            picked[k++] = envp[i];
    }
    qsort(picked, k, sizeof *picked, var_cmp);
    json_t *a = json_array();
    for (size_t i = 0; i < k; i++) {
        const char *eq = strchr(picked[i], '=');
        char *name = units_utf8_sanitize(picked[i], (size_t)(eq - picked[i]));
        char *value = units_utf8_sanitize(eq + 1, strlen(eq + 1));
        json_array_append_new(a, json_pack("{s:s, s:s}", "name", name, "value", value));
        free(name);
        free(value);
    }
    free(picked);
    return a;
}
