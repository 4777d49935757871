"""The digits data set (1797 8x8 images of handwritten digits, 0-16 grey levels), shipped
inside the package as `digits.npz` (49 KB): no download and no scikit-learn.

The images are UCI's "Optical Recognition of Handwritten Digits" test set (E. Alpaydin,
C. Kaynak; CC BY 4.0), as scikit-learn distributes them. The file also holds the fixed
train/test split (80/20, stratified) that scikit-learn's
`train_test_split(test_size=0.2, random_state=0, stratify=y)` gave, in its order, so
every run, every mode and every past history sees the same data. Features are
standardised with the training set's statistics.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from importlib import resources

import numpy as np

from ascend_mp.errors import AscendError

DATA_FILE = "digits.npz"
"""Package resource of `ascend_mp.train`: `images` (1797x64 uint8), `target` (uint8),
`train_index` and `test_index` (uint16, the split in order)."""


@dataclass(frozen=True)
class Dataset:
    """Standardised fp32 features, one-hot fp32 labels and integer classes."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    num_classes: int = 10

    def onehot(self, y: np.ndarray) -> np.ndarray:
        return np.eye(self.num_classes, dtype=np.float32)[y]


def _read_digits() -> dict[str, np.ndarray]:
    try:
        with resources.files("ascend_mp.train").joinpath(DATA_FILE).open("rb") as f, np.load(f, allow_pickle=False) as data:
            return {k: np.array(data[k]) for k in ("images", "target", "train_index", "test_index")}
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as e:  # pragma: no cover - a broken installation
        raise AscendError(f"the digits data shipped with ascend-mp cannot be read ({type(e).__name__}: {e}); reinstall the package") from None


def load_digits(image: bool = False, subset: int | None = None) -> Dataset:
    """The digits split: `image` gives (N, 1, 8, 8) inputs (for a CNN) instead of (N, 64);
    `subset` keeps the first N training examples (smoke tests)."""
    raw = _read_digits()
    x = raw["images"].astype(np.float64)
    y = raw["target"].astype(np.int64)
    train, test = raw["train_index"].astype(np.int64), raw["test_index"].astype(np.int64)
    x_train, x_test, y_train, y_test = x[train], x[test], y[train], y[test]
    mean = x_train.mean(axis=0)
    std = x_train.std(axis=0)
    std[std == 0] = 1.0
    x_train, x_test = (x_train - mean) / std, (x_test - mean) / std
    if subset is not None:
        if subset < 1:
            raise AscendError(f"the training subset must be positive, got {subset}")
        x_train, y_train = x_train[:subset], y_train[:subset]
    if image:
        x_train, x_test = x_train.reshape(-1, 1, 8, 8), x_test.reshape(-1, 1, 8, 8)
    return Dataset(x_train.astype(np.float32), y_train, x_test.astype(np.float32), y_test)
