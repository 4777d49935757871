"""What every command-line tool of ascend-mp does around its work: one exit-code convention,
one-line errors, outputs committed together only on success.

Exit status: 0 success; 1 any error in the input, the files or the run (`<tool>: error: <message>`,
one line); 2 a command-line usage error (unknown flag, bad flag value, conflicting flags; one line,
no usage block); 130 interrupted by Ctrl-C (SIGINT; nothing printed); 128+N ended by signal N
(143 for SIGTERM, 129 for SIGHUP), after removing temporary files.
Every output a run writes through `ascend_mp.fileio.write_output` is committed when the run
succeeds and dropped otherwise (temporary files are removed on every exit path that runs code).

    def main(argv=None):
        run_tool("ascend-foo", lambda: run(argv))
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import signal
import sys
import typing
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from ascend_mp.errors import AscendError
from ascend_mp.fileio import deferred_outputs

EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class UsageError(AscendError):
    """A command-line usage error (exit status 2)."""


class UsageParser(argparse.ArgumentParser):
    """argparse whose errors are one-line `UsageError`s instead of a usage block and exit 2; every tool's
    parser has `--version` (`version_text`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.add_argument("--version", action=_Version, help="print the version of the tool and of xDSL, and exit")

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def version_text(prog: str) -> str:
    """`<prog> (ascend-mp <version>) built on xdsl <version>`: what `--version` prints, in every tool."""
    from importlib.metadata import PackageNotFoundError, version

    def of(dist: str) -> str:
        try:
            return version(dist)
        except PackageNotFoundError:  # a checkout on sys.path, not installed
            return "(not installed)"

    return f"{prog} (ascend-mp {of('ascend-mp')}) built on xdsl {of('xdsl')}"


class _Version(argparse.Action):
    """`--version`: print `version_text` and exit 0."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: Any, values: Any, option_string: Any = None) -> None:
        print(version_text(parser.prog))
        parser.exit()


INPUT_FORMATS = ("mlir", "onnx")
"""What `-f/--frontend` takes in every tool that reads a model (ascend-opt's are xDSL's frontends: the same)."""


def add_format_argument(parser: argparse.ArgumentParser) -> None:
    """`-f/--frontend mlir|onnx`, as ascend-opt's (xdsl-opt's) flag: the input's format."""
    parser.add_argument(
        "-f",
        "--frontend",
        choices=INPUT_FORMATS,
        help="the input's format (default: onnx for a .onnx file or a file that reads as an ONNX model, else mlir)",
    )


def printable(text: str) -> str:
    """`text` with invisible characters (NUL, BOM, controls, line/paragraph separators) escaped,
    so a message stays one visible line."""
    if text.isprintable():
        return text
    out = []
    for c in text:
        if c.isprintable() or c == " ":
            out.append(c)
        elif ord(c) < 0x100:
            out.append(f"\\x{ord(c):02x}")
        elif ord(c) < 0x10000:
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(f"\\U{ord(c):08x}")
    return "".join(out)


def one_line(message: object) -> str:
    """A message as one printable line."""
    return printable(" ".join(str(message).split()))


def fail(prog: str, message: object, status: int = EXIT_ERROR) -> NoReturn:
    """Print `<prog>: error: <message>` (one line) and exit with `status`."""
    flush_warnings(prog)
    print(f"{prog}: error: {one_line(message)}", file=sys.stderr)
    sys.exit(status)


def warn(prog: str, message: object) -> None:
    """Print `<prog>: warning: <message>` (one line)."""
    print(f"{prog}: warning: {one_line(message)}", file=sys.stderr)


