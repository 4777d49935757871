"""The digits MLP (64-128-10) built with ascend_mp.builder; prints its IR.

    python examples/mlp.py                # @forward and @predict
    python examples/mlp.py --train        # plus @forward_grad and @train_step (autodiff, loss scaling)
"""

from __future__ import annotations

import argparse

from ascend_mp.builder import Dense, Relu, Sequential
from ascend_mp.ir import make_context, print_module
from ascend_mp.passes import PASSES


def build() -> Sequential:
    return Sequential([Dense(64, 128), Relu(), Dense(128, 10)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--train", action="store_true", help="add the gradient and training-step functions")
    args = parser.parse_args()
    module = build().forward_module(args.batch)
    if args.train:
        ctx = make_context()
        PASSES["ascend-autodiff"]()().apply(ctx, module)
        PASSES["ascend-loss-scale"]()().apply(ctx, module)
    print(print_module(module), end="")


if __name__ == "__main__":
    main()
