"""Random graphs of ascend ops for property tests and fuzzing, and the invariants every precision mode keeps.

`graphs()` draws a DAG over matrices (NxN), images (1xNxNxN), vectors and whatever shapes its ops make
(Reshape, ConcatV2D): elementwise ops, MatMulV2, BiasAdd, softmax, reductions, Conv2D + pooling,
BatchNorm, LayerNorm, Transpose, Reshape, ConcatV2D, ArgMax, user casts and cast chains.
"""

from __future__ import annotations

from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Block, Operation, Region, SSAValue

from ascend_mp.dialects import ascend
from ascend_mp.dialects.ascend import AscendOp, CastOp, Kernel, operand_groups
from ascend_mp.dtypes import element_type, tensor_dtype
from ascend_mp.errors import AscendError
from ascend_mp.ir import print_module
from ascend_mp.modes import V1_MODES
from ascend_mp.opinfo import load_library
from ascend_mp.passes.precision import PrecisionReport, run_precision

SOCS = ("ascend910", "ascend910b")
MODES = V1_MODES
UNARY = (ascend.ReluOp, ascend.ExpOp, ascend.LogOp, ascend.TanhOp, ascend.SqrtOp, ascend.SigmoidOp, ascend.GeluOp)
BINARY = (ascend.AddOp, ascend.MulOp, ascend.SubOp, ascend.MaximumOp)
N = 4
KINDS = (
    "unary",
    "binary",
    "matmul",
    "softmax",
    "reduce",
    "cast",
    "conv",
    "bn",
    "argmax",
    "select",
    "bias",
    "transpose",
    "reshape",
    "concat",
    "layernorm",
    "avgpool",
    "cast_chain",
)


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
    vectors = [((N,), "f32"), *(((N,), d) for d in floats if d != "f32")]  # the first is BatchNorm's statistics
    for shape, d in [*vectors, *(((N, N, 1, 1), d) for d in floats)]:
        arg_types.append(_t(shape, d))
        arg_kinds.append((shape, d))
    block = Block(arg_types=arg_types)
    pool: dict[tuple[tuple[int, ...], str], list[SSAValue]] = {}
    for kind, arg in zip(arg_kinds, block.args):
        pool.setdefault(kind, []).append(arg)
    ints: list[SSAValue] = []

    def pick(shape: tuple[int, ...], dtype: str) -> SSAValue:
        return draw(st.sampled_from(pool[(shape, dtype)]))

    def any_shape(dtype: str) -> tuple[int, ...]:
        return draw(st.sampled_from(sorted(shape for shape, d in pool if d == dtype)))

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
        kind = draw(st.sampled_from(KINDS))
        d = draw(st.sampled_from(floats))
        t = _t(mat, d)
        if kind == "unary":
            shape = any_shape(d)
            add(draw(st.sampled_from(UNARY))(pick(shape, d), result_types=[_t(shape, d)]))
        elif kind == "binary":
            shape = any_shape(d)
            add(draw(st.sampled_from(BINARY))(pick(shape, d), pick(shape, d), result_types=[_t(shape, d)]))
        elif kind == "matmul":
            bias = draw(st.booleans()) and ((N,), d) in pool
            add(ascend.MatMulV2Op(pick(mat, d), pick(mat, d), pick((N,), d) if bias else None, result_types=[t]))
        elif kind == "softmax":
            add(ascend.SoftmaxV2Op(pick(mat, d), result_types=[t]))
        elif kind == "reduce":
            r = ascend.ReduceSumOp(pick(mat, d), result_types=[_t((N,), d)], axes=[1])
            add(r)
        elif kind == "cast":
            a, b = draw(st.sampled_from(_cast_pairs(soc)))
            shape = draw(st.sampled_from((mat, img)))
            add(CastOp(pick(shape, a), result_types=[_t(shape, b)]))
        elif kind == "cast_chain":  # e.g. f32 -> f16 -> f32 -> bf16: the pass keeps user casts as written
            shape = any_shape(d)
            value = pick(shape, d)
            for _ in range(draw(st.integers(2, 4))):
                nxt = draw(st.sampled_from([b for a, b in _cast_pairs(soc) if a == tensor_dtype(value.type)]))
                cast = CastOp(value, result_types=[_t(shape, nxt)])
                add(cast)
                value = cast.results[0]
        elif kind == "bias":
            add(ascend.BiasAddOp(pick(mat, d), pick((N,), d), result_types=[t]))
        elif kind == "transpose":
            shape, perm = draw(st.sampled_from(((mat, [1, 0]), (img, [0, 2, 3, 1]))))
            add(ascend.TransposeOp(pick(shape, d), result_types=[_t(shape, d)], perm=perm))
        elif kind == "reshape":  # matrix <-> flat vector
            flat = (N * N,)
            src, dst = (flat, mat) if (flat, d) in pool and draw(st.booleans()) else (mat, flat)
            add(ascend.ReshapeOp(pick(src, d), result_types=[_t(dst, d)]))
        elif kind == "concat":
            dim = draw(st.sampled_from((0, 1)))
            shape = (2 * N, N) if dim == 0 else (N, 2 * N)
            add(ascend.ConcatV2DOp([pick(mat, d), pick(mat, d)], result_types=[_t(shape, d)], concat_dim=dim))
        elif kind == "layernorm":
            stat = _t((N, 1), d)
            g, b = pick((N,), d), pick((N,), d)
            add(
                ascend.LayerNormOp(
                    pick(mat, d), g, b, result_types=[t, stat, stat], begin_norm_axis=1, begin_params_axis=1
                )
            )
        elif kind == "avgpool":
            add(
                ascend.AvgPoolOp(
                    pick(img, d), result_types=[_t(img, d)], ksize=[1, 1, 2, 2], strides=[1, 1, 1, 1], padding="SAME"
                )
            )
        elif kind == "conv":
            c = ascend.Conv2DOp(
                pick(img, d), pick((N, N, 1, 1), d), None, result_types=[_t(img, d)], strides=[1, 1, 1, 1]
            )
            add(c)
            add(ascend.MaxPoolOp(c.results[0], result_types=[_t(img, d)], ksize=[1, 1, 1, 1], strides=[1, 1, 1, 1]))
        elif kind == "bn":
            s = pool[((N,), "f32")][0]
            add(
                ascend.BatchNormOp(
                    pick(img, d), s, s, s, s, result_types=[_t(img, d), _t((N,), "f32"), _t((N,), "f32")]
                )
            )
        elif kind == "select":  # a bool mask from Greater (or an earlier one) picks between two tensors
            if (mat, "i1") not in pool or draw(st.booleans()):
                add(ascend.GreaterOp(pick(mat, d), pick(mat, d), result_types=[_t(mat, "i1")]))
            d2 = draw(st.sampled_from(floats))
            add(ascend.SelectOp(pick(mat, "i1"), pick(mat, d2), pick(mat, d2), result_types=[_t(mat, d2)]))
        else:
            add(ascend.ArgMaxV2Op(pick(mat, d), result_types=[_t((N,), "i32")]))
    produced = [r for op in block.ops for r in op.results]
    outs = (
        draw(st.lists(st.sampled_from(produced), min_size=1, max_size=3, unique=True)) if produced else [block.args[0]]
    )
    block.add_op(func.ReturnOp(*outs))
    fn = func.FuncOp("g", (arg_types, [v.type for v in outs]), Region(block))
    module = ModuleOp([fn])
    module.verify()
    return soc, module


