"""Execution of ascend IR with numpy kernels."""
