"""The `xdsl.universe` entry point: plain `xdsl-opt` sees the ascend dialect and passes."""

from xdsl.ir import Dialect
from xdsl.universe import Universe

from ascend_mp.passes import PASSES


def _ascend() -> Dialect:
    from ascend_mp.dialects.ascend import Ascend

    return Ascend


ASCEND_UNIVERSE = Universe(all_dialects={"ascend": _ascend}, all_passes=dict(PASSES))
