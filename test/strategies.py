"""Random graphs of ascend ops for property tests and fuzzing, and the invariants every precision mode keeps."""

from __future__ import annotations

from ascend_mp.dialects import ascend
from ascend_mp.dialects.ascend import AscendOp, CastOp, Kernel, operand_groups
from ascend_mp.passes.precision import run_precision
from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Block, Operation, Region, SSAValue

from ascend_mp.dtypes import element_type, tensor_dtype
from ascend_mp.errors import AscendError
from ascend_mp.ir import print_module
from ascend_mp.modes import V1_MODES
from ascend_mp.opinfo import load_library

SOCS = ("ascend910", "ascend910b")
MODES = V1_MODES
UNARY = (ascend.ReluOp, ascend.ExpOp, ascend.LogOp, ascend.TanhOp, ascend.SqrtOp)
BINARY = (ascend.AddOp, ascend.MulOp, ascend.SubOp, ascend.MaximumOp)
N = 4


def _t(shape: tuple[int, ...], dtype: str) -> TensorType:
    return TensorType(element_type(dtype), list(shape))


@st.composite
def graphs(draw: st.DrawFn) -> tuple[str, ModuleOp]:
    """A random DAG of ascend ops over fp16/fp32 (and bf16 on ascend910b) inputs, with user casts."""
    soc = draw(st.sampled_from(SOCS))
    floats = ("f16", "f32", "bf16") if soc == "ascend910b" else ("f16", "f32")
    mat, img = (N, N), (1, N, N, N)
    arg_types: list[TensorType] = []
    arg_kinds: list[tuple[tuple[int, ...], str]] = []
    for shape in (mat, img):
        for d in floats:
            arg_types.append(_t(shape, d))
            arg_kinds.append((shape, d))
    for shape, d in [((N,), "f32"), *(((N, N, 1, 1), d) for d in floats)]:
        arg_types.append(_t(shape, d))
        arg_kinds.append((shape, d))
    block = Block(arg_types=arg_types)
    pool: dict[tuple[tuple[int, ...], str], list[SSAValue]] = {}
    for kind, arg in zip(arg_kinds, block.args):
        pool.setdefault(kind, []).append(arg)
    ints: list[SSAValue] = []

    def pick(shape: tuple[int, ...], dtype: str) -> SSAValue:
        return draw(st.sampled_from(pool[(shape, dtype)]))

    def add(op: Operation) -> None:
        block.add_op(op)
        for r in op.results:
            d = tensor_dtype(r.type)
            shape = tuple(r.type.get_shape())  # pyright: ignore[reportAttributeAccessIssue]
            if d in ("i32",):
                ints.append(r)
            else:
                pool.setdefault((shape, d), []).append(r)  # pyright: ignore[reportArgumentType]

    for _ in range(draw(st.integers(1, 14))):
        kind = draw(st.sampled_from(("unary", "binary", "matmul", "softmax", "reduce", "cast", "conv", "bn", "argmax")))
        d = draw(st.sampled_from(floats))
        t = _t(mat, d)
        if kind == "unary":
            add(draw(st.sampled_from(UNARY))(pick(mat, d), result_types=[t]))
        elif kind == "binary":
            add(draw(st.sampled_from(BINARY))(pick(mat, d), pick(mat, d), result_types=[t]))
        elif kind == "matmul":
            bias = draw(st.booleans()) and ((N,), d) in pool
            add(ascend.MatMulV2Op(pick(mat, d), pick(mat, d), pick((N,), d) if bias else None, result_types=[t]))
        elif kind == "softmax":
            add(ascend.SoftmaxV2Op(pick(mat, d), result_types=[t]))
        elif kind == "reduce":
            r = ascend.ReduceSumOp(pick(mat, d), result_types=[_t((N,), d)], axes=[1])
            add(r)
        elif kind == "cast":
            pairs = [("f16", "f32"), ("f32", "f16")] + ([("bf16", "f32"), ("f32", "bf16")] if soc == "ascend910b" else [])
            a, b = draw(st.sampled_from(pairs))
            shape = draw(st.sampled_from((mat, img)))
            add(CastOp(pick(shape, a), result_types=[_t(shape, b)]))
        elif kind == "conv":
            c = ascend.Conv2DOp(pick(img, d), pick((N, N, 1, 1), d), None, result_types=[_t(img, d)], strides=[1, 1, 1, 1])
            add(c)
            add(ascend.MaxPoolOp(c.results[0], result_types=[_t(img, d)], ksize=[1, 1, 1, 1], strides=[1, 1, 1, 1]))
        elif kind == "bn":
            s = pool[((N,), "f32")][0]
            add(ascend.BatchNormOp(pick(img, d), s, s, s, s, result_types=[_t(img, d), _t((N,), "f32"), _t((N,), "f32")]))
        else:
            add(ascend.ArgMaxV2Op(pick(mat, d), result_types=[_t((N,), "i32")]))
    produced = [r for op in block.ops for r in op.results]
    outs = draw(st.lists(st.sampled_from(produced), min_size=1, max_size=3, unique=True)) if produced else [block.args[0]]
    block.add_op(func.ReturnOp(*outs))
    fn = func.FuncOp("g", (arg_types, [v.type for v in outs]), Region(block))
    module = ModuleOp([fn])
    module.verify()
    return soc, module


def matches_a_kernel(op: AscendOp, kernels: tuple[Kernel, ...]) -> bool:
    groups = operand_groups(op)
    ins = [tensor_dtype(g[0].type) if g else None for g in groups]
    outs = tuple(tensor_dtype(r.type) for r in op.results)
    for k in kernels:
        if k.outputs == outs and all(i is None or i == kd for i, kd in zip(ins, k.inputs)):
            if all(tensor_dtype(v.type) == k.inputs[j] for j, g in enumerate(groups) for v in g):
                return True
    return False


def check_invariants(soc: str, module: ModuleOp, mode: str) -> None:
    library = load_library(soc)
    fn = next(op for op in module.walk() if isinstance(op, func.FuncOp))
    signature = fn.function_type
    user_ops = [op for op in module.walk() if isinstance(op, AscendOp)]
    user_casts = {id(op) for op in user_ops if isinstance(op, CastOp)}
    before = print_module(module)
    try:
        report = run_precision(module, mode=mode, soc=soc)
    except AscendError as e:
        assert mode == "must_keep_origin_dtype", str(e)
        assert "under must_keep_origin_dtype" in str(e)
        assert print_module(module) == before  # nothing changed
        return
    module.verify()
    assert fn.function_type == signature
    after_ops = [op for op in module.walk() if isinstance(op, AscendOp)]
    assert [op for op in after_ops if not isinstance(op, CastOp) or id(op) in user_casts] == user_ops  # none deleted or reordered
    assert len(report.ops) == len(user_ops)
    for op in after_ops:
        assert matches_a_kernel(op, library.kernels(op)), (mode, print_module(op))
    inserted = [op for op in after_ops if isinstance(op, CastOp) and id(op) not in user_casts]
    keys = [(op.operands[0], tensor_dtype(op.results[0].type)) for op in inserted]
    assert len(keys) == len(set(keys)), "two casts of one value to one dtype"
    assert report.casts_inserted == len(inserted)
    once = print_module(module)
    run_precision(module, mode=mode, soc=soc)
    assert print_module(module) == once, f"not idempotent under {mode}"
