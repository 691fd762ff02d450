/* cmd_completion: `mlbench completion bash|zsh|fish` prints a shell completion script made from
 * the commands' own option tables: each command is run with --help while a collector is set
 * (cli_options_collect), so that it hands over its parser (options and help text) instead of
 * printing it. What an option's value completes to comes from the word that names the value
 * in the help text (--output FILE: file names; --store DIR|URI: directories). So the scripts,
 * the man pages (help2man on the same --help) and --help itself cannot drift apart. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/options.h"
#include "cli/run_options.h"
#include "util/log.h"
#include "util/xalloc.h"

enum value_kind { VALUE_NONE, VALUE_ANY, VALUE_FILE, VALUE_DIR, VALUE_COMMAND, VALUE_COLOR };

struct opt {
    char *name;       /* long name, without "--" */
    char short_name;  /* or 0 */
    enum value_kind value;
    char *help;       /* the rest of its help line, for zsh and fish (may be "") */
};

struct verb {
    const char *name, *summary;
    struct opt *opts;
    size_t n_opts;
};

/* The line of usage that describes --name: after blanks, "--name" or "-x, --name"; or NULL.
 * *at is set to just after "--name". */
static const char *option_line(const char *usage, const char *name, const char **at)
{
    size_t len = strlen(name);
    for (const char *line = usage; line && *line;) {
        const char *end = strchr(line, '\n');
        const char *p = line + strspn(line, " ");
        if (p[0] == '-' && p[1] != '-' && p[1] && !strncmp(p + 2, ", ", 2))
            p += 4; /* "-x, " */
        if (!strncmp(p, "--", 2) && !strncmp(p + 2, name, len) &&
            (p[2 + len] == ' ' || p[2 + len] == '\n' || p[2 + len] == '=')) {
            *at = p + 2 + len;
            return line;
        }
        line = end ? end + 1 : NULL;
    }
    return NULL;
}

/* What the value of --name completes to, from the word naming it in the help text (or in
 * run's, for the options of run that sweep takes). */
