"""ascend-loss-scale: the scale/skip sequence of each manager against an independent GradScaler
model, bit-identical parameters across skipped steps, the optimizers, options and errors."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from ascend_mp.builder import mlp
from ascend_mp.errors import AscendError
from ascend_mp.interpreter import Program
from ascend_mp.ir import make_context, parse_module, print_module, verify
from ascend_mp.passes import PASSES
from ascend_mp.passes.autodiff import differentiate
from ascend_mp.passes.loss_scale import PRESETS, LossScalePass, TrainState, initial_state, step_layout

BATCH = 4
RNG = np.random.default_rng(0)
X = RNG.standard_normal((BATCH, 8)).astype(np.float32)
LABELS = np.eye(3, dtype=np.float32)[[0, 1, 2, 1]]
HUGE = np.full_like(X, 1e6)  # inf once cast to fp16
INF = X.copy()
INF[0, 0] = np.inf  # inf in the data: overflow even in fp32


class Stepper:
    """A compiled train step and its state."""

    def __init__(self, mode: str | None = None, lr: float = 0.1, **options: object):
        self.model = mlp((8, 6, 3))
        module = self.model.forward_module(BATCH)
        ctx = make_context()
        PASSES["ascend-autodiff"]()().apply(ctx, module)
        if mode is not None:
            PASSES["ascend-precision"]()(mode=mode).apply(ctx, module)
        PASSES["ascend-loss-scale"]()(lr=lr, **options).apply(ctx, module)
        verify(module)
        self.module = module
        self.fn = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "train_step")
        self.prog = Program.from_module(module)
        self.state: TrainState = initial_state(self.fn, self.model.init_params(0))

    def step(self, x: np.ndarray) -> tuple[float, bool]:
        s = self.state
        results = self.prog.run("train_step", *s.args(), x, LABELS, s.loss_scale, s.good_steps, s.step)
        loss, overflow = s.update(results)
        return float(loss), overflow


def grad_scaler(
    overflows: list[bool], init: float, growth: float, backoff: float, interval: int, floor: float = 0.0
) -> list[float]:
    """PyTorch GradScaler's update rule, written independently of the pass: the scale after each step."""
    scale, tracker, out = init, 0, []
    for overflow in overflows:
        if overflow:
            scale, tracker = max(scale * backoff, floor), 0
        else:
            tracker += 1
            if tracker == interval:
                scale, tracker = scale * growth, 0
        out.append(scale)
    return out


def bits(arrays: list[np.ndarray]) -> list[bytes]:
    return [a.tobytes() for a in arrays]


SCRIPT = [X, HUGE, X, X, X, X, HUGE, HUGE, X, X, X, X, X, X, X]


@pytest.mark.parametrize("preset", [None, "mindspore", "tensorflow"])
def test_dynamic_scale_and_skip_sequence(preset: str | None) -> None:
    opts: dict[str, object] = {"growth_interval": 3}
    p = dict(PRESETS[preset or "pytorch"])
    if preset:  # explicit options override the preset (2^24 would overflow this model's fp16 gradients)
        opts |= {"preset": preset, "init_scale": 256.0}
        p["init_scale"] = 256.0
    s = Stepper("allow_mix_precision", **opts)
    assert float(s.state.loss_scale) == p["init_scale"]
    overflows, scales, steps = [], [], []
    for x in SCRIPT:
        before = bits(s.state.args())
        loss, overflow = s.step(x)
        overflows.append(overflow)
        scales.append(float(s.state.loss_scale))
        steps.append(int(s.state.step))
        if overflow:
            assert bits(s.state.args()) == before  # parameters and slots bit-identical
        else:
            assert bits(s.state.params) != before[: len(s.state.params)]
            assert np.isfinite(loss)
    assert overflows == [x is HUGE for x in SCRIPT]
    assert scales == grad_scaler(overflows, p["init_scale"], p["growth_factor"], p["backoff_factor"], 3, p["min_scale"])
    assert steps == list(np.cumsum([not o for o in overflows]))


def test_too_large_a_scale_backs_off_until_steps_are_clean() -> None:
    """Scaled gradients overflow fp16 (no bad data): the scale halves until they fit."""
    s = Stepper("allow_mix_precision", init_scale=2.0**40, growth_interval=1000)
    overflows = [s.step(X)[1] for _ in range(40)]
    first_clean = overflows.index(False)
    assert first_clean > 5 and not any(overflows[first_clean:])
    assert float(s.state.loss_scale) == 2.0 ** (40 - first_clean)
    assert int(s.state.step) == 40 - first_clean


