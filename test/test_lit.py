"""Runs the lit/FileCheck suite (test/filecheck) inside pytest, in this process.

Each `// RUN:` line of each test file is a pipeline of ascend-opt, ascend-run, xdsl-opt and filecheck, with
`not`, `env VAR=value`, `2>&1`, `2>/dev/null` and `>/dev/null`. Those run in-process (the tools' `main(argv)`, filecheck's
`main`), which saves a Python start per command (most of the suite's time); the substitutions come from
test/filecheck/lit.cfg and lit's own (%s, %S). A line using anything else (another command, a file
redirection, `;`, `&&`) runs in a real shell, as lit would run it. lit semantics kept: pipefail, `not`
inverts one command's status. `make lit` runs the same suite with the real lit and console scripts.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

SUITE = Path(__file__).parent / "filecheck"
BIN = Path(sys.executable).parent
TOOLS = {
    "ascend-opt": "ascend_mp.tools.ascend_opt",
    "ascend-run": "ascend_mp.tools.ascend_run",
    "ascend-train": "ascend_mp.tools.ascend_train",
    "filecheck": "filecheck.main",
    "xdsl-opt": "xdsl.xdsl_opt_main",
}
REDIRECTS = {"2>&1", "2>/dev/null", ">/dev/null", "1>/dev/null"}


def _config_substitutions() -> list[tuple[str, str]]:
    """The substitutions lit.cfg adds (run with a stand-in for lit's config object)."""
    config = types.SimpleNamespace(substitutions=[], environment={}, suffixes=[], excludes=[])
    exec(
        compile((SUITE / "lit.cfg").read_text(), str(SUITE / "lit.cfg"), "exec"),
        {"config": config, "__file__": str(SUITE / "lit.cfg")},
    )
    return list(config.substitutions)


CONFIG_SUBSTITUTIONS = _config_substitutions()
TEST_FILES = sorted(p for p in SUITE.rglob("*.mlir") if not {"Inputs", "Output"} & set(p.relative_to(SUITE).parts))


def run_lines(path: Path) -> list[str]:
    """The RUN commands of a test file (a trailing backslash continues a command), substituted."""
    commands: list[str] = []
    pending = ""
    for line in path.read_text().splitlines():
        found = re.search(r"RUN:(.*)$", line)
        if not found:
            continue
        text = found.group(1).strip()
        if text.endswith("\\"):
            pending += text[:-1] + " "
            continue
        commands.append(substitute(pending + text, path))
        pending = ""
    return commands


def substitute(command: str, path: Path) -> str:
    for key, value in CONFIG_SUBSTITUTIONS:
        command = command.replace(key, value)
    return command.replace("%S", str(path.parent)).replace("%s", str(path))


@dataclass
class Stage:
    argv: list[str]
    negate: bool = False
    redirects: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)


def parse_pipeline(command: str) -> list[Stage] | None:
    """The stages of a pipeline this runner can run in-process; None if it needs a real shell."""
    try:
        tokens = shlex.split(command)
    except ValueError:
        return None
    stages: list[Stage] = []
    current: list[str] = []
    for token in [*tokens, "|"]:
        if token != "|":
            current.append(token)
            continue
        negate = False
        while current and current[0] == "not":
            negate, current = not negate, current[1:]
        env: dict[str, str] = {}
        if current and current[0] == "env":
            current = current[1:]
            while current and re.match(r"^[A-Za-z_]\w*=", current[0]):
                name, _, value = current[0].partition("=")
                env[name], current = value, current[1:]
        argv = [t for t in current if t not in REDIRECTS]
        if not argv or argv[0] not in TOOLS or any(re.match(r"^\d?[<>]", t) or t in (";", "&&", "||") for t in argv):
            return None
        stages.append(Stage(argv, negate, [t for t in current if t in REDIRECTS], env))
        current = []
    return stages


def fresh_process_state() -> contextlib.ExitStack:
    """What a new process starts without: the resource blobs (dense_resource) of earlier runs."""
    from ascend_mp.ir import isolated_store

    stack = contextlib.ExitStack()
    stack.enter_context(isolated_store())
    return stack


