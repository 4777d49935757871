"""`ascend-opt`: xDSL's opt driver with the ascend dialect, its passes and ATC-style flags.

    ascend-opt model.mlir --precision_mode=allow_mix_precision --modify_mixlist=ops.json
    ascend-opt model.mlir -p 'ascend-precision{mode=force_fp16}'

The ATC flags expand to an `ascend-precision` pass run before any `-p` passes (after
`ascend-autodiff` and before `ascend-loss-scale` when those are in the pipeline).
Errors are one line (`ascend-opt: error: file:line:col: ...`) on stderr; exit status 1 for
errors, 2 for usage errors, 130 on Ctrl-C (`ascend_mp.tools.cli`). `-o FILE` and the precision
report are written together, only when everything succeeded (`ascend_mp.fileio.write_output`).
"""

from __future__ import annotations

import argparse
import io
import os
import sys
from collections.abc import Mapping, Sequence
from typing import IO, Any, NoReturn

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.passes import PassPipelineCallbackType as PassPipelineCallback
from xdsl.targets.mlir import MLIRTarget
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError, PassFailedException
from xdsl.xdsl_opt_main import xDSLOptMain

from ascend_mp.errors import AscendError
from ascend_mp.fileio import check_writable, write_output
from ascend_mp.tools.atc import add_atc_arguments, impl_mode_options, precision_options
from ascend_mp.tools.cli import (
    UsageError,
    add_log_argument,
    coerce_pass_options,
    run_tool,
    setup_logging,
    version_text,
)

PROG = "ascend-opt"


class _Deferred(io.StringIO):
    """Output buffer that xDSLOptMain may 'close'; its text is written out once the run succeeded."""

    def close(self) -> None:  # keep the buffer readable after xDSLOptMain's finally clause
        pass


