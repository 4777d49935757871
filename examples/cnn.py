"""A small CNN for 1x8x8 digits built with ascend_mp.builder; prints its IR.

conv 3x3 (8 channels, pad 1) -> relu -> maxpool 2 -> flatten -> dense 10.

    python examples/cnn.py                # @forward and @predict
    python examples/cnn.py --train        # plus @forward_grad and @train_step (autodiff, loss scaling)
"""

from __future__ import annotations

import argparse

from ascend_mp.builder import Conv2D, Dense, Flatten, MaxPool, Relu, Sequential
from ascend_mp.ir import make_context, print_module
from ascend_mp.passes import PASSES


def build() -> Sequential:
    return Sequential([Conv2D(1, 8, 3, pad=1), Relu(), MaxPool(2), Flatten(), Dense(8 * 4 * 4, 10)], input_shape=(1, 8, 8))


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
