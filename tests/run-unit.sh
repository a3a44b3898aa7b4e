#!/bin/sh
# Runs each unit-test binary in its own process and sums their counts.
passed=0 failed=0
for t in "$@"; do
	out=$(timeout 120 "$t" 2>&1)
	rc=$?
	line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -n 1)
	p=$(printf '%s' "$line" | sed -E 's/^([0-9]+) passed.*/\1/')
	f=$(printf '%s' "$line" | sed -E 's/.*, ([0-9]+) failed$/\1/')
	if [ -z "$line" ]; then p=0 f=1; fi
	if [ $rc -ne 0 ] && [ "$f" = 0 ]; then f=1; fi
	[ "$f" != 0 ] && { printf '%s\n' "$out" | tail -n 30; echo "FAILED: $t (exit $rc)"; }
	passed=$((passed + p)) failed=$((failed + f))
done
echo "unit: $passed passed, $failed failed"
[ "$failed" = 0 ]