static enum value_kind value_kind(const char *name, const char *usage, char **help)
{
    const char *at = NULL, *line = usage ? option_line(usage, name, &at) : NULL;
    if (!line)
        line = option_line(run_options_usage(), name, &at);
    char word[64] = "";
    if (line) {
        const char *w = at + strspn(at, " =");
        size_t n = strspn(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_|:.0123456789");
        snprintf(word, sizeof word, "%.*s", (int)(n < sizeof word ? n : sizeof word - 1), w);
        /* the description: after the value's word, past the blanks (one line) */
        const char *d = w + n + strspn(w + n, " ");
        const char *end = strchr(d, '\n');
        *help = xstrndup(d, end ? (size_t)(end - d) : strlen(d));
    } else {
        *help = xstrdup("");
    }
    if (!strcmp(name, "color"))
        return VALUE_COLOR;
    if (strstr(word, "FILE"))
        return VALUE_FILE;
    if (strstr(word, "DIR"))
        return VALUE_DIR;
    if (!strcmp(word, "CMD") || !strcmp(word, "COMMAND"))
        return VALUE_COMMAND;
    return VALUE_ANY;
}

static void add_opt(struct verb *v, const struct cli_option *o, const char *usage)
{
    v->opts = xreallocarray(v->opts, v->n_opts + 1, sizeof *v->opts);
    struct opt *d = &v->opts[v->n_opts++];
    d->name = xstrdup(o->name);
    d->short_name = o->short_name;
    d->value = value_kind(o->name, usage, &d->help);
    if (o->kind == CLI_FLAG)
        d->value = VALUE_NONE;
}

static void collect(const struct cli_parser *p, void *arg)
{
    struct verb *v = arg;
    for (const struct cli_option *o = p->options; o->name; o++)
        add_opt(v, o, p->usage);
    add_opt(v, &cli_color_option, p->usage);
    static bool unused;
    static const struct cli_option help = CLI_OPT_FLAG("help", 'h', &unused);
    add_opt(v, &help, p->usage);
}

/* Every visible command of commands and its options (ended by a NULL name). */
static struct verb *describe(const struct cli_command *commands)
{
    size_t n = 0;
    while (commands[n].verb)
        n++;
    struct verb *verbs = xcalloc(n + 1, sizeof *verbs);
    for (size_t i = 0; i < n; i++) {
        verbs[i].name = commands[i].verb;
        verbs[i].summary = commands[i].summary;
        if (!strcmp(verbs[i].name, "completion"))
            continue; /* itself: described below, without recursion */
        char *argv[] = {(char *)commands[i].verb, "--help", NULL};
        cli_options_collect(collect, &verbs[i]);
        commands[i].run(2, argv);
        cli_options_collect(NULL, NULL);
    }
    return verbs;
}

static void free_verbs(struct verb *verbs)
{
    for (struct verb *v = verbs; v->name; v++) {
        for (size_t k = 0; k < v->n_opts; k++) {
            free(v->opts[k].name);
            free(v->opts[k].help);
        }
        free(v->opts);
    }
    free(verbs);
}

/* Text inside single quotes of a shell: ' becomes '\'' (and for fish \'). */
static void quoted(FILE *out, const char *s, bool fish)
{
    fputc('\'', out);
    for (; *s; s++)
        if (*s == '\'')
            fputs(fish ? "\\'" : "'\\''", out);
        else if (fish && *s == '\\')
            fputs("\\\\", out);
        else
            fputc(*s, out);
    fputc('\'', out);
}

static void bash_script(FILE *out, const struct verb *verbs)
{
    fputs("# bash completion for mlbench: generated by `mlbench completion bash` from its option\n"
          "# tables. Load it with: source <(mlbench completion bash)\n"
          "_mlbench() {\n"
          "    local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n"
          "    local verb=\"${COMP_WORDS[1]}\" i opts=\n"
          "    COMPREPLY=()\n"
          "    if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
          "        COMPREPLY=($(compgen -W 'help version", out);
    for (const struct verb *v = verbs; v->name; v++)
        fprintf(out, " %s", v->name);
    fputs("' -- \"$cur\"))\n"
          "        return\n"
          "    fi\n"
          "    if [ \"$verb\" = help ]; then\n"
          "        [ \"$COMP_CWORD\" -eq 2 ] && COMPREPLY=($(compgen -W '", out);
    for (const struct verb *v = verbs; v->name; v++)
        fprintf(out, "%s%s", v == verbs ? "" : " ", v->name);
    fputs("' -- \"$cur\"))\n"
          "        return\n"
          "    fi\n"
          "    # after --, the command being measured: a command, then its own arguments\n"
          "    for ((i = 2; i < COMP_CWORD; i++)); do\n"
          "        if [ \"${COMP_WORDS[i]}\" = -- ]; then\n"
          "            if [ \"$i\" -eq $((COMP_CWORD - 1)) ]; then\n"
          "                COMPREPLY=($(compgen -c -- \"$cur\"))\n"
          "            else\n"
          "                COMPREPLY=($(compgen -f -- \"$cur\"))\n"
          "            fi\n"
          "            return\n"
          "        fi\n"
          "    done\n"
          "    case \"$verb\" in\n", out);
    for (const struct verb *v = verbs; v->name; v++) {
        fprintf(out, "    %s)\n        opts='", v->name);
        for (size_t k = 0; k < v->n_opts; k++)
            fprintf(out, "%s--%s", k ? " " : "", v->opts[k].name);
        fputs("'\n        case \"$prev\" in\n", out);
        static const char *const action[] = {
            [VALUE_ANY] = "return", [VALUE_FILE] = "COMPREPLY=($(compgen -f -- \"$cur\")); return",
            [VALUE_DIR] = "COMPREPLY=($(compgen -d -- \"$cur\")); return",
            [VALUE_COMMAND] = "COMPREPLY=($(compgen -c -- \"$cur\")); return",
            [VALUE_COLOR] = "COMPREPLY=($(compgen -W 'auto always never' -- \"$cur\")); return"};
        for (int kind = VALUE_ANY; kind <= VALUE_COLOR; kind++) {
            bool any = false;
            for (size_t k = 0; k < v->n_opts; k++) {
                const struct opt *o = &v->opts[k];
                if ((int)o->value != kind)
                    continue;
                fprintf(out, "%s--%s", any ? "|" : "        ", o->name);
                if (o->short_name)
                    fprintf(out, "|-%c", o->short_name);
                any = true;
            }
            if (any)
                fprintf(out, ") %s ;;\n", action[kind]);
        }
        fputs("        esac ;;\n", out);
    }
    fputs("    *) return ;;\n"
          "    esac\n"
          "    if [[ \"$cur\" == -* ]]; then\n"
          "        COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
          "    else\n"
          "        COMPREPLY=($(compgen -f -- \"$cur\"))\n"
          "    fi\n"
          "}\n"
          "complete -o filenames -F _mlbench mlbench\n", out);
}

static void zsh_script(FILE *out, const struct verb *verbs)
{
    fputs("#compdef mlbench\n"
          "# zsh completion for mlbench: generated by `mlbench completion zsh` from its option\n"
          "# tables. Install it as _mlbench in a directory of $fpath.\n"
          "_mlbench() {\n"
          "    local -a verbs\n"
          "    verbs=(\n", out);
    for (const struct verb *v = verbs; v->name; v++) {
        char *item = xasprintf("%s:%s", v->name, v->summary);
        fputs("        ", out);
        quoted(out, item, false);
        fputc('\n', out);
        free(item);
    }
    fputs("        'help:describe a command'\n"
          "        'version:print the version'\n"
          "    )\n"
          "    if (( CURRENT == 2 )); then\n"
          "        _describe -t commands 'mlbench command' verbs\n"
          "        return\n"
          "    fi\n"
          "    local verb=$words[2]\n"
          "    shift words\n"
          "    (( CURRENT-- ))\n"
          "    case $verb in\n"
          "    help) _describe -t commands 'mlbench command' verbs ;;\n", out);
    for (const struct verb *v = verbs; v->name; v++) {
        fprintf(out, "    %s)\n        _arguments -s -S", v->name);
        for (size_t k = 0; k < v->n_opts; k++) {
            const struct opt *o = &v->opts[k];
            static const char *const action[] = {
                [VALUE_NONE] = "", [VALUE_ANY] = ":value: ", [VALUE_FILE] = ":file:_files",
                [VALUE_DIR] = ":directory:_files -/", [VALUE_COMMAND] = ":command:_command_names",
                [VALUE_COLOR] = ":when:(auto always never)"};
            /* [help]: the first line of the description, without brackets and colons */
            char *help = xstrdup(o->help), *w = help;
            for (const char *c = help; *c; c++)
                if (*c != '[' && *c != ']' && *c != ':')
                    *w++ = *c;
            *w = '\0';
            char *desc = xasprintf("[%s]%s", help, action[o->value]);
            free(help);
            fputs(" \\\n            ", out);
            if (o->short_name) /* '(-o --output)'{-o,--output}'[...]:file:_files' */
                fprintf(out, "'(-%c --%s)'{-%c,--%s}", o->short_name, o->name, o->short_name,
                        o->name);
            else
                fprintf(out, "--%s", o->name);
            quoted(out, desc, false);
            free(desc);
        }
        fputs(" \\\n            '*::argument:_files' ;;\n", out);
    }
    fputs("    esac\n"
          "}\n"
          "_mlbench \"$@\"\n", out);
}

static void fish_script(FILE *out, const struct verb *verbs)
{
    fputs("# fish completion for mlbench: generated by `mlbench completion fish` from its option\n"
          "# tables. Install it as mlbench.fish in ~/.config/fish/completions/.\n"
          "complete -c mlbench -f\n"
          "set -l mlbench_verbs help version", out);
    for (const struct verb *v = verbs; v->name; v++)
        fprintf(out, " %s", v->name);
    fputs("\ncomplete -c mlbench -n \"not __fish_seen_subcommand_from $mlbench_verbs\" -a help "
          "-d 'describe a command'\n"
          "complete -c mlbench -n \"not __fish_seen_subcommand_from $mlbench_verbs\" -a version "
          "-d 'print the version'\n", out);
    for (const struct verb *v = verbs; v->name; v++) {
        fprintf(out, "complete -c mlbench -n \"not __fish_seen_subcommand_from $mlbench_verbs\" "
                     "-a %s -d ", v->name);
        quoted(out, v->summary, true);
        fputc('\n', out);
    }
    for (const struct verb *v = verbs; v->name; v++)
        for (size_t k = 0; k < v->n_opts; k++) {
            const struct opt *o = &v->opts[k];
            fprintf(out, "complete -c mlbench -n '__fish_seen_subcommand_from %s' -l %s", v->name,
                    o->name);
            if (o->short_name)
                fprintf(out, " -s %c", o->short_name);
            static const char *const action[] = {
                [VALUE_NONE] = "", [VALUE_ANY] = " -x", [VALUE_FILE] = " -r -F",
                [VALUE_DIR] = " -x -a '(__fish_complete_directories)'",
                [VALUE_COMMAND] = " -x -a '(__fish_complete_command)'",
                [VALUE_COLOR] = " -x -a 'auto always never'"};
            fputs(action[o->value], out);
            if (*o->help) {
                fputs(" -d ", out);
                quoted(out, o->help, true);
            }
            fputc('\n', out);
        }
}

static const char usage_text[] =
    "Usage: mlbench completion SHELL\n"
    "\n"
    "Prints the completion script of SHELL (bash, zsh or fish) for mlbench's commands and\n"
    "options, made from the option tables the commands parse with.\n"
    "  bash: source <(mlbench completion bash)   (or install it as\n"
    "        /usr/share/bash-completion/completions/mlbench)\n"
    "  zsh:  mlbench completion zsh > \"${fpath[1]}/_mlbench\"\n"
    "  fish: mlbench completion fish > ~/.config/fish/completions/mlbench.fish\n"
    "Installed packages put them in place already.\n"
    "\n"
    "  -h, --help   this text\n"
    "\n"
    "Exit status: 0 printed; 1 the output could not be written; 2 bad usage.\n";

int cmd_completion(const struct cli_command *commands, int argc, char **argv)
{
    static const struct cli_option table[] = {CLI_OPT_END};
    const struct cli_parser parser = {.verb = "completion", .options = table,
                                      .flags = 0, .usage = usage_text};
    struct cli_args args;
    char err[1024];
    int rc = cli_options_parse(&parser, argc, argv, &args, err, sizeof err);
    if (rc == CLI_HELP)
        return 0;
    if (rc == CLI_ERROR) {
        log_error("completion: %s", err);
        return 2;
    }
    static const struct {
        const char *name;
        void (*write)(FILE *out, const struct verb *verbs);
    } shells[] = {{"bash", bash_script}, {"zsh", zsh_script}, {"fish", fish_script}};
    if (args.n != 1) {
        log_error("completion: %s (give bash, zsh or fish)",
                  args.n ? "one shell at a time" : "which shell?");
        return 2;
    }
    for (size_t i = 0; i < sizeof shells / sizeof shells[0]; i++)
        if (!strcmp(args.v[0], shells[i].name)) {
            struct verb *verbs = describe(commands);
            shells[i].write(stdout, verbs);
            free_verbs(verbs);
            if (fflush(stdout) != 0 || ferror(stdout)) {
                log_error("completion: cannot write the script to standard output");
                return 1;
            }
            return 0;
        }
    log_error("completion: no shell '%s' (give bash, zsh or fish)", args.v[0]);
    return 2;
}