def test_min_scale_floor() -> None:
    s = Stepper("allow_mix_precision", init_scale=4.0, min_scale=1.0)
    scales = [(s.step(HUGE), float(s.state.loss_scale))[1] for _ in range(4)]
    assert scales == [2.0, 1.0, 1.0, 1.0]


def test_fp32_training_detects_inf_in_data() -> None:
    s = Stepper(None, init_scale=8.0)
    before = bits(s.state.args())
    assert s.step(INF)[1] is True
    assert bits(s.state.args()) == before and float(s.state.loss_scale) == 4.0 and int(s.state.step) == 0
    assert s.step(X)[1] is False


@pytest.mark.parametrize("drop", [True, False])
def test_fixed_manager(drop: bool) -> None:
    s = Stepper("allow_mix_precision", manager="fixed", scale=128.0, drop_overflow_update=drop)
    assert float(s.state.loss_scale) == 128.0
    s.step(X)
    before = bits(s.state.params)
    _, overflow = s.step(HUGE)
    assert overflow
    assert float(s.state.loss_scale) == 128.0
    if drop:
        assert bits(s.state.params) == before and int(s.state.step) == 1
    else:
        assert bits(s.state.params) != before and int(s.state.step) == 2
        assert not all(np.isfinite(p).all() for p in s.state.params)


def test_no_loss_scaling_still_reports_overflow() -> None:
    s = Stepper("allow_mix_precision", manager="none")
    assert float(s.state.loss_scale) == 1.0
    assert s.step(HUGE)[1] is True and int(s.state.step) == 1


# --------------------------------------------------------------------------------------
# Optimizers: a clean step is exactly the fp32 update of the unscaled gradients
# --------------------------------------------------------------------------------------


def reference_grads(model, params: list[np.ndarray]) -> list[np.ndarray]:
    module = model.forward_module(BATCH)
    differentiate(module)
    return Program.from_module(module).run("forward_grad", *params, X, LABELS)[1:]


@pytest.mark.parametrize("options", [{"init_scale": 2.0**10}, {"manager": "none"}], ids=["dynamic", "none"])
def test_sgd_step_is_bit_exact(options: dict[str, object]) -> None:
    s = Stepper(None, lr=0.05, **options)
    params = [p.copy() for p in s.state.params]
    grads = reference_grads(s.model, params)
    s.step(X)
    for p, g, new in zip(params, grads, s.state.params):
        assert np.array_equal(new, p - np.float32(0.05) * g)


def test_momentum_and_adam_updates() -> None:
    for optimizer in ("momentum", "adam"):
        s = Stepper(None, lr=0.01, optimizer=optimizer, init_scale=2.0**12)
        params = [p.copy() for p in s.state.params]
        assert len(s.state.slots) == (4 if optimizer == "momentum" else 10)
        for _ in range(2):
            grads = reference_grads(s.model, params)
            if optimizer == "momentum":
                accum = s.state.slots
                new_accum = [a * np.float32(0.9) + g for a, g in zip(accum, grads)]
                expected = [p - np.float32(0.01) * a for p, a in zip(params, new_accum)]
            else:
                m, v, b1p, b2p = s.state.slots[:4], s.state.slots[4:8], s.state.slots[8], s.state.slots[9]
                lr_t = 0.01 * np.sqrt(1 - b2p) / (1 - b1p)
                nm = [mi + (g - mi) * np.float32(0.1) for mi, g in zip(m, grads)]
                nv = [vi + (g * g - vi) * np.float32(0.001) for vi, g in zip(v, grads)]
                expected = [p - lr_t * a / (np.sqrt(b) + np.float32(1e-8)) for p, a, b in zip(params, nm, nv)]
            s.step(X)
            for e, got in zip(expected, s.state.params):
                np.testing.assert_allclose(got, e, rtol=2e-6, atol=1e-7)
            params = [p.copy() for p in s.state.params]
        if optimizer == "adam":
            np.testing.assert_allclose(s.state.slots[8:], [0.9**3, 0.999**3], rtol=1e-6)


def test_adam_beta_powers_are_kept_on_overflow() -> None:
    s = Stepper("allow_mix_precision", optimizer="adam")
    s.step(X)
    before = bits(s.state.slots)
    assert s.step(HUGE)[1] and bits(s.state.slots) == before


# --------------------------------------------------------------------------------------
# IR, layout, options, errors
# --------------------------------------------------------------------------------------


