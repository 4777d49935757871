"""The examples, installed with the package as `ascend_mp.examples` (so `python -m ascend_mp.demo`
finds them in a wheel): `*.mlir` modules and the builder scripts `mlp.py` and `cnn.py`."""