def _cast_pairs(soc: str) -> list[tuple[str, str]]:
    """The user casts a graph may hold: fp16 <-> fp32, and bf16 <-> fp32 where bf16 exists (no direct fp16 <-> bf16)."""
    return [("f16", "f32"), ("f32", "f16")] + ([("bf16", "f32"), ("f32", "bf16")] if soc == "ascend910b" else [])


def matches_a_kernel(op: AscendOp, kernels: tuple[Kernel, ...]) -> bool:
    groups = operand_groups(op)
    ins = [tensor_dtype(g[0].type) if g else None for g in groups]
    outs = tuple(tensor_dtype(r.type) for r in op.results)
    for k in kernels:
        if k.outputs == outs and all(i is None or i == kd for i, kd in zip(ins, k.inputs)):
            if all(tensor_dtype(v.type) == k.inputs[j] for j, g in enumerate(groups) for v in g):
                return True
    return False


def check_invariants(soc: str, module: ModuleOp, mode: str) -> PrecisionReport | None:
    """Run the pass on `module` (in place) and check what every mode keeps; the report, or None if the
    mode refused the graph (must_keep_origin_dtype with an op that has no kernel for its dtype)."""
    library = load_library(soc)
    fn = next(op for op in module.walk() if isinstance(op, func.FuncOp))
    signature = fn.function_type
    user_ops = [op for op in module.walk() if isinstance(op, AscendOp)]
    user_casts = {id(op) for op in user_ops if isinstance(op, CastOp)}
    # What each user cast reads and makes: it may vanish only as the exact round trip docs/design.md §5 folds
    # (its input, fp32 in the input IR, retyped to the cast's own low output dtype).
    cast_io = {
        id(op): (op.operands[0], tensor_dtype(op.operands[0].type), op.results[0].type)
        for op in user_ops
        if isinstance(op, CastOp)
    }
    before = print_module(module)
    try:
        report = run_precision(module, mode=mode, soc=soc)
    except AscendError as e:
        assert mode == "must_keep_origin_dtype", str(e)
        assert "under must_keep_origin_dtype" in str(e)
        assert print_module(module) == before  # nothing changed
        return None
    module.verify()
    assert fn.function_type == signature
    after_ops = [op for op in module.walk() if isinstance(op, AscendOp)]
    survivors = {id(op) for op in after_ops}
    folded = [op for op in user_ops if id(op) not in survivors]
    for op in folded:
        assert id(op) in user_casts, f"{op.name} deleted"
        source, was, made = cast_io[id(op)]
        assert was == "f32" and tensor_dtype(made) in ("f16", "bf16") and source.type == made, (
            mode,
            "folded a cast that changes the dtype",
        )
    assert report.casts_folded >= len(folded)
    kept = [op for op in user_ops if id(op) in survivors]
    assert [
        op for op in after_ops if not isinstance(op, CastOp) or id(op) in user_casts
    ] == kept  # none other deleted or reordered
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
    return report
