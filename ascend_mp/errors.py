"""The one error type every user-facing failure of ascend-mp raises.

Its message is a single line that names the file (and line/column or JSON key
path) and what was expected; the command-line tools print it as
``<tool>: error: <message>`` and exit with status 1, without a traceback.
"""


class AscendError(Exception):
    """A user-facing error with a one-line message."""

    def __init__(self, message: str):
        if "\n" in message:
            message = " ".join(part.strip() for part in message.splitlines())
        super().__init__(message)
