"""Console-script entry points (ascend_mp/tools/entry.py): Ctrl-C during a tool's imports."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def test_ctrl_c_while_a_tool_imports_exits_130_quietly(tmp_path: Path) -> None:
    """A SIGINT arriving while the tool module is imported: status 130, nothing printed (no traceback)."""
    (tmp_path / "slow_tool.py").write_text(
        "import os, signal\nos.kill(os.getpid(), signal.SIGINT)\nimport time\ntime.sleep(5)\n"
        "def main():\n    print('ran')\n"
    )
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    proc = subprocess.run(
        [sys.executable, "-c", "from ascend_mp.tools.entry import launch; launch('slow_tool')"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (130, "", "")


def test_the_tool_runs_with_pythons_sigint_handler_restored(tmp_path: Path) -> None:
    (tmp_path / "quick_tool.py").write_text(
        "import signal\ndef main():\n    print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)\n"
    )
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    proc = subprocess.run(
        [sys.executable, "-c", "from ascend_mp.tools.entry import launch; launch('quick_tool')"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert (proc.returncode, proc.stdout.strip()) == (0, "True"), proc.stderr


@pytest.mark.parametrize("tool", ["ascend-opt", "ascend-run", "ascend-train"])
def test_console_scripts_go_through_the_entry_module(tool: str) -> None:
    from importlib.metadata import entry_points

    (script,) = [e for e in entry_points(group="console_scripts") if e.name == tool]
    assert script.value.startswith("ascend_mp.tools.entry:")
