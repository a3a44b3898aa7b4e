#!/bin/sh
# Runs each unit-test binary in its own process, as many at once as there
# are cores, and sums their counts (reported in the order given). A binary
# that runs longer than UNIT_TIMEOUT seconds (default 120) counts as hung.
jobs=$(nproc 2>/dev/null || echo 1)
TMPD=$(mktemp -d) || exit 1
UNIT_TIMEOUT=${UNIT_TIMEOUT:-120}
export TMPD UNIT_TIMEOUT
trap 'rm -rf "$TMPD"' EXIT
i=0
for t in "$@"; do
	i=$((i + 1))
	printf '%s %s\n' "$i" "$t"
done | xargs -P "$jobs" -n 2 sh -c \
	'timeout "$UNIT_TIMEOUT" "$2" > "$TMPD/$1.out" 2>&1; echo $? > "$TMPD/$1.rc"' sh
passed=0 failed=0
i=0
for t in "$@"; do
	i=$((i + 1))
	rc=$(cat "$TMPD/$i.rc" 2>/dev/null || echo 127)
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$TMPD/$i.out" 2>/dev/null | tail -n 1)
	p=$(printf '%s' "$line" | sed -E 's/^([0-9]+) passed.*/\1/')
	f=$(printf '%s' "$line" | sed -E 's/.*, ([0-9]+) failed$/\1/')
	if [ -z "$line" ]; then p=0 f=1; fi
	if [ "$rc" -ne 0 ] && [ "$f" = 0 ]; then f=1; fi
	[ "$f" != 0 ] && { tail -n 30 "$TMPD/$i.out"; echo "FAILED: $t (exit $rc)"; }
	passed=$((passed + p)) failed=$((failed + f))
done
echo "unit: $passed passed, $failed failed"
[ "$failed" = 0 ]