def call_tool(
    argv: list[str], stdin: bytes, out: io.StringIO, err: io.StringIO, env: dict[str, str] | None = None
) -> int:
    """Run one command in-process (with `env`'s variables set for it); its status as a process would have it."""
    import importlib

    module = importlib.import_module(TOOLS[argv[0]])
    saved_stdin = sys.stdin
    saved_env = {name: os.environ.get(name) for name in env or {}}
    os.environ.update(env or {})
    fresh = fresh_process_state()
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    code: Any = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                if argv[0] == "xdsl-opt":
                    result = module.xDSLOptMain(args=argv[1:]).run()
                else:
                    result = module.main(argv) if argv[0] == "filecheck" else module.main(argv[1:])
                code = result or 0
            except SystemExit as e:
                code = e.code
                if isinstance(code, str):
                    print(code, file=sys.stderr)
                    code = 1
    finally:
        sys.stdin = saved_stdin
        fresh.close()
        for name, value in saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    return 0 if code is None else int(code)


def run_in_process(stages: list[Stage]) -> tuple[bool, str]:
    data = b""
    log: list[str] = []
    ok = True
    for stage in stages:
        out, err = io.StringIO(), io.StringIO()
        merged = "2>&1" in stage.redirects
        stdout_dropped = ">/dev/null" in stage.redirects or "1>/dev/null" in stage.redirects
        if merged and not stdout_dropped:
            err = out  # one stream, in the order it was written
        code = call_tool(stage.argv, data, out, err, stage.env)
        if merged and stdout_dropped:
            data = err.getvalue().encode()
        elif stdout_dropped:
            data = b""
        else:
            data = out.getvalue().encode()
        status_ok = (code != 0) if stage.negate else (code == 0)
        env = "".join(f"env {k}={v} " for k, v in stage.env.items())
        log.append(
            f"$ {'not ' if stage.negate else ''}{env}{shlex.join(stage.argv)} -> exit {code}\n{err.getvalue() if err is not out else ''}"
        )
        ok = ok and status_ok  # pipefail
    return ok, "\n".join(log) + "\n" + data.decode(errors="replace")


def run_in_shell(command: str) -> tuple[bool, str]:
    env = dict(os.environ, PATH=str(BIN) + os.pathsep + os.environ.get("PATH", ""), PYTHONHASHSEED="0")
    proc = subprocess.run(
        ["bash", "-o", "pipefail", "-c", command.replace("not ", "! ", 1) if command.startswith("not ") else command],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    return proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("path", TEST_FILES, ids=[str(p.relative_to(SUITE)) for p in TEST_FILES])
def test_lit_file(path: Path) -> None:
    commands = run_lines(path)
    assert commands, f"{path} has no RUN line"
    for command in commands:
        stages = parse_pipeline(command)
        ok, log = run_in_process(stages) if stages is not None else run_in_shell(command)
        assert ok, f"RUN: {command}\n{log}"


def test_in_process_runner_sees_failures(tmp_path: Path) -> None:
    """The runner itself: a wrong CHECK fails, `not` inverts, pipefail holds, `2>&1` carries errors."""
    src = tmp_path / "t.mlir"
    src.write_text(
        "func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n  func.return %x : tensor<4xf32>\n}\n"
        "// CHECK: func.func @f\n// WRONG: no such line\n// ERR: error: {{.*}}unknown pass\n"
    )

    def run(command: str) -> bool:
        stages = parse_pipeline(substitute(command, src))
        assert stages is not None
        return run_in_process(stages)[0]

    assert run("ascend-opt %s | filecheck %s")
    assert not run("ascend-opt %s | filecheck %s --check-prefix=WRONG")
    assert not run("ascend-opt %s -p nope | filecheck %s")  # pipefail: the first command failed
    assert run("not ascend-opt %s -p nope 2>&1 | filecheck %s --check-prefix=ERR")
    assert not run("not ascend-opt %s | filecheck %s")
    assert not run(
        "env TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL=fast ascend-opt %s -p 'ascend-precision{policy=tf}'"
    )
    assert "TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL" not in os.environ  # set for that one command only
    assert parse_pipeline("ascend-opt x > out.txt") is None and parse_pipeline("cat x | filecheck y") is None
