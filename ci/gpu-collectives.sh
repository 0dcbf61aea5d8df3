#!/usr/bin/env bash
# Issue #8's GPU figures (run from the repository root on a GPU machine with gfxhound importable; see
# docs/collectives.md): a virtual-rank campaign over every pattern with negative controls, the planted bugs of
# the collective family (a barrier whose waits do nothing; lost signals, bounded and unbounded), and, where two
# or more GPUs are present, the same patterns with one process per GPU (symmetric memory and IPC heaps).
set -u
OUT=${OUT:-/tmp/gfxhound-collectives}
mkdir -p "$OUT"
python -m gfxhound fuzz --family collectives --backend device --budget 700 --controls 0.2 --seed 11 \
    --corpus "$OUT/corpus" --timeout 60 --json --quiet > "$OUT/campaign.json" 2> "$OUT/campaign.err"; echo "campaign rc=$?"
for plant in missing-collective-barrier lost-signal; do
    python -m gfxhound fuzz --plant $plant --backend device --budget 30 --corpus "$OUT/planted" --timeout 60 \
        --json --quiet > "$OUT/$plant.json" 2> "$OUT/$plant.err"; echo "$plant rc=$?"
done
# a spin that never ends: each launch is killed at --timeout, the worker replaced, a known-good kernel run
python -m gfxhound fuzz --plant lost-signal-hang --backend device --budget 2 --corpus "$OUT/planted" --timeout 25 \
    --json --quiet > "$OUT/lost-signal-hang.json" 2> "$OUT/lost-signal-hang.err"; echo "lost-signal-hang rc=$?"
gpus=$(python -c "import torch; print(torch.cuda.device_count())")
if [ "$gpus" -ge 2 ]; then
    for heap in symm ipc; do
        python -m torch.distributed.run --nproc-per-node "$gpus" -m gfxhound.oracle.distributed --kernels 150 \
            --seed 1 --controls 0.1 --heap $heap --json "$OUT/distributed-$heap.json" > /dev/null \
            2> "$OUT/distributed-$heap.err"; echo "distributed $heap rc=$?"
    done
fi
python - "$OUT" <<'PY'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
for path in sorted(out.glob("*.json")):
    d = json.loads(path.read_text())
    if "tally" in d:
        print(path.stem, d["tally"], f'{d["seconds"]} s')
        continue
    controls = {k: v["kernels"] for k, v in d["coverage"].items() if k.startswith("check:control")}
    print(path.stem, d["kernels"], "kernels", d["verdicts"], f'{d["duration_s"]} s', d.get("planted") or "",
          controls or "", [(f["verdict"], f["normalised"][:120]) for f in d["findings"]])
PY
