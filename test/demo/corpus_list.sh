#!/usr/bin/env bash
# Prints the demo corpus as "name<TAB>path" lines: the licence texts in
# /usr/share/common-licenses and every /usr/share/doc/*/copyright file.
# Package doc directories that are symlinks to another package's would
# repeat a file: each real path is listed once.
set -euo pipefail
{
	for f in /usr/share/common-licenses/*; do
		[ -f "$f" ] && printf 'common-licenses/%s\t%s\n' "$(basename "$f")" "$(readlink -f "$f")"
	done
	for f in /usr/share/doc/*/copyright; do
		[ -f "$f" ] && printf '%s\t%s\n' "$(basename "$(dirname "$f")")" "$(readlink -f "$f")"
	done
} | sort -t $'\t' -k2,2 -u | sort