class AscendOptMain(xDSLOptMain):
    version_format = "ascend-opt (ascend-mp) built on xdsl {xdsl_version}"
    _onnx_models: list[object]
    """The ONNX model the frontend read, kept for --emit-onnx (an onnx.ModelProto; onnx loads only for ONNX input)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        self._onnx_models = []
        super().__init__(*args, **kwargs)  # pyright: ignore[reportArgumentType]

    def register_all_dialects(self):
        super().register_all_dialects()
        if "ascend" not in self.ctx.registered_dialect_names:
            from ascend_mp.universe import _ascend

            self.ctx.register_dialect("ascend", _ascend)

    def register_all_passes(self):
        from ascend_mp.passes import PASSES

        super().register_all_passes()
        for name, factory in PASSES.items():
            self.available_passes.setdefault(name, factory)

    def register_all_frontends(self):
        super().register_all_frontends()

        def parse_mlir(stream: IO[bytes], line_offset: int = 0) -> ModuleOp:
            from ascend_mp.ir import decode_source
            from ascend_mp.ir.compat import bulk_ir
            from ascend_mp.tools.cli import parse_text

            text = decode_source(stream.read(), self.get_input_name(), line_offset)
            with bulk_ir():
                return parse_text(
                    self.ctx,
                    text,
                    self.get_input_name(),
                    line_offset,
                    not self.args.no_implicit_module,
                    raw_parse_errors=True,
                )

        self.available_frontends["mlir"] = parse_mlir

        def parse_onnx(stream: IO[bytes], line_offset: int = 0) -> ModuleOp:  # ONNX models (ascend_mp/frontend)
            from ascend_mp.frontend.tools import onnx_frontend

            keep = self._onnx_models if self.args.emit_onnx is not None else None  # read once, written back
            return onnx_frontend(self.args.input_file, stream, self.args.input_shape, self.ctx, keep)

        self.available_frontends["onnx"] = parse_onnx

    def parse_chunk(self, chunk: IO[bytes], file_extension: str, start_offset: int = 0) -> ModuleOp | None:
        if file_extension == "mlir":
            return self.available_frontends["mlir"](chunk, start_offset)  # pyright: ignore[reportCallIssue]  # xDSL types frontends as one-argument callables; ours for mlir (parse_mlir above) takes the line offset too
        return super().parse_chunk(chunk, file_extension, start_offset)

    def register_all_targets(self):
        super().register_all_targets()
        # The other xDSL targets (llvm, riscv-asm, csl, ...) cannot print the ascend dialect; MLIR text is
        # printed with resources.ModulePrinter (blob names that depend only on the module printed).
        self.available_targets = {"mlir": lambda: _ModuleTarget}

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser):
        type(self).version_format = version_text(PROG)  # as every tool's --version (no placeholder left to fill)
        super().register_all_arguments(arg_parser)
        arg_parser.error = _usage_error  # one line, not argparse's usage block
        _describe_passes(arg_parser)
        arg_parser.add_argument(
            "--list-passes",
            nargs="?",
            const="ascend",
            choices=("ascend", "all"),
            help="print the project's passes (all: every pass -p takes, xDSL's too), one a line, and exit",
        )
        add_atc_arguments(arg_parser, "ATC precision options (expand to the ascend-precision pass)")
        add_log_argument(arg_parser)
        from ascend_mp.frontend.tools import add_frontend_arguments

        add_frontend_arguments(arg_parser)
        arg_parser.add_argument(
            "--emit-onnx",
            "--emit_onnx",
            dest="emit_onnx",
            metavar="FILE",
            help="write the decided program as an ONNX model (the input must be ONNX); the MLIR text is then "
            "written only with -o FILE",
        )
        arg_parser.add_argument(
            "--emit-onnx-target",
            dest="emit_onnx_target",
            choices=("ort-cpu", "native"),
            default="ort-cpu",
            help="ort-cpu (default): low-precision ops onnxruntime's CPU provider lacks run in float32 between "
            "Casts; native: every op in its decided dtype",
        )
        from ascend_mp.tools import policy_views

        policy_views.add_arguments(arg_parser)

    def setup_pipeline(self):
        setup_logging(PROG, self.args.log)
        self.args.passes = coerce_pass_options(self.available_passes, self.args.passes)
        try:
            super().setup_pipeline()
        except (AscendError, ValueError) as e:  # a pass refused an option value when it was built
            raise UsageError(f"-p '{self.args.passes}': {e}") from None
        options = precision_options(self.args)
        precision = self.available_passes["ascend-precision"]()(**options) if options else None
        passes: tuple[ModulePass, ...] = ((precision,) if precision is not None else ()) + self.pipeline.passes
        if any(p.name in _TRAINING_PASSES for p in self.pipeline.passes):
            # The training passes' order (CANN applies precision after autodiff, before loss scaling);
            # imported only here: the training passes load numpy, which other runs never need.
            from ascend_mp.passes.loss_scale import order_training_passes

            try:
                passes = order_training_passes(self.pipeline.passes, precision)
            except AscendError as e:  # a pipeline in an order that cannot be right
                raise UsageError(str(e)) from None
        impl = impl_mode_options(self.args)
        if impl:  # the ATC implementation-mode flags: right before the precision pass, else last
            at = next((i for i, p in enumerate(passes) if p.name == "ascend-precision"), len(passes))
            passes = (*passes[:at], self.available_passes["ascend-impl-mode"]()(**impl), *passes[at:])
        self.pipeline = PassPipeline(passes, _verify_where_needed(self.pipeline.callback, self.args))

    def apply_passes(self, prog: ModuleOp):
        from xdsl.utils.exceptions import VerifyException

        from ascend_mp.ir import check_dominance, error_location, first_invalid_op

        check_dominance(prog)
        try:
            super().apply_passes(prog)
        except VerifyException as e:
            found = None if self.args.verify_diagnostics else first_invalid_op(prog)
            if found is None:
                raise
            op, err = found
            raise AscendError(f"{error_location(op, err)}: {_message(err, self)}") from e

    def output_resulting_program(self, prog: ModuleOp) -> str:
        # A pass may create dense_resource blobs (ascend-precision storing weights in fp16) in a module
        # whose text had none; xDSL prints blobs only for loaded dialects, and builtin loads lazily.
        self.ctx.get_optional_dialect("builtin")
        if self.args.emit_onnx is not None:  # the ONNX model (ascend_mp.frontend.export), from the model read once
            from ascend_mp.frontend.export import export_onnx_bytes

            source: Any = self._onnx_models[-1] if self._onnx_models else self.args.input_file
            write_output(
                self.args.emit_onnx,
                export_onnx_bytes(source, prog, target=self.args.emit_onnx_target, name=self.args.input_file),
            )
            if self.args.output_file is None:  # the ONNX file is the output; MLIR text only when -o asks for it
                return ""
        return super().output_resulting_program(prog)

    def get_input_stream(self) -> tuple[IO[bytes], str]:
        """The input read through `fileio.read_input` (bounded; `-` or no file: standard input; a named
        pipe waited for, a device refused). An ONNX model is read by its frontend, from its path."""
        from ascend_mp.fileio import read_input
        from ascend_mp.frontend.tools import is_onnx

        path = self.args.input_file
        if path is None or path == "-":
            return io.BytesIO(read_input("-")), "mlir"
        try:
            os.stat(path)
        except OSError as e:  # as the driver words it: `<path>: No such file or directory`
            raise AscendError(f"{path}: {e.strerror}") from None
        if self.args.frontend == "onnx" or (self.args.frontend is None and is_onnx(path)):
            return io.BytesIO(b""), "onnx"
        return io.BytesIO(read_input(path)), "mlir"  # any other file is MLIR text, as ascend-run reads it

    def get_input_name(self) -> str:
        return "stdin" if self.args.input_file in (None, "-") else self.args.input_file

    def prepare_output(self) -> IO[str]:
        return sys.stdout if self.args.output_file is None else _Deferred()

    def read_input_module(self) -> ModuleOp:
        """The input file parsed by its frontend (`.mlir`, `.onnx`), as the driver would."""
        stream, ext = self.get_input_stream()
        try:
            module = self.parse_chunk(stream, ext)
        finally:
            stream.close()
        assert module is not None
        return module

    def run(self):
        if self.args.list_passes is not None:
            from ascend_mp.passes import PASSES

            names = PASSES if self.args.list_passes == "ascend" else sorted(self.available_passes)
            print("\n".join(names))
            return
        if self.args.output_file is not None:
            check_writable(self.args.output_file)
        if self.args.emit_onnx is not None:
            from ascend_mp.frontend.tools import is_onnx

            if not is_onnx(self.args.input_file):
                raise UsageError(
                    f"--emit-onnx: the input must be an ONNX model (.onnx), got {self.args.input_file or 'standard input'}"
                )
            check_writable(self.args.emit_onnx)
        if getattr(self.args, "compare_json", None) and not getattr(self.args, "compare_policies", False):
            raise UsageError("--compare-json needs --compare-policies (it writes that comparison)")
        from ascend_mp.tools import policy_views

        if policy_views.wanted(self.args):
            policy_views.run(self.args, self.read_input_module)
            return
        output = None
        original = self.prepare_output

        def capture() -> IO[str]:
            nonlocal output
            output = original()
            return output

        self.prepare_output = capture
        super().run()
        if isinstance(output, _Deferred):
            write_output(self.args.output_file, output.getvalue())  # pyright: ignore[reportArgumentType]  # output is a _Deferred only when -o was given


class _ModuleTarget(MLIRTarget):
    """xDSL's MLIR target with `resources.ModulePrinter`: the same module prints the same text in one process."""

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        from ascend_mp.blob_names import ModulePrinter

        if self.syntax_highlight:  # colours for a terminal: xDSL's own printer
            super().emit(ctx, module, output)
            return
        printer = ModulePrinter(
            stream=output,
            print_generic_format=self.print_generic_format,
            print_properties_as_attributes=self.print_properties_as_attributes,
            print_debuginfo=self.print_debuginfo,
        )
        from ascend_mp.ir.compat import bulk_ir

        with bulk_ir():
            printer.print_op(module)
            printer.print_metadata(ctx.loaded_dialects)
        print("\n", file=output)


