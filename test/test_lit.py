"""Runs the lit/FileCheck suite (test/filecheck) so that `pytest` runs every test."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

SUITE = Path(__file__).parent / "filecheck"


def test_lit_suite() -> None:
    lit = shutil.which("lit", path=os.path.dirname(sys.executable)) or shutil.which("lit")
    assert lit, "lit is not installed (pip install -e '.[test]')"
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    proc = subprocess.run([lit, "-q", "-j", str(os.cpu_count() or 2), str(SUITE)], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
