/* envinfo/virt.c: the `virtualization` object of the environment: the container (Kubernetes,
 * Docker, Podman, LXC ... from variables, marker files and cgroup paths) and the virtual
 * machine (cpuinfo's hypervisor bit, DMI names, /sys/hypervisor, WSL), with the evidence. */
#include "result/envinfo/internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/units.h"

/* DMI vendor or product names of hypervisors and clouds, and the name recorded. */
static const struct {
    const char *needle, *name;
    bool always_virtual; /* only ever a virtual machine (a cloud vendor also sells bare metal) */
} vm_vendors[] = {
    {"KVM", "kvm", true},           {"QEMU", "qemu", true},
    {"VMware", "vmware", true},     {"VirtualBox", "oracle", true},
    {"innotek", "oracle", true},    {"Xen", "xen", true},
    {"Bochs", "bochs", true},       {"BHYVE", "bhyve", true},
    {"Parallels", "parallels", true}, {"OpenStack", "openstack", true},
    {"Amazon EC2", "amazon", false}, {"Google", "google", false},
    {"Microsoft Corporation", "microsoft", false}, {"Alibaba Cloud", "alibaba", false},
    {"Oracle Corporation", "oracle-cloud", false},
};

json_t *envinfo_virtualization(const char *root, const struct cpuinfo_facts *cpu,
                               char *const *envp, const char *kernel_release,
                               struct machine_facts *m)
{
    json_t *evidence = json_array();
    const char *container = "none";
    char buf[256];

    char *cg = envinfo_read_file(root, "/proc/1/cgroup");
    if (!cg)
        cg = envinfo_read_file(root, "/proc/self/cgroup");
    struct stat st;
    char path[PATH_MAX];
    if (envinfo_getenv(envp, "KUBERNETES_SERVICE_HOST") || (cg && strstr(cg, "kubepods"))) {
        container = "kubernetes";
        json_array_append_new(evidence, json_string(envinfo_getenv(envp, "KUBERNETES_SERVICE_HOST")
                                                        ? "KUBERNETES_SERVICE_HOST is set"
                                                        : "cgroup path has kubepods"));
    } else if (snprintf(path, sizeof path, "%s/.dockerenv", root) > 0 && stat(path, &st) == 0) {
        container = "docker";
        json_array_append_new(evidence, json_string("/.dockerenv exists"));
    } else if (snprintf(path, sizeof path, "%s/run/.containerenv", root) > 0 &&
               stat(path, &st) == 0) {
        container = "podman";
        json_array_append_new(evidence, json_string("/run/.containerenv exists"));
    } else if (envinfo_getenv(envp, "container") && *envinfo_getenv(envp, "container")) {
        snprintf(buf, sizeof buf, "%s", envinfo_getenv(envp, "container"));
        container = buf;
        json_array_append_new(evidence, json_string("variable container is set"));
    } else if (cg && (strstr(cg, "/docker") || strstr(cg, "docker-"))) {
        container = "docker";
        json_array_append_new(evidence, json_string("cgroup path has docker"));
    } else if (cg && strstr(cg, "/lxc")) {
        container = "lxc";
        json_array_append_new(evidence, json_string("cgroup path has lxc"));
    } else if (cg && strstr(cg, "containerd")) {
        container = "containerd";
        json_array_append_new(evidence, json_string("cgroup path has containerd"));
    }
    free(cg);

    const char *vm = "none";
    char vendor[128] = "", product[128] = "", hv_type[32] = "";
    envinfo_read_line(root, "/sys/class/dmi/id/sys_vendor", vendor, sizeof vendor);
    envinfo_read_line(root, "/sys/class/dmi/id/product_name", product, sizeof product);
    envinfo_read_line(root, "/sys/hypervisor/type", hv_type, sizeof hv_type);
    const char *dmi_name = NULL;
    bool dmi_always = false;
    for (size_t i = 0; i < sizeof vm_vendors / sizeof vm_vendors[0] && !dmi_name; i++)
        if (strstr(vendor, vm_vendors[i].needle) || strstr(product, vm_vendors[i].needle)) {
            dmi_name = vm_vendors[i].name;
            dmi_always = vm_vendors[i].always_virtual;
        }
    /* Hyper-V machines are "Microsoft Corporation" / "Virtual Machine"; a Surface is not one. */
    if (dmi_name && !strcmp(dmi_name, "microsoft") && !strstr(product, "Virtual Machine"))
        dmi_name = NULL;
    size_t plen = strlen(product);
    bool metal = plen > 6 && !strcmp(product + plen - 6, ".metal"); /* EC2 bare metal */
    if (cpu->has_flags && cpu->hypervisor) {
        vm = dmi_name ? dmi_name : hv_type[0] ? hv_type : "unknown";
        json_array_append_new(evidence, json_string("cpuinfo flags have hypervisor"));
    } else if (!cpu->has_flags && dmi_name && !metal) {
        vm = dmi_name; /* no hypervisor bit to ask (ARM): the DMI names are the evidence */
    } else if (dmi_name && dmi_always) {
        vm = dmi_name;
    } else if (hv_type[0]) {
        vm = hv_type;
        json_array_append_new(evidence, json_string("/sys/hypervisor/type is set"));
    }
    if (strcmp(vm, "none") && (vendor[0] || product[0]) && dmi_name) {
        snprintf(path, sizeof path, "DMI: %s %s", vendor, product);
        char *clean = units_utf8_sanitize(path, strlen(path));
        json_array_append_new(evidence, json_string(clean));
        free(clean);
    }
    if (!strcmp(vm, "none") && kernel_release &&
        (strstr(kernel_release, "microsoft") || strstr(kernel_release, "WSL"))) {
        vm = "wsl";
        json_array_append_new(evidence, json_string("kernel release names WSL"));
    }
    /* container and vm may come from a variable or a file: both copies keep them UTF-8 */
    envinfo_copy_text(m->container, sizeof m->container, container);
    envinfo_copy_text(m->vm, sizeof m->vm, vm);
    json_t *o = json_object();
    envinfo_set_text(o, "container", m->container);
    envinfo_set_text(o, "vm", m->vm);
    json_object_set_new(o, "evidence", evidence);
    return o;
}
