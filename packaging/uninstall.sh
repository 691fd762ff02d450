#!/bin/sh
# DESTDIR=DIR uninstall.sh MANIFEST: removes the files that `cmake --install` listed in MANIFEST
# (one path a line, without the DESTDIR it installed into: give the same one), then the directories of mlbench's own that are left empty
# (lib/mlbench, include/mlbench, share/doc/mlbench and what is inside them); shared
# directories (bin, man1, the completion directories) stay.
set -eu
manifest=$1
[ -f "$manifest" ] || { echo "uninstall: no $manifest: nothing was installed from this build" >&2; exit 2; }
destdir=${DESTDIR:-}
while IFS= read -r f || [ -n "$f" ]; do
    rm -f -- "$destdir$f"
done < "$manifest"
sed -n "s|^|$destdir|; s|/[^/]*\$||p" "$manifest" | grep '/mlbench\(/\|$\)' | sort -ru | while IFS= read -r d; do
    # deepest first; up to the directory named mlbench, never above it
    while [ -d "$d" ] && rmdir -- "$d" 2>/dev/null; do
        case $d in */mlbench) break ;; esac
        d=${d%/*}
    done
done
rm -f -- "$manifest"
echo "uninstall: removed the files listed in $manifest"