_TRAINING_PASSES = frozenset({"ascend-autodiff", "ascend-loss-scale"})
"""Passes whose presence makes the pipeline's order matter (`order_training_passes`)."""


def _verify_where_needed(
    callback: PassPipelineCallback | None, args: argparse.Namespace
) -> PassPipelineCallback | None:
    """xDSL's between-pass callback (timing, printing, verifying), verifying the module only where
    it may have become invalid.

    The input is verified before the first pass (it comes from the user), and the module again
    after every pass that is not one of ascend-mp's own: those are tested to leave verifier-valid
    IR (test_pipelines, test_precision, test_policies, ...), so re-verifying 10k ops after them
    costs a quarter of a run and finds nothing. `--disable-verify` still skips every check."""
    if callback is None or args.disable_verify:
        return callback
    from ascend_mp.passes import PASSES

    def verify_where_needed(previous: ModulePass | None, module: ModuleOp, following: ModulePass | None) -> None:
        skip = previous is not None and _is_own_pass(previous, PASSES)
        args.disable_verify = skip  # xDSL's callback reads the flag on each call
        try:
            callback(previous, module, following)
        finally:
            args.disable_verify = False

    return verify_where_needed


def _is_own_pass(p: ModulePass, own: Mapping[str, object]) -> bool:
    """Whether `p` is one of ascend-mp's registered passes (by name and by the module that defines it)."""
    return p.name in own and type(p).__module__.startswith("ascend_mp.passes.")


