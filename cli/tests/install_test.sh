#!/bin/sh
# An install of a Release configuration puts keyplace-cli stripped in bin/, its man page in
# share/man/man1 and its bash completion in share/bash-completion/completions, and the installed
# page renders (man_renders.sh; skipped, 77, where man is not installed).
#   install_test.sh BUILD_DIR PREFIX SOURCE_DIR
set -u
build="$1" prefix="$2" src="$3"
rm -rf "$prefix"
cmake --install "$build" --config Release --prefix "$prefix" >/dev/null || { echo "cmake --install failed"; exit 1; }
cli="$prefix/bin/keyplace-cli"
page="$prefix/share/man/man1/keyplace-cli.1"
completion="$prefix/share/bash-completion/completions/keyplace-cli"
for f in "$cli" "$page" "$completion"; do
    [ -f "$f" ] || { echo "not installed: $f"; exit 1; }
done
# Stripped: no symbol table, no debug sections.
if readelf -S "$cli" | grep -E '\.symtab|\.debug_' >/dev/null; then
    echo "$cli is not stripped:"; readelf -S "$cli" | grep -E '\.symtab|\.debug_'; exit 1
fi
"$cli" --version | grep -q '^keyplace-cli ' || { echo "the installed keyplace-cli does not run"; exit 1; }
cmp "$page" "$src/cli/keyplace-cli.1" || exit 1
cmp "$completion" "$src/cli/keyplace-cli.bash" || exit 1
exec sh "$src/cli/tests/man_renders.sh" "$page"