def _terminate(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


def run_tool(prog: str, body: Callable[[], None], extra: Callable[[BaseException], str | None] | None = None) -> None:
    """Run a tool's `body` with the exit-code convention of this module.

    `extra(e)` may turn other exception types into a one-line message (None: not handled).
    Returns normally on success (exit status 0)."""
    previous: dict[int, Any] = {}
    for signum in (signal.SIGTERM, signal.SIGHUP):  # so finally clauses remove temporary files
        try:
            previous[signum] = signal.signal(signum, _terminate)
        except (ValueError, OSError, AttributeError):  # not the main thread, or no such signal here
            pass
    try:
        with deferred_outputs():
            body()
    except UsageError as e:
        fail(prog, e, EXIT_USAGE)
    except AscendError as e:
        fail(prog, e)
    except KeyboardInterrupt:
        sys.stderr.flush()
        sys.exit(EXIT_INTERRUPTED)
    except BrokenPipeError:
        _quiet_stdout()
        sys.exit(EXIT_ERROR)
    except RecursionError:
        fail(prog, "input nested too deeply (Python's recursion limit was reached)")
    except MemoryError:
        fail(prog, "out of memory")
    except Exception as e:
        message = extra(e) if extra is not None else None
        if message is None:
            raise
        fail(prog, message)
    finally:
        flush_warnings(prog)
        teardown_logging()
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _quiet_stdout() -> None:
    """After a closed pipe on stdout: point it at /dev/null so the interpreter's final flush is silent."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


# --------------------------------------------------------------------------------------
# Parsing module text (both tools)
# --------------------------------------------------------------------------------------


def parse_text(
    ctx: Any, text: str, name: str, line_offset: int = 0, implicit_module: bool = True, raw_parse_errors: bool = False
) -> Any:
    """`ir.LocatingParser` on `text`, with xDSL's internal assertions (real literals for a complex tensor
    trip one) turned into a one-line error at the op being parsed. A `ParseError` becomes a one-line
    AscendError too, unless `raw_parse_errors` (the opt driver reports them itself: --parsing-diagnostics)."""
    from xdsl.utils.exceptions import ParseError

    from ascend_mp.ir import _LOCATIONS, LocatingParser, format_parse_error, source_location
    from ascend_mp.ir.fast import current_token

    class Tracking(LocatingParser):
        """Remembers where each op being parsed starts (innermost last)."""

        opened: list[Any]

        def parse_operation(self) -> Any:
            self.opened.append(current_token(self).span)
            op = super().parse_operation()
            self.opened.pop()
            return op

    try:
        parser = Tracking(ctx, text, name)
        parser.opened = []
        parser.line_offset = line_offset
        module = parser.parse_module(implicit_module)
    except ParseError as e:
        if raw_parse_errors:
            raise
        raise AscendError(format_parse_error(e, line_offset)) from None
    except AssertionError:
        where = parser.opened[-1].get_location() if parser.opened else current_token(parser).span.get_location()
        raise AscendError(
            f"{where.file}:{where.line + line_offset}:{where.col}: invalid literal for its type "
            f"(e.g. real numbers for a complex tensor; write complex elements as (re, im))"
        ) from None
    if source_location(module) is None:  # an implicit module is the whole file: errors about it point at 1:1
        _LOCATIONS[module] = (name, 0, line_offset)
    return module


# --------------------------------------------------------------------------------------
# Logging (--log, as ATC's)
# --------------------------------------------------------------------------------------

LOG_LEVELS = ("debug", "info", "warning", "error", "null")


class _OneLineFormatter(logging.Formatter):
    """`<prog>: <level>: <message>` (`<prog>: <message>` without `level`) on one printable line."""

    def __init__(self, prog: str, level: bool = True):
        super().__init__()
        self.prog = prog
        self.level = level

    def format(self, record: logging.LogRecord) -> str:
        level = f"{record.levelname.lower()}: " if self.level else ""
        return f"{self.prog}: {level}{one_line(record.getMessage())}"


def add_log_argument(parser: argparse.ArgumentParser) -> None:
    """`--log=debug|info|warning|error|null` (ATC's flag; default warning)."""
    parser.add_argument(
        "--log",
        choices=LOG_LEVELS,
        default="warning",
        help="messages to print: debug, info (e.g. every 'Reduce precision' decision), "
        "warning (default), error, or null",
    )


SHOWN_PER_KIND = 5
"""Warnings of one kind (the same message but for quoted names and numbers) printed before the rest are
summarised in one line at the end of the run."""


class _Summarise(logging.Filter):
    """Let through the first SHOWN_PER_KIND warnings of each kind; count the others."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: dict[str, int] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, _SHOWN, False):  # printed already, as a progress line
            return False
        if record.levelno != logging.WARNING:
            return True
        kind = _KIND.sub("_", record.getMessage())
        self.seen[kind] = self.seen.get(kind, 0) + 1
        return self.seen[kind] <= SHOWN_PER_KIND

    def hidden(self) -> int:
        return sum(max(0, n - SHOWN_PER_KIND) for n in self.seen.values())


_KIND = re.compile(r"'[^']*'|\"[^\"]*\"|\d+")
_handler: logging.Handler | None = None
_summary: _Summarise | None = None
_saved: tuple[int, bool] | None = None  # the logger's level and propagate flag before setup_logging


def setup_logging(prog: str, level: str) -> None:
    """Print the `ascend_mp` logger's messages at `level` and above as `<prog>: <level>: ...` lines
    (at most SHOWN_PER_KIND warnings of a kind; `flush_warnings` prints how many more there were)."""
    global _handler, _summary, _saved
    log = logging.getLogger("ascend_mp")
    if _handler is not None:
        log.removeHandler(_handler)
    if _saved is None:
        _saved = (log.level, log.propagate)
    _handler = logging.StreamHandler(sys.stderr)
    _handler.setFormatter(_OneLineFormatter(prog))
    _summary = _Summarise()
    _handler.addFilter(_summary)
    log.addHandler(_handler)
    log.propagate = False
    numeric = logging.CRITICAL + 1 if level == "null" else getattr(logging, level.upper())
    log.setLevel(numeric)
    _handler.setLevel(numeric)  # also for the records of a child logger set lower (`progress_lines`)


_SHOWN = "ascend_mp_progress_line"
"""The attribute `progress_lines` sets on the records it printed (the `--log` handler then leaves them out)."""


def progress_lines(prog: str, logger: str) -> logging.Handler:
    """Print the INFO records of `logger` (e.g. one line per training epoch) as `<prog>: <message>` progress lines
    on standard error, whatever `--log` says: they are the run's progress, not log messages (`--quiet` is the tool's
    way to drop them). Undo with `end_progress_lines`."""

    def mark(record: logging.LogRecord) -> bool:
        if record.levelno != logging.INFO:
            return False
        setattr(record, _SHOWN, True)
        return True

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLineFormatter(prog, level=False))
    handler.addFilter(mark)
    log = logging.getLogger(logger)
    handler.ascend_mp_saved_level = log.level  # pyright: ignore[reportAttributeAccessIssue]  # restored by end_progress_lines
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    return handler


def end_progress_lines(logger: str, handler: logging.Handler) -> None:
    """Undo `progress_lines`."""
    log = logging.getLogger(logger)
    log.removeHandler(handler)
    log.setLevel(getattr(handler, "ascend_mp_saved_level", logging.NOTSET))


def teardown_logging() -> None:
    """Undo `setup_logging` (the tools run in-process too: tests, notebooks)."""
    global _handler, _saved
    log = logging.getLogger("ascend_mp")
    if _handler is not None:
        log.removeHandler(_handler)
        _handler = None
    if _saved is not None:
        log.setLevel(_saved[0])
        log.propagate = _saved[1]
        _saved = None


def flush_warnings(prog: str) -> None:
    """One line saying how many warnings `setup_logging`'s handler left out (if any)."""
    global _summary
    if _summary is not None and _summary.hidden():
        print(f"{prog}: warning: {_summary.hidden()} more warnings like the ones above not shown", file=sys.stderr)
    _summary = None


