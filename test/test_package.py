"""The installed package is self-contained: the examples and the digits
data are package data, so `python -m ascend_mp.demo` works from an installed wheel, without
scikit-learn."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_train_extra_needs_no_scikit_learn() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    for name in ("train", "test"):
        assert not any(dep.lower().startswith(("scikit-learn", "sklearn", "scipy")) for dep in extras[name]), name


def test_demo_runs_from_the_installed_layout(tmp_path: Path) -> None:
    """`build_py` lays the packages and their data out as a wheel installs them; the demo then
    runs from there (not from the checkout), with scikit-learn made unimportable."""
    lib = tmp_path / "lib"
    subprocess.run(
        [sys.executable, "-c", "import setuptools; setuptools.setup()", "-q", "build_py", "-d", str(lib)],
        cwd=ROOT, check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    assert (lib / "ascend_mp" / "train" / "digits.npz").is_file()
    assert (lib / "ascend_mp" / "examples" / "mlp.mlir").is_file()
    blocker = tmp_path / "block"
    blocker.mkdir()
    (blocker / "sklearn.py").write_text("raise ImportError('scikit-learn must not be needed')\n")
    env = os.environ | {"PYTHONPATH": os.pathsep.join([str(lib), str(blocker)])}
    probe = "import ascend_mp, ascend_mp.demo as d; print(ascend_mp.__file__); print(d.EXAMPLES)"
    where = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, env=env, check=True, capture_output=True, text=True, timeout=60
    )
    assert where.stdout.splitlines() == [str(lib / "ascend_mp" / "__init__.py"), str(lib / "ascend_mp" / "examples")]
    demo = subprocess.run(
        [sys.executable, "-m", "ascend_mp.demo", "--epochs", "1"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert demo.returncode == 0, demo.stderr
    assert "// ===== mlp.mlir: operator capabilities" in demo.stdout
    assert "after ascend-precision{mode=allow_mix_precision}" in demo.stdout
    assert "test accuracy: fp32" in demo.stdout