def test_signature_layout_and_initial_state() -> None:
    s = Stepper(None, optimizer="adam", preset="mindspore")
    ins = [str(t) for t in s.fn.function_type.inputs.data]
    outs = [str(t) for t in s.fn.function_type.outputs.data]
    assert ins[-5:] == ["tensor<4x8xf32>", "tensor<4x3xf32>", "tensor<f32>", "tensor<i32>", "tensor<i32>"]
    assert outs[-5:] == ["tensor<f32>", "tensor<f32>", "tensor<i32>", "tensor<i32>", "tensor<i1>"]
    assert len(ins) == 4 + 10 + 5 and len(outs) == 4 + 10 + 5
    layout = step_layout(s.fn)
    assert layout == {
        "params": 4,
        "state": [f"zeros:{i}" for i in range(4)] * 2 + ["value:0.9", "value:0.999"],
        "optimizer": "adam",
        "manager": "dynamic",
        "init_scale": 2.0**24,
    }
    assert [a.name_hint for a in s.fn.args][4:6] == ["dense_0_w_m", "dense_0_b_m"]
    assert float(s.state.slots[-2]) == np.float32(0.9) and s.state.step.dtype == np.int32


def test_fp16_forward_gets_fp32_masters() -> None:
    model = mlp((8, 6, 3))
    module = model.forward_module(BATCH, dtype="f16")
    LossScalePass().apply(make_context(), module)  # runs ascend-autodiff itself
    verify(module)
    fn = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "train_step")
    assert [str(t) for t in fn.function_type.inputs.data][:2] == ["tensor<8x6xf32>", "tensor<6xf32>"]
    state = initial_state(fn, model.init_params(0))
    prog = Program.from_module(module)
    results = prog.run(
        "train_step", *state.args(), X.astype(np.float16), LABELS, state.loss_scale, state.good_steps, state.step
    )
    assert all(r.dtype == np.float32 for r in results[:4]) and not bool(results[-1])


def test_ir_order_of_the_seven_steps() -> None:
    text = print_module(Stepper("allow_mix_precision", optimizer="momentum").module).split("@train_step")[1]
    order = [
        "ascend.NPUAllocFloatStatus", "ascend.NPUClearFloatStatus", 'name = "dense_0/MatMulV2"', 'name = "loss_scale/scale_seed"',
        'name = "loss_scale/unscale/dense_0_w"', "ascend.NPUGetFloatStatus", "ascend.Greater",
        'name = "loss_scale/skip_on_overflow/dense_0_w/SelectV2"', "ascend.ApplyMomentumD", 'name = "loss_scale/step/Select"',
    ]  # fmt: skip
    positions = [text.index(s) for s in order]
    assert positions == sorted(positions)


def test_presets() -> None:
    cfg = LossScalePass(preset="mindspore").config()
    assert (cfg.init_scale, cfg.growth_factor, cfg.backoff_factor, cfg.growth_interval, cfg.min_scale) == (
        2.0**24,
        2.0,
        0.5,
        2000,
        1.0,
    )
    cfg = LossScalePass(preset="tensorflow", growth_interval=10).config()
    assert (cfg.init_scale, cfg.growth_interval, cfg.min_scale) == (2.0**15, 10, 1.0)
    cfg = LossScalePass().config()
    assert (cfg.init_scale, cfg.growth_factor, cfg.backoff_factor, cfg.growth_interval, cfg.min_scale) == (
        2.0**16,
        2.0,
        0.5,
        2000,
        0.0,
    )
    assert LossScalePass(manager="fixed").config().init_scale == 128.0


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"manager": "static"}, "manager must be one of dynamic, fixed, none, got 'static'"),
        ({"optimizer": "rmsprop"}, "optimizer must be one of sgd, momentum, adam, got 'rmsprop'"),
        ({"preset": "jax"}, "preset must be one of pytorch, mindspore, tensorflow, got 'jax'"),
        ({"init_scale": 0.0}, "init-scale must be a positive finite float32 number, got 0"),
        ({"init_scale": 1e39}, "init-scale must be a positive finite float32 number, got 1e\\+39"),
        ({"init_scale": float("nan")}, "init-scale must be a positive finite float32 number, got nan"),
        ({"growth_factor": 1.0}, "growth-factor must be > 1 and finite, got 1"),
        ({"growth_factor": float("inf")}, "growth-factor must be > 1 and finite, got inf"),
        ({"min_scale": float("inf")}, "min-scale must be >= 0 and finite, got inf"),
        ({"growth_interval": float("inf")}, "growth-interval must be a positive integer, got inf"),
        ({"backoff_factor": 1.5}, r"backoff-factor must be in \(0, 1\), got 1.5"),
        ({"growth_interval": 0}, "growth-interval must be a positive integer, got 0"),
        (
            {"growth_interval": 2**31},
            r"growth-interval must be below 2\^31 \(the clean-step counter is an int32\), got 2.14748e\+09",
        ),
        ({"manager": "fixed", "scale": -2.0}, "scale must be a positive finite float32 number, got -2"),
        ({"manager": "fixed", "scale": float("inf")}, "scale must be a positive finite float32 number, got inf"),
        ({"lr": 0.0}, "lr must be > 0 and finite, got 0"),
        ({"lr": float("inf")}, "lr must be > 0 and finite, got inf"),
        ({"lr": float("nan")}, "lr must be > 0 and finite, got nan"),
        ({"epsilon": float("inf")}, "epsilon must be > 0 and finite, got inf"),
    ],
)
def test_option_errors(options: dict[str, object], message: str) -> None:
    with pytest.raises(AscendError, match=f"ascend-loss-scale: {message}"):
        LossScalePass(**options).apply(make_context(), mlp((2, 2)).forward_module(1))  # pyright: ignore[reportArgumentType]


