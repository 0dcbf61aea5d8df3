"""Where does a device launch spend its time?

Prepares N generated kernels the way a device campaign does (reference + warm-up compile in a separate process,
sharing one Triton cache), then launches them all in one warm GPU process the way the GPU worker does: the first
launch warms the process up, every later one is timed and profiled. Prints what each launch added to the cache
(nothing, if the compile side did its job), the launch times, and the functions the launches spent their time in.
Needs a GPU: `python -P bench/launch_probe.py [N]`.
"""
import cProfile
import io
import itertools
import json
import os
import pickle
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def prepare(task_path):
    from gfxhound.oracle import run_task
    task = json.loads(Path(task_path).read_text())
    start = time.perf_counter()
    out = run_task.prepare_device(task)
    Path(task["task_dir"], "expected.pkl").write_bytes(pickle.dumps(out.pop("expected", None)))
    print(json.dumps({"status": out["status"], "prepare_s": time.perf_counter() - start}))


def launch_all(task_paths):
    from gfxhound.oracle import run_task
    tasks = []
    for path in task_paths:
        task = json.loads(Path(path).read_text())
        task["expected"] = pickle.loads(Path(task["task_dir"], "expected.pkl").read_bytes())
        tasks.append(task)
    run_task.launch_device(tasks[0])  # CUDA context, imports: paid once per worker
    profile = cProfile.Profile()
    for task in tasks[1:]:
        start = time.perf_counter()
        profile.enable()
        out = run_task.launch_device(task)
        profile.disable()
        print(json.dumps({"status": out["status"], "launch_s": time.perf_counter() - start,
                          "first_run_s": out.get("first_run_s")}))
    text = io.StringIO()
    pstats.Stats(profile, stream=text).sort_stats("cumulative").print_stats(30)
    print(text.getvalue())


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "prepare":
        return prepare(sys.argv[2])
    if len(sys.argv) > 2 and sys.argv[1] == "launch":
        return launch_all(sys.argv[2:])
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    from gfxhound.fuzz.capabilities import Capabilities, assume_all
    from gfxhound.fuzz.generate import spec_stream
    caps = assume_all("cuda:90").to_json()
    caps.update(knobs={}, env_knobs={})
    caps["features"] = [f for f in caps["features"] if not f.startswith("math:")]
    caps = Capabilities.from_json(caps)
    root = Path(tempfile.mkdtemp())
    cache = root / "cache"
    env = dict(os.environ, TRITON_CACHE_DIR=str(cache))
    paths = []
    for i, spec in enumerate(itertools.islice(spec_stream(caps, 9), count)):
        d = root / f"t{i}"
        d.mkdir()
        task = {"spec": spec.to_json(), "caps": caps.to_json(), "arch": "cuda:90", "task_dir": str(d),
                "stderr_path": str(d / "err"), "backend": "device", "device_kind": "cuda"}
        (d / "task.json").write_text(json.dumps(task))
        out = subprocess.run([sys.executable, __file__, "prepare", str(d / "task.json")], env=env,
                             capture_output=True, text=True)
        print("prepare", out.stdout.strip()[-200:], out.stderr[-200:])
        if '"ok"' in out.stdout:
            paths.append(str(d / "task.json"))
    before = {p for p in cache.rglob("*")}
    out = subprocess.run([sys.executable, __file__, "launch", *paths], env=env, capture_output=True, text=True)
    print(out.stdout[-6000:], out.stderr[-1500:])
    print("cache files added by the launches:", sorted(str(p.name) for p in set(cache.rglob("*")) - before))


if __name__ == "__main__":
    main()