# --------------------------------------------------------------------------------------
# Pass pipelines (-p): options checked and coerced before xDSL builds the passes
# --------------------------------------------------------------------------------------


def _accepts(value: Any, hint: Any) -> bool:
    from xdsl.utils.arg_spec import _convert_arg_to_type

    try:
        _convert_arg_to_type(value, hint)
    except ValueError:
        return False
    return True


def _type_name(hint: Any) -> str:
    text = getattr(hint, "__name__", None) if not typing.get_args(hint) else None
    return text or str(hint).replace("typing.", "")


def coerce_pass_options(available: dict[str, Callable[[], Any]], pipeline: str) -> str:
    """Check every pass and option of a `-p` pipeline; return it with integers given for float
    options turned into floats (`scale=1024`). Problems are `UsageError`s naming the pass and option."""
    import dataclasses

    from xdsl.utils.arg_spec import parse_pipeline
    from xdsl.utils.exceptions import ArgSpecParseError

    if not pipeline:
        return pipeline
    try:
        specs = list(parse_pipeline(pipeline))
    except ArgSpecParseError as e:
        raise UsageError(f"invalid pass pipeline '{pipeline}': {' '.join(str(e).split())}") from None
    changed = False
    for spec in specs:
        if spec.name not in available:
            raise UsageError(f"unknown pass '{spec.name}' in -p (--list-passes all lists them)")
        cls = available[spec.name]()
        hints = typing.get_type_hints(cls)
        fields = {f.name: f for f in dataclasses.fields(cls) if f.init and f.name != "name"}
        for raw_name, value in list(spec.parameters.items()):
            name = raw_name.replace("-", "_")
            if name not in fields:
                options = ", ".join(f.replace("_", "-") for f in fields) or "none"
                raise UsageError(f"pass '{spec.name}' has no option '{raw_name}' (options: {options})")
            hint = hints[name]
            if _accepts(value, hint):
                continue
            as_float = tuple(float(v) if isinstance(v, int) and not isinstance(v, bool) else v for v in value)
            if any(type(a) is not type(b) for a, b in zip(as_float, value)):  # 1 == 1.0: compare the types
                if _accepts(as_float, hint):
                    spec.parameters[raw_name] = as_float
                    changed = True
                    continue
            shown = ",".join(str(v).lower() if isinstance(v, bool) else str(v) for v in value) or "(no value)"
            raise UsageError(f"pass '{spec.name}' option '{raw_name}': expected {_type_name(hint)}, got {shown}")
    return ",".join(str(s) for s in specs) if changed else pipeline
