"""A flaky probe for tests: runs llc, but every third run (a counter file keeps count) pretends it passed."""
import subprocess
import sys
from pathlib import Path

counter, llc, *args = sys.argv[1:]
count = int(Path(counter).read_text()) + 1 if Path(counter).exists() else 1
Path(counter).write_text(str(count))
if count % 3 == 0:
    print("ok (flaky)")
    sys.exit(0)
proc = subprocess.run([llc, *args], capture_output=True, text=True, timeout=60)
sys.stdout.write(proc.stdout + proc.stderr)
sys.exit(proc.returncode)
