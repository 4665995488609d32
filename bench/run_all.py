"""make bench: run every bench/bench_*.py in its own process; each prints its figures and
writes bench/results/<name>.json. A summary of all figures is printed at the end."""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent


def main() -> int:
    failed = []
    for script in sorted(BENCH.glob("bench_*.py")):
        print(f"== {script.name}", flush=True)
        t0 = time.monotonic()
        rc = subprocess.call([sys.executable, str(script)], cwd=BENCH.parent)
        print(f"   ({time.monotonic() - t0:.1f} s, exit {rc})", flush=True)
        if rc != 0:
            failed.append(script.name)
    print("\n== figures (bench/results/*.json)")
    for f in sorted((BENCH / "results").glob("*.json")):
        for k, v in json.loads(f.read_text()).items():
            print(f"{f.stem:22s} {k:44s} {v}")
    if failed:
        print(f"\nfailed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
