"""ascend-mp: CANN-style mixed precision for Ascend operator graphs, on xDSL."""

__version__ = "0.1.0"
