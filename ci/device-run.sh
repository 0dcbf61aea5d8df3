#!/usr/bin/env bash
# Run one gfxhound command with a hard deadline; if it is still running then, every process of it (the CLI and its
# workers, one process group) prints its Python stacks (gfxhound/stacks.py) before being killed: into
# $GFXHOUND_STACKS_DIR/<pid>.txt when that is set, else into ERR_FILE.
# Usage: ci/device-run.sh DEADLINE_S OUT_FILE ERR_FILE gfxhound-arguments...
deadline=$1 out=$2 err=$3
shift 3
setsid python -m gfxhound "$@" > "$out" 2> "$err" &
pid=$!
for _ in $(seq "$deadline"); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
if kill -0 "$pid" 2>/dev/null; then
    echo "still running after ${deadline}s: stacks in ${GFXHOUND_STACKS_DIR:-$err}" >&2
    kill -s USR1 -- "-$pid"; sleep 5; kill -s KILL -- "-$pid"
    wait "$pid"
    exit 124
fi
wait "$pid"
