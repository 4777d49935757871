"""The one error type every user-facing failure of ascend-mp raises.

Its message is a single line that names the file (and line/column or JSON key
path) and what was expected; the command-line tools print it as
``<tool>: error: <message>`` and exit with status 1, without a traceback.
"""

from xdsl.utils.exceptions import PassFailedException


class AscendError(Exception):
    """A user-facing error with a one-line message."""

    def __init__(self, message: str):
        if "\n" in message:
            message = " ".join(part.strip() for part in message.splitlines())
        super().__init__(message)


class AscendPassError(AscendError, PassFailedException):
    """A pass failure on an op: an `AscendError` (tools print it as one line) that is also
    xDSL's `PassFailedException`, so plain `xdsl-opt --verify-diagnostics` reports it.
    The message starts with the op's location (`ascend_mp.ir.location_of`)."""
