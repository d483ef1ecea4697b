"""What the fleet ctests share: one keyplace-fleet run whose JSON is on stdout, and the check that a
process it started is gone."""
import json
import os
import subprocess
import sys


def run_json(args):
    """Runs keyplace-fleet ARGS (with --json -): (document, stderr). Exits 77 (ctest: skipped) when
    keyplace-fleet does, and fails the test on any other non-zero status."""
    run = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if run.returncode == 77:
        print("SKIP: " + run.stderr.strip())
        sys.exit(77)
    if run.returncode != 0:
        sys.exit(f"keyplace-fleet failed with status {run.returncode}: {run.stderr.strip()}")
    return json.loads(run.stdout), run.stderr


def check_gone(pid, what, failures):
    """Adds a failure when kill(pid, 0) still finds the process."""
    try:
        os.kill(pid, 0)
        failures.append(f"{what} (pid {pid}) is still running")
    except ProcessLookupError:
        pass
