"""`ascend-opt`: xDSL's opt driver with the ascend dialect, its passes and ATC-style flags.

    ascend-opt model.mlir --precision_mode=allow_mix_precision --modify_mixlist=ops.json
    ascend-opt model.mlir -p 'ascend-precision{mode=force_fp16}'

The ATC flags expand to an `ascend-precision` pass run before any `-p` passes.
Errors are one line (`file:line:col: error: ...`) on stderr with exit status 1;
`-o FILE` is written only when everything succeeded (atomically).
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import tempfile
from collections.abc import Sequence
from typing import IO, NoReturn

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import PassPipeline
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError, PassFailedException
from xdsl.xdsl_opt_main import xDSLOptMain

from ascend_mp.errors import AscendError
from ascend_mp.tools.atc import add_atc_arguments, precision_options



class _Deferred(io.StringIO):
    """Output buffer that xDSLOptMain may 'close'; its text is written out once the run succeeded."""

    def close(self) -> None:  # keep the buffer readable after xDSLOptMain's finally clause
        pass


class AscendOptMain(xDSLOptMain):
    version_format = "ascend-opt (ascend-mp) built on xdsl {xdsl_version}"

    def register_all_dialects(self):
        super().register_all_dialects()
        if "ascend" not in self.ctx.registered_dialect_names:
            from ascend_mp.universe import _ascend  # pyright: ignore[reportPrivateUsage]

            self.ctx.register_dialect("ascend", _ascend)

    def register_all_passes(self):
        from ascend_mp.passes import PASSES

        super().register_all_passes()
        for name, factory in PASSES.items():
            self.available_passes.setdefault(name, factory)

    def register_all_frontends(self):
        super().register_all_frontends()

        def parse_mlir(stream: IO[bytes], line_offset: int = 0) -> ModuleOp:
            from ascend_mp.ir import LocatingParser, decode_source

            text = decode_source(stream.read(), self.get_input_name(), line_offset)
            parser = LocatingParser(self.ctx, text, self.get_input_name())
            parser.line_offset = line_offset
            return parser.parse_module(not self.args.no_implicit_module)

        self.available_frontends["mlir"] = parse_mlir

    def parse_chunk(self, chunk: IO[bytes], file_extension: str, start_offset: int = 0) -> ModuleOp | None:
        if file_extension == "mlir":
            return self.available_frontends["mlir"](chunk, start_offset)  # pyright: ignore[reportCallIssue]
        return super().parse_chunk(chunk, file_extension, start_offset)

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser):
        super().register_all_arguments(arg_parser)
        arg_parser.error = _usage_error  # one line, not argparse's usage block
        add_atc_arguments(arg_parser, "ATC precision options (expand to the ascend-precision pass)")
        from ascend_mp.policies import compare

        compare.add_arguments(arg_parser)

    def setup_pipeline(self):
        super().setup_pipeline()
        options = precision_options(self.args)
        if options:
            precision = self.available_passes["ascend-precision"]()(**options)
            self.pipeline = PassPipeline((precision, *self.pipeline.passes), self.pipeline.callback)

    def apply_passes(self, prog: ModuleOp):
        from xdsl.utils.exceptions import VerifyException

        from ascend_mp.ir import first_invalid_op, location_of

        try:
            super().apply_passes(prog)
        except VerifyException as e:
            found = None if self.args.verify_diagnostics else first_invalid_op(prog)
            if found is None:
                raise
            op, err = found
            raise AscendError(f"{location_of(op)}: {_message(err, self)}") from e

    def prepare_output(self) -> IO[str]:
        return sys.stdout if self.args.output_file is None else _Deferred()

    def run(self):
        from ascend_mp.policies import compare

        if compare.wanted(self.args):
            compare.run(self.args)
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
            write_atomically(self.args.output_file, output.getvalue())


def _usage_error(message: str) -> NoReturn:
    """A command-line usage error: one line on stderr and exit status 2, as argparse gives without the usage."""
    print(f"ascend-opt: error: {' '.join(message.split())}", file=sys.stderr)
    sys.exit(2)


def write_atomically(path: str, text: str) -> None:
    """Write `text` to `path` through a temporary file in the same folder, so no half file is left."""
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".ascend-", suffix=".tmp")
    except OSError as e:
        raise AscendError(f"{path}: cannot write file: {e.strerror}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError as e:
        os.unlink(tmp)
        raise AscendError(f"{path}: cannot write file: {e.strerror}") from None


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
        return next((line for line in lines if "op " in line or line.startswith("'")), lines[0] if lines else "verification failed")
    if isinstance(e, OSError):
        return f"{e.filename}: {e.strerror}" if e.filename else str(e)
    return str(e)


def main(argv: Sequence[str] | None = None) -> None:
    prog = "ascend-opt"
    main_: AscendOptMain | None = None
    try:
        main_ = AscendOptMain(description="ascend-mp optimizer driver", args=argv)
        main_.run()
    except AscendError as e:
        sys.exit(f"{prog}: error: {e}")
    except (ParseError, ArgSpecParseError, DiagnosticException, OSError, ValueError) as e:
        sys.exit(f"{prog}: error: {_message(e, main_)}")


if __name__ == "__main__":
    main()
