"""`ascend_mp.from_torch`: a torch module exported in memory and imported; without torch, one line naming the
extra. The export itself runs where torch is installed (`make models` installs it); it is optional."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import ascend_mp
from ascend_mp.errors import AscendError


def test_without_torch_is_one_line_naming_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` raises ImportError
    with pytest.raises(AscendError, match=r"^from_torch needs torch: pip install 'ascend-mp\[models\]'"):
        ascend_mp.from_torch(object(), ())


def test_unknown_exporter_is_one_line() -> None:
    with pytest.raises(AscendError, match=r"^from_torch: unknown exporter 'jit'; expected one of dynamo, legacy$"):
        ascend_mp.from_torch(object(), (), exporter="jit")


@pytest.mark.parametrize("exporter", ["legacy", "dynamo"])
def test_a_torch_module_imports_and_matches_torch(exporter: str) -> None:
    torch = pytest.importorskip("torch")  # the optional models extra
    from ascend_mp.interpreter import Program

    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(4 * 8 * 8, 5)
    )
    x = torch.randn(2, 3, 8, 8)
    module = ascend_mp.from_torch(net, (x,), exporter=exporter, input_names=["image"])
    (y,) = Program.from_module(module).run("main", x.numpy())
    want = net(x).detach().numpy().astype(np.float64)
    assert np.abs(y - want).max() <= 1e-5 * np.abs(want).max()
    assert "image" in str(module)  # the input keeps its name


def test_an_export_torch_refuses_is_one_line() -> None:
    torch = pytest.importorskip("torch")

    class Bad(torch.nn.Module):
        def forward(self, x):  # noqa: ANN001, ANN202
            return torch.linalg.eig(x)[0].real  # complex intermediates: no ONNX export

    with pytest.raises(AscendError) as e:
        ascend_mp.from_torch(Bad(), (torch.randn(3, 3),), exporter="legacy")
    assert "the legacy exporter failed" in str(e.value) and "\n" not in str(e.value)
