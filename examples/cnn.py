"""A small CNN for 1x8x8 digits built with ascend_mp.builder; prints its IR.

conv 3x3 (8 channels, pad 1) -> relu -> maxpool 2 -> flatten -> dense 10.

    python examples/cnn.py                # @forward and @predict
    python examples/cnn.py --train        # plus @forward_grad and @train_step (autodiff, loss scaling)
"""

from __future__ import annotations

from ascend_mp.builder import Conv2D, Dense, Flatten, MaxPool, Relu, Sequential, example_main


def build() -> Sequential:
    return Sequential(
        [Conv2D(1, 8, 3, pad=1), Relu(), MaxPool(2), Flatten(), Dense(8 * 4 * 4, 10)], input_shape=(1, 8, 8)
    )


def main() -> None:
    example_main(build(), __doc__.splitlines()[0])  # pyright: ignore[reportOptionalMemberAccess]  # this module has a docstring


if __name__ == "__main__":
    main()
