"""The optional packages: which extra of `pip install 'ascend-mp[...]'` brings each, and one way to ask for them.

A missing optional package is never a traceback: what needs it either does without (a progress bar) or stops with
one line naming the extra to install (`needs matplotlib (not installed): pip install 'ascend-mp[plot]'`).
The extras are declared in pyproject.toml and listed in docs/usage/install.md.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from ascend_mp.errors import AscendError

EXTRA_OF = {
    # importable module: (distribution, the smallest extra that brings it)
    "tqdm": ("tqdm", "train"),
    "matplotlib": ("matplotlib", "plot"),
    "onnx": ("onnx", "onnx"),
    "iree.compiler": ("iree-base-compiler", "iree"),
    "iree.runtime": ("iree-base-runtime", "iree"),
}


def install_hint(module: str) -> str:
    """`pip install 'ascend-mp[<extra>]'` for the extra that brings `module`."""
    return f"pip install 'ascend-mp[{EXTRA_OF[module][1]}]'"


def missing_message(module: str, purpose: str) -> str:
    """`<purpose> needs <package>, which is not installed: pip install 'ascend-mp[<extra>]'`."""
    return f"{purpose} needs {EXTRA_OF[module][0]}, which is not installed: {install_hint(module)}"


def available(module: str) -> bool:
    """Whether `module` imports."""
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


def require(module: str, purpose: str) -> ModuleType:
    """`module` imported, or an AscendError saying which extra brings it (`purpose`: what needs it)."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise AscendError(missing_message(module, purpose)) from None
