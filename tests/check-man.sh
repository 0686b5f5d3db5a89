#!/bin/bash
# The man page documents every long option the help texts list (the
# default command's and record's, report's, dump's, stat's and agent's), each
# written as roff's \-\-name (in any font: \fB\-\-name\fR), and groff
# formats it without a warning.
# usage: check-man.sh DWARFSAMPLE MANPAGE
set -eu
ds=$1
man=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for verb in '' record report dump stat agent; do
	# shellcheck disable=SC2086 # no verb is no word
	if ! "$ds" $verb --help >>"$tmp/help"; then
		echo "FAIL: 'dwarfsample${verb:+ $verb} --help' failed"
		exit 1
	fi
done
# Every --name in the help texts, options of other programs mentioned in
# them (perf record --call-graph) included: the page mentions those too.
LC_ALL=C grep -oE -- '--[a-z-]+' "$tmp/help" | sed 's/-*$//' | LC_ALL=C sort -u >"$tmp/options"
n=$(wc -l <"$tmp/options")
if [ "$n" -lt 20 ]; then
	echo "FAIL: only $n long options found in the help texts; the check is not seeing them"
	exit 1
fi

missing=0
while read -r opt; do
	# --stack-size is \-\-stack\-size in roff: every hyphen escaped, and
	# not the start of a longer name (\-\-tag is not \-\-tags).
	re=$(printf '%s' "$opt" | sed 's/-/\\\\-/g')
	if ! LC_ALL=C grep -qE -- "$re"'($|[^a-z0-9_\\]|\\[^-])' "$man"; then
		if LC_ALL=C grep -qE -- "(^|[^a-z0-9_-])$opt($|[^a-z0-9_-])" "$man"; then
			echo "FAIL: $opt is in $man only with unescaped hyphens; write ${re//\\\\/\\}"
		else
			echo "FAIL: $opt is not in $man"
		fi
		missing=1
	fi
done <"$tmp/options"
if [ "$missing" -ne 0 ]; then
	exit 1
fi
echo "PASS: all $n long options of the help texts are in the man page"

if ! command -v groff >/dev/null 2>&1; then
	echo "SKIP: groff is not installed (Debian: groff-base); roff warnings not checked"
	exit 0
fi
rc=0
LC_ALL=C groff -man -ww -z "$man" >"$tmp/groff" 2>&1 || rc=$?
if [ "$rc" -ne 0 ] || [ -s "$tmp/groff" ]; then
	echo "FAIL: groff -man -ww warns about $man:"
	cat "$tmp/groff"
	exit 1
fi
echo "PASS: groff -man -ww formats the man page without a warning"
