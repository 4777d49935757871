"""ascend-mp dialects (installed as `ascend_mp.dialects`)."""
