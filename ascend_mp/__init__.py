"""ascend-mp: CANN-style mixed precision for Ascend operator graphs, on xDSL."""

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    """`ascend_mp.from_torch` and `ascend_mp.import_onnx`, loaded on first use (tools start without them)."""
    if name in ("from_torch", "import_onnx"):
        from ascend_mp import frontend

        return getattr(frontend, name)
    raise AttributeError(f"module 'ascend_mp' has no attribute '{name}'")
