#!/bin/sh
# The man page renders without a warning: man -l PAGE, with groff's warnings on, prints nothing
# on stderr. Skipped (77) where man is not installed.
page="$1"
command -v man >/dev/null 2>&1 || { echo "man is not installed: skipped"; exit 77; }
err=$(MANWIDTH=80 MANROFFSEQ='' MAN_KEEP_FORMATTING=1 man --warnings -l "$page" 2>&1 >/dev/null) ||
    { echo "man -l failed: $err"; exit 1; }
if [ -n "$err" ]; then
    echo "man -l warns: $err"
    exit 1
fi
# ...and says what it should: the name line and a command.
out=$(MANWIDTH=80 man -l "$page" 2>/dev/null | col -b)
echo "$out" | grep -q "which node owns a key" || { echo "no NAME line"; exit 1; }
echo "$out" | grep -q "snapshot create" || { echo "no snapshot create"; exit 1; }