def test_options_without_effect_warn(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="ascend_mp"):
        LossScalePass(manager="fixed", init_scale=4.0).apply(make_context(), mlp((2, 2)).forward_module(1))
    assert "ascend-loss-scale: option init-scale has no effect with manager=fixed" in caplog.text


def test_structural_errors() -> None:
    module = mlp((2, 2)).forward_module(1)
    with pytest.raises(
        AscendError,
        match=r"ascend-loss-scale: no function @nope_grad or @nope in the module \(functions: @forward, @predict\)",
    ):
        LossScalePass(func="nope").apply(make_context(), module)
    LossScalePass().apply(make_context(), module)
    with pytest.raises(AscendError, match="function @train_step already exists"):
        LossScalePass().apply(make_context(), module)
    handmade = parse_module(
        "func.func @forward_grad(%w: tensor<2xf32>, %x: tensor<2xf32>) -> (tensor<f32>, tensor<2xf32>) {\n"
        "  %l = ascend.ReduceSum %w {axes = array<i64: 0>} : (tensor<2xf32>) -> tensor<f32>\n"
        "  func.return %l, %x : tensor<f32>, tensor<2xf32>\n}\n"
    )
    with pytest.raises(AscendError, match="has no gradient seed"):
        LossScalePass().apply(make_context(), handmade)


def test_pass_options_from_a_pipeline_string() -> None:
    from xdsl.passes import PassPipeline

    from ascend_mp.ir import make_context as ctx

    module: ModuleOp = mlp((2, 2)).forward_module(1)
    passes = {name: factory for name, factory in PASSES.items()}
    pipeline = PassPipeline.parse_spec(
        passes, "ascend-loss-scale{manager=fixed scale=64.0 drop-overflow-update=false optimizer=momentum}"
    )
    pipeline.apply(ctx(), module)
    fn = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "train_step")
    assert step_layout(fn)["init_scale"] == 64.0 and "ascend.Select" not in print_module(fn)


def test_malformed_gradient_functions() -> None:
    no_grads = parse_module(
        "func.func @forward_grad(%w: tensor<2xf32>) -> tensor<f32> {\n"
        "  %l = ascend.ReduceSum %w {axes = array<i64: 0>} : (tensor<2xf32>) -> tensor<f32>\n"
        "  func.return %l : tensor<f32>\n}\n"
    )
    with pytest.raises(AscendError, match=r"@forward_grad must return \(loss, one gradient per leading argument\)"):
        LossScalePass().apply(make_context(), no_grads)
    misshapen = parse_module(
        "func.func @forward_grad(%w: tensor<2xf32>, %x: tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>) {\n"
        "  %l = ascend.ReduceSum %w {axes = array<i64: 0>} : (tensor<2xf32>) -> tensor<f32>\n"
        "  func.return %l, %x : tensor<f32>, tensor<3xf32>\n}\n"
    )
    with pytest.raises(AscendError, match="result #1 of @forward_grad is not shaped like argument #0"):
        LossScalePass().apply(make_context(), misshapen)


def test_runtime_layout_errors() -> None:
    s = Stepper(None)
    with pytest.raises(AscendError, match="@train_step trains 4 parameters, got 1"):
        initial_state(s.fn, [np.zeros((8, 6), np.float32)])
    fwd = next(op for op in s.module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "forward")
    with pytest.raises(AscendError, match="@forward has no ascend.train_step attribute"):
        step_layout(fwd)
