"""Precision rules as data: each CANN mode and each framework policy is a small object.

A *rule* answers one question for one op: in which order should the pass try kernels
(a compute dtype on an engine, and the reason to report when that kernel is taken)?
The pass (`passes/precision.py`) owns everything else, once, for every rule: signatures,
kernel choice among the op's `caps`, gray-op voting, overrides (`customize_dtypes`,
`keep_dtype`), casts and the report.

* :data:`CANN_MODES` maps each v1 `precision_mode` to its rule (docs/design.md §5).
* :data:`POLICIES` maps each `policy` name to a factory building its rule from the
  options (docs/design.md §11): `cann`, `tf`, `mindspore`, `torch`.

An unknown mode, policy or level is an :class:`AscendError`; there is no default branch.

The parts: `base.py` (steps, facts, the rule interface, the options), `cann.py` (the CANN modes), `tf.py`,
`frameworks.py` (MindSpore and PyTorch), `scopes.py` (MindSpore's `to_float` scopes) and `compare.py`
(the side-by-side views). Every module imports `base.py`, none imports this package, and this package loads
the framework policies only when asked for one.

Idempotence: a rule sees an op's *current* dtype as its original one, so its answer for
the dtype it chose must be that same dtype. Every rule here keeps that: an op whose
original low dtype has no kernel is decided as the fp32 op it becomes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ascend_mp.errors import AscendError
from ascend_mp.policies.base import (
    AICORE,
    AICPU,
    AMP_DTYPES,
    BF16,
    F16,
    F32,
    LOW,
    OpFacts,
    PolicyOptions,
    Rule,
    Step,
    Steps,
    amp_dtype,
    keep_steps,
    low_steps,
    other_low,
    short,
)
from ascend_mp.policies.cann import CANN_MODES, cann_mode

__all__ = [
    "AICORE", "AICPU", "AMP_DTYPES", "BF16", "CANN_MODES", "F16", "F32", "LOW", "POLICIES", "OpFacts", "PolicyOptions",
    "Rule", "Step", "Steps", "amp_dtype", "cann_mode", "keep_steps", "low_steps", "other_low", "policy_rule", "short",
]  # fmt: skip


def _cann_policy(opts: PolicyOptions) -> Rule:
    if opts.level is not None:
        raise AscendError(f"amp_level '{opts.level}' applies to the mindspore policy only")
    return cann_mode(opts.mode)


def _tf_policy(opts: PolicyOptions) -> Rule:
    from ascend_mp.policies.tf import tf_rule

    return tf_rule(opts)


def _mindspore_policy(opts: PolicyOptions) -> Rule:
    from ascend_mp.policies.frameworks import mindspore_rule

    return mindspore_rule(opts)


def _torch_policy(opts: PolicyOptions) -> Rule:
    from ascend_mp.policies.frameworks import torch_rule

    return torch_rule(opts)


POLICIES: Mapping[str, Callable[[PolicyOptions], Rule]] = {
    "cann": _cann_policy,
    "tf": _tf_policy,
    "mindspore": _mindspore_policy,
    "torch": _torch_policy,
}
"""Every policy name -> the factory of its rule."""


def policy_rule(policy: str, opts: PolicyOptions) -> Rule:
    """The rule of `policy` with `opts`; an unknown policy is an error."""
    factory = POLICIES.get(policy)
    if factory is None:
        raise AscendError(f"unknown amp_policy '{policy}'; expected one of {', '.join(POLICIES)}")
    return factory(opts)