def _describe_passes(parser: argparse.ArgumentParser) -> None:
    """`-p`'s help names the project's passes, not xDSL's ~150 unrelated ones (`--list-passes all` lists those)."""
    from ascend_mp.passes import PASSES

    for action in parser._actions:  # argparse keeps no public way to reword an option's help
        if "-p" in action.option_strings:
            action.help = (
                "comma-separated passes, options in braces: 'ascend-precision{mode=force_fp16},cse'. "
                f"The project's passes: {', '.join(PASSES)}; any xDSL pass works too (--list-passes all)"
            )


def _usage_error(message: str) -> NoReturn:
    """A command-line usage error: one line on stderr and exit status 2, without argparse's usage block."""
    raise UsageError(message)


def _message(e: BaseException, main: AscendOptMain | None) -> str:
    from ascend_mp.ir import format_parse_error

    if isinstance(e, ParseError):
        return format_parse_error(e)
    if isinstance(e, ArgSpecParseError):
        return "invalid pass pipeline: " + " ".join(str(e).split())
    if isinstance(e, PassFailedException):
        return " ".join(str(e).split())
    if isinstance(e, DiagnosticException):
        lines = [line.strip() for line in str(e).splitlines() if line.strip()]
        return next(
            (line for line in lines if "op " in line or line.startswith("'")),
            lines[0] if lines else "verification failed",
        )
    if isinstance(e, OSError):
        return f"{e.filename}: {e.strerror}" if e.filename else str(e)
    return str(e)


def _known_error(e: BaseException) -> str | None:
    if isinstance(e, (ParseError, ArgSpecParseError, DiagnosticException, OSError, ValueError)):
        return _message(e, None)
    return None


def main(argv: Sequence[str] | None = None) -> None:
    """Run ascend-opt (exit status: 0 ok, 1 error, 2 usage error, 130 Ctrl-C)."""

    def body() -> None:
        AscendOptMain(description="ascend-mp optimizer driver", args=argv).run()

    run_tool(PROG, body, _known_error)


if __name__ == "__main__":
    main()
