#!/usr/bin/env bash
# The GPU-only checks, for a machine with a GPU and triton + torch installed (run from the repository root).
# Writes every figure under $OUT (default /tmp/gfxhound-gpu): the >= 1000-kernel device campaign, the planted
# bugs, the gpu-marked tests and the device throughput benchmark.
set -u
OUT=${OUT:-/tmp/gfxhound-gpu}
KERNELS=${KERNELS:-1000}
PLANT_RUNS=${PLANT_RUNS:-40}
WORKERS=${WORKERS:-$(( $(nproc) - 1 ))}
mkdir -p "$OUT"
python -m gfxhound fuzz --backend device --budget "$KERNELS" --workers "$WORKERS" --seed "${SEED:-3}" \
    --corpus "$OUT/corpus" --json --quiet > "$OUT/campaign.json" 2> "$OUT/campaign.err"
echo "campaign exit $?"
for plant in drop-mask off-by-one fadd-fsub wrong-acc-dtype missing-barrier; do
    python -m gfxhound fuzz --backend device --plant "$plant" --budget "$PLANT_RUNS" --workers "$WORKERS" \
        --corpus "$OUT/planted" --json --quiet > "$OUT/plant-$plant.json" 2> "$OUT/plant-$plant.err"
    echo "plant $plant exit $?"
done
