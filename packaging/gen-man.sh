#!/bin/sh
# gen-man.sh MLBENCH OUTDIR VERSION DOCDIR: the man pages of mlbench and of each command, made by
# help2man from the --help the binary prints (the one source of the help text: --help and the
# pages cannot drift). mlbench.1 lists the commands; mlbench-VERB.1 is `mlbench VERB --help`.
set -eu
mlbench=$1 out=$2 version=$3 docdir=$4
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

see_also() { # VERB: the SEE ALSO section, for help2man --include
    {
        echo "[SEE ALSO]"
        if [ -n "$1" ]; then
            echo ".BR mlbench (1)"
        else
            "$mlbench" --help | sed -n 's/^  \([a-z][a-z-]*\)  .*/\1/p' | grep -vxE 'help|version' |
                sed 's/.*/.BR mlbench-& (1)/' | sed '$!s/$/,/'
        fi
        echo ".PP"
        echo "The user guide: $docdir/docs/ (cli.md describes every command)."
    } > "$tmp/see-also"
}

page() { # FILE NAME TITLE COMMAND...: help2man on COMMAND --help, its page named NAME
    file=$1 name=$2 title=$3
    shift 3
    help2man --no-info --no-discard-stderr --version-string="$version" --section=1 \
        --source="mlbench $version" --manual="mlbench manual" --name="$title" \
        --include="$tmp/see-also" "$*" > "$tmp/page"
    # help2man names the page after the program (MLBENCH): a command's page is MLBENCH-VERB
    upper=$(printf '%s' "$name" | tr '[:lower:]' '[:upper:]')
    sed -e "s/^\.TH MLBENCH /.TH $upper /" -e "/^\.SH NAME/{n;s/^mlbench [a-z-]* \\\\-/$name \\\\-/;}" \
        "$tmp/page" > "$file"
}

see_also ""
page "$out/mlbench.1" mlbench "benchmark and optimise machine-learning workflows" "$mlbench"
"$mlbench" --help | sed -n 's/^  \([a-z][a-z-]*\)  *\(.*\)$/\1	\2/p' |
    while IFS='	' read -r verb summary; do
        case $verb in help | version) continue ;; esac
        see_also "$verb"
        page "$out/mlbench-$verb.1" "mlbench-$verb" "$summary" "$mlbench" "$verb"
    done
