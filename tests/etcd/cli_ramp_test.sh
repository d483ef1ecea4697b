#!/usr/bin/env bash
# keyplace-cli snapshot ramp and etcd ramp on a real etcd, as processes: a ramped join published
# one epoch at a time behind the barrier (every reporting client adopted the epoch before), stopped
# by --check, resumed, and stopped by a barrier that is not met.
#   cli_ramp_test.sh KEYPLACE_CLI FIXTURE_DIR
# FIXTURE_DIR is tests/etcd/etcd_server.sh's. Exits 77 (skipped) when etcd is not installed. Every
# wait is a poll with a generous deadline.
set -euo pipefail

cli=$1
fixture=$2
# shellcheck source=cli_test_lib.sh
source "$(dirname "$0")/cli_test_lib.sh"
endpoint=$(fixture_endpoint "$fixture") || exit $?
cluster="cli-ramp-$$-$RANDOM"
etcd_cli() { "$cli" etcd "$1" --endpoints "$endpoint" --cluster "$cluster" "${@:2}"; }
iso='[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z'
fingerprint_of() { "$cli" snapshot verify "$1" | awk '$1 == "fingerprint" { print $2 }'; }

"$cli" snapshot create --strategy ring --nodes a,b,c --cluster "$cluster" --epoch 1 >"$work/s1.json"
"$cli" snapshot create --strategy ring --nodes a,b,c,d --cluster "$cluster" --epoch 2 >"$work/s2.json"
mkdir "$work/ramp"
"$cli" snapshot ramp "$work/s1.json" "$work/s2.json" --steps 4 --out "$work/ramp" >"$work/plan.out"
[[ $(ls "$work/ramp") == $'epoch-2.json\nepoch-3.json\nepoch-4.json\nepoch-5.json' ]] ||
    fail "snapshot ramp wrote $(ls "$work/ramp")"
f2=$(fingerprint_of "$work/s2.json")
[[ $(fingerprint_of "$work/ramp/epoch-5.json") == "$f2" ]] || fail "the ramp's last epoch does not place as s2"

etcd_cli publish "$work/s1.json" >/dev/null
for w in w1 w2; do
    "$cli" etcd watch --endpoints "$endpoint" --cluster "$cluster" --client-id "$w" >"$work/$w.out" 2>"$work/$w.err" &
    pids+=($!)
done
epochs_of() { awk '{ printf "%s ", $2 }' "$work/$1.out"; }
on_epoch() { [[ $(epochs_of w1) == "$1" && $(epochs_of w2) == "$1" ]]; }
until_true 30 on_epoch "1 " || fail "the watchers did not adopt epoch 1"

# (a) --check stops the ramp after epoch 3 (it passes after 2, fails after 3): exit 4.
rc=0
etcd_cli ramp --dir "$work/ramp" --clients 2 --timeout 30 --check 'test "$KEYPLACE_EPOCH" -lt 3' \
    >"$work/a.out" 2>"$work/a.err" || rc=$?
[[ $rc -eq 4 ]] || fail "etcd ramp with --check exited $rc"
grep -Eq '^epoch 2 adopted by 2 clients in [0-9]+\.[0-9] s$' "$work/a.out" || fail "epoch 2's barrier line"
grep -Eq '^epoch 3 adopted by 2 clients in [0-9]+\.[0-9] s$' "$work/a.out" || fail "epoch 3's barrier line"
[[ $(wc -l <"$work/a.out") -eq 2 ]] || fail "etcd ramp printed more than epochs 2 and 3"
[[ $(<"$work/a.err") == "keyplace-cli: --check exited 1 after epoch 3: the ramp stops here" ]] ||
    fail "the --check stop message"
# The barrier held: when the ramp stopped, both watchers had adopted 2 then 3, and nothing after.
[[ $(epochs_of w1) == "1 2 3 " && $(epochs_of w2) == "1 2 3 " ]] || fail "the watchers' epochs after the stop"
[[ $(etcd_cli current) =~ ^epoch\ 3\  ]] || fail "etcd current after the stop: $(etcd_cli current)"

# (b) Run again, it resumes: 2 is skipped, 3 is waited for again, then 4 and 5.
etcd_cli ramp --dir "$work/ramp" --clients 2 --timeout 30 >"$work/b.out" 2>"$work/b.err" || fail "the resumed ramp failed"
grep -qx "epoch 2 already published" "$work/b.out" || fail "the resumed ramp did not skip epoch 2"
grep -Eq '^epoch 5 adopted by 2 clients in ' "$work/b.out" || fail "the resumed ramp did not reach epoch 5"
until_true 30 on_epoch "1 2 3 4 5 " || fail "the watchers did not follow the ramp to epoch 5"
[[ $(etcd_cli current) == "epoch 5 fingerprint $f2" ]] || fail "etcd current after the ramp"

# (c) A barrier that is not met stops the ramp with the clients named.
"$cli" snapshot create --strategy ring --nodes a,b,c,d,e --cluster "$cluster" --epoch 6 >"$work/s6.json"
mkdir "$work/ramp2"
"$cli" snapshot ramp "$work/ramp/epoch-5.json" "$work/s6.json" --steps 2 --out "$work/ramp2" >/dev/null
rc=0
etcd_cli ramp --dir "$work/ramp2" --clients 3 --timeout 2 >"$work/c.out" 2>"$work/c.err" || rc=$?
[[ $rc -eq 1 ]] || fail "etcd ramp with an unmet barrier exited $rc"
[[ $(<"$work/c.err") == "keyplace-cli: epoch 6: 2 of 2 clients adopted it within 2 s (at least 3 wanted): the ramp stops here" ]] ||
    fail "the unmet barrier's message"
[[ $(etcd_cli current) =~ ^epoch\ 6\  ]] || fail "etcd current after the unmet barrier"

# (d) Bad input changes nothing in etcd.
rc=0
etcd_cli ramp --dir "$work/nonexistent" >/dev/null 2>"$work/d.err" || rc=$?
[[ $rc -eq 1 ]] && grep -q "^keyplace-cli: --dir '$work/nonexistent': " "$work/d.err" || fail "a missing --dir"
mkdir "$work/other"
"$cli" snapshot create --strategy ring --nodes a,b --cluster elsewhere --epoch 9 >"$work/other/epoch-9.json"
rc=0
etcd_cli ramp --dir "$work/other" >/dev/null 2>"$work/e.err" || rc=$?
[[ $rc -eq 1 ]] && grep -q "is a snapshot of cluster 'elsewhere'" "$work/e.err" || fail "a foreign document"
[[ $(etcd_cli current) =~ ^epoch\ 6\  ]] || fail "etcd current changed after bad input"
echo "cli ramp: ok"
