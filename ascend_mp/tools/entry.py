"""Console-script entry points: Ctrl-C while a tool is still importing exits quietly with 130.

A tool's `main` handles Ctrl-C itself (`ascend_mp.tools.cli`), but importing it (xDSL, numpy) takes
a few tenths of a second in which a KeyboardInterrupt would print a traceback. The entry points
import the tool under a SIGINT handler that ends the process with status 130 and nothing printed,
then restore Python's handler and call the tool.
"""

from __future__ import annotations

import importlib
import signal
from types import FrameType

EXIT_INTERRUPTED = 130


def _interrupted(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(EXIT_INTERRUPTED)


def launch(module: str) -> None:
    """Import `module` with Ctrl-C ending the process quietly, then run its `main()`."""
    try:
        previous = signal.signal(signal.SIGINT, _interrupted)
    except ValueError:  # not the main thread: nothing to guard
        previous = None
    try:
        main = importlib.import_module(module).main
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    main()


def ascend_opt() -> None:
    launch("ascend_mp.tools.ascend_opt")


def ascend_run() -> None:
    launch("ascend_mp.tools.ascend_run")


def ascend_train() -> None:
    launch("ascend_mp.tools.ascend_train")


def ascend_eval() -> None:
    launch("ascend_mp.tools.ascend_eval")


def ascend_tune() -> None:
    launch("ascend_mp.tools.ascend_tune")
