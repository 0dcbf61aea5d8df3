"""Run and judge: compile (and later execute) a spec, and decide its verdict."""
