#!/usr/bin/env bash
# The nightly run on one machine (run from the repository root, after `make setup`). Every setting has an
# environment variable; outputs go to $OUT/<date>/ (night.json, junit.xml, summary.html, drafts/) and the trend to
# $OUT/history.json; new findings merge into $CORPUS. Both workflows in .github/workflows call it.
#   TARGETS=gfx942,gfx950 BUDGET=2h SHARDS=4 PREVIOUS_TRITON=3.8.0 ci/nightly.sh
# FROM_SHARDS=DIR: no campaign here; every subdirectory of DIR is a shard corpus made by a CI matrix job (each with
# its `gfxhound fuzz --json` summary.json), merged and triaged. NIGHT=YYYY-MM-DD names the night (default: today,
# UTC): a rerun of a night replaces its row in the history instead of adding one.
set -euo pipefail
GFXHOUND=${GFXHOUND:-.venv/bin/gfxhound}
args=(nightly --targets "${TARGETS:-gfx942,gfx950}" --budget "${BUDGET:-1h}" --shards "${SHARDS:-1}"
      --backend "${BACKEND:-compile}" --out "${OUT:-nightly}" --corpus "${CORPUS:-corpus}"
      --reproductions "${REPRODUCTIONS:-3}" --reduce-seconds "${REDUCE_SECONDS:-600}")
if [ -n "${FROM_SHARDS:-}" ]; then
  shards=()
  for dir in "$FROM_SHARDS"/*/; do
    [ -d "$dir" ] && shards+=("${dir%/}")
  done
  if [ ${#shards[@]} -eq 0 ]; then
    echo "nightly.sh: no shard corpora under $FROM_SHARDS/ (did every shard job fail?)" >&2
    exit 1
  fi
  args+=(--from-shards "${shards[@]}")
fi
[ -n "${NIGHT:-}" ] && args+=(--date "$NIGHT")
[ -n "${WORKERS:-}" ] && args+=(--workers "$WORKERS")
[ -n "${STAGE_TIMEOUT:-}" ] && args+=(--stage-timeout "$STAGE_TIMEOUT")
[ -n "${PREVIOUS_TRITON:-}" ] && args+=(--previous-triton "$PREVIOUS_TRITON")
[ -n "${PREVIOUS_PYTHON:-}" ] && args+=(--previous-python "$PREVIOUS_PYTHON" --perf-set "${PERF_SET:-corpus/perfset}")
exec "$GFXHOUND" "${args[@]}"
