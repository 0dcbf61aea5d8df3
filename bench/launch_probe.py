"""Where does a device launch spend its time? Prepare (warm-up compile) one kernel in one process, launch it in a
fresh one sharing the cache, and report the first-launch time and what the launch added to the cache."""
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def stage(which, task_path):
    task = json.loads(Path(task_path).read_text())
    from gfxhound.oracle import run_task
    t = time.perf_counter()
    if which == "prepare":
        out = run_task.prepare_device(task)
        import pickle
        Path(task["task_dir"], "expected.pkl").write_bytes(pickle.dumps(out.pop("expected", None)))
    else:
        import pickle
        task["expected"] = pickle.loads(Path(task["task_dir"], "expected.pkl").read_bytes())
        import triton.runtime.jit  # noqa: F401
        t = time.perf_counter()
        out = run_task.launch_device(task)
    print(json.dumps({"stage": which, "status": out["status"], "wall": time.perf_counter() - t,
                      "first_run_s": out.get("first_run_s"), "text": out.get("text", "")[-300:]}))


def main():
    if len(sys.argv) > 2:
        return stage(sys.argv[1], sys.argv[2])
    import itertools
    from gfxhound.fuzz.capabilities import Capabilities, assume_all
    from gfxhound.fuzz.generate import spec_stream
    caps = assume_all("cuda:90").to_json()
    caps.update(knobs={}, env_knobs={})
    caps["features"] = [f for f in caps["features"] if not f.startswith("math:")]
    caps = Capabilities.from_json(caps)
    root = Path(tempfile.mkdtemp())
    cache = root / "cache"
    env = dict(os.environ, TRITON_CACHE_DIR=str(cache))
    for i, spec in enumerate(itertools.islice(spec_stream(caps, 9), 4)):
        d = root / f"t{i}"
        d.mkdir()
        task = {"spec": spec.to_json(), "caps": caps.to_json(), "arch": "cuda:90", "task_dir": str(d),
                "stderr_path": str(d / "err"), "backend": "device", "device_kind": "cuda"}
        (d / "task.json").write_text(json.dumps(task))
        for which in ("prepare", "launch"):
            before = set(p.name for p in cache.glob("*")) if cache.exists() else set()
            out = subprocess.run([sys.executable, __file__, which, str(d / "task.json")], env=env,
                                 capture_output=True, text=True)
            after = set(p.name for p in cache.glob("*"))
            added = sorted(f.name for n in after - before for f in (cache / n).iterdir())
            print(which, out.stdout.strip()[-400:], "| cache entries added:", added, out.stderr[-300:])


if __name__ == "__main__":
    main()
