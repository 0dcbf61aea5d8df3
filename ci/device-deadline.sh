#!/usr/bin/env bash
# The campaign engine's promises on a GPU machine (run from the repository root, triton + torch installed):
# a device campaign with a time budget exits within budget + 40 s with its summary (RUNS runs in a row), and a
# SIGTERM to its process group mid-campaign (what a CI runner sends when it cancels) still leaves a summary.
# One line of figures per run in $OUT/deadline.txt: exit status, wall seconds, stderr bytes, kernels, verdicts,
# unfinished, where the time went (phases_s) and the blow-up figures.
set -u
OUT=${OUT:-/tmp/gfxhound-deadline}
RUNS=${RUNS:-1}
BUDGET=${BUDGET:-5m}
SIGTERM_AFTER=${SIGTERM_AFTER:-60}
WORKERS=${WORKERS:-$(( $(nproc) - 1 ))}
SEED=${SEED:-11}
mkdir -p "$OUT"

figures() {  # run name, exit status, start (epoch seconds), JSON file, stderr file
    python - "$@" >> "$OUT/deadline.txt" <<'EOF'
import json, os, sys, time
name, rc, start, out, err = sys.argv[1:]
wall = time.time() - float(start)
try:
    s = json.load(open(out))
except Exception as exc:  # noqa: BLE001 - no summary is the failure this script looks for
    print(f"{name}: exit {rc}, {float(wall):.1f} s, NO SUMMARY ({exc}); stderr {os.path.getsize(err)} bytes")
    sys.exit()
print(f"{name}: exit {rc}, {float(wall):.1f} s wall, stderr {os.path.getsize(err)} bytes; {s['kernels']} kernels "
      f"in {s['duration_s']} s ({s['kernels_per_s']}/s), stopped_by={s['stopped_by'] or 'budget'}, "
      f"unfinished={s['unfinished']}, verdicts={s['verdicts']}, phases_s={s['phases_s']}, "
      f"timeouts={s['timeouts']}, worker_output_lines={s.get('worker_output', {}).get('lines')}")
EOF
}

for i in $(seq "$RUNS"); do
    start=$(date +%s.%N)
    timeout -s KILL 900 python -P -m gfxhound fuzz --backend device --budget "$BUDGET" --workers "$WORKERS" \
        --seed $(( SEED + i )) --corpus "$OUT/corpus" --json > "$OUT/run-$i.json" 2> "$OUT/run-$i.err"
    rc=$?
    figures "run $i (budget $BUDGET)" "$rc" "$start" "$OUT/run-$i.json" "$OUT/run-$i.err"
done

setsid python -P -m gfxhound fuzz --backend device --budget 30m --workers "$WORKERS" --seed $(( SEED + 100 )) \
    --corpus "$OUT/corpus" --json > "$OUT/sigterm.json" 2> "$OUT/sigterm.err" &
pid=$!
sleep "$SIGTERM_AFTER"
kill -s TERM -- "-$pid"
start=$(date +%s.%N)
wait "$pid"
rc=$?
figures "SIGTERM after ${SIGTERM_AFTER} s (figure: seconds from SIGTERM to exit)" "$rc" \
    "$start" "$OUT/sigterm.json" "$OUT/sigterm.err"
logs=$(python -c "import json,sys; print(json.load(open(sys.argv[1])).get('worker_output', {}).get('kept_in', ''))" \
    "$OUT/run-1.json" 2>/dev/null)
[ -n "$logs" ] && cat "$logs"/*.log | head -c 2000000 > "$OUT/worker-output.txt"
cat "$OUT/deadline.txt"
