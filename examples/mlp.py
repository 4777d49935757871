"""The digits MLP (64-128-10) built with ascend_mp.builder; prints its IR.

python examples/mlp.py                # @forward and @predict
python examples/mlp.py --train        # plus @forward_grad and @train_step (autodiff, loss scaling)
"""

from __future__ import annotations

from ascend_mp.builder import Dense, Relu, Sequential, example_main


def build() -> Sequential:
    return Sequential([Dense(64, 128), Relu(), Dense(128, 10)])


def main() -> None:
    example_main(build(), __doc__.splitlines()[0])  # pyright: ignore[reportOptionalMemberAccess]  # this module has a docstring


if __name__ == "__main__":
    main()
