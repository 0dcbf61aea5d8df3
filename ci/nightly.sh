#!/usr/bin/env bash
# The nightly run on one machine (run from the repository root, after `make setup`). Every setting has an
# environment variable; outputs go to $OUT/<date>/ (night.json, junit.xml, summary.html, drafts/) and the trend to
# $OUT/history.json; new findings merge into $CORPUS.
#   TARGETS=gfx942,gfx950 BUDGET=2h SHARDS=4 PREVIOUS_TRITON=3.8.0 ci/nightly.sh
set -euo pipefail
GFXHOUND=${GFXHOUND:-.venv/bin/gfxhound}
args=(nightly --targets "${TARGETS:-gfx942,gfx950}" --budget "${BUDGET:-1h}" --shards "${SHARDS:-1}"
      --backend "${BACKEND:-compile}" --out "${OUT:-nightly}" --corpus "${CORPUS:-corpus}"
      --reproductions "${REPRODUCTIONS:-3}" --reduce-seconds "${REDUCE_SECONDS:-600}")
[ -n "${WORKERS:-}" ] && args+=(--workers "$WORKERS")
[ -n "${PREVIOUS_TRITON:-}" ] && args+=(--previous-triton "$PREVIOUS_TRITON")
[ -n "${PREVIOUS_PYTHON:-}" ] && args+=(--previous-python "$PREVIOUS_PYTHON" --perf-set "${PERF_SET:-corpus/perfset}")
exec "$GFXHOUND" "${args[@]}"
