"""scikit-learn's digits (1797 8x8 images, shipped inside the package: no download).

Features are standardised with the training set's statistics; the train/test split is
fixed (stratified, `random_state=0`) so that every run and every mode sees the same data.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_mp.errors import AscendError


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


def load_digits(test_fraction: float = 0.2, image: bool = False, subset: int | None = None) -> Dataset:
    """The digits split: `image` gives (N, 1, 8, 8) inputs (for a CNN) instead of (N, 64);
    `subset` keeps the first N training examples (smoke tests)."""
    try:
        from sklearn.datasets import load_digits as sk_load_digits
        from sklearn.model_selection import train_test_split
    except ImportError:  # pragma: no cover - scikit-learn is a declared dependency of the train extra
        raise AscendError("training needs scikit-learn (pip install 'ascend-mp[train]')") from None
    if not 0 < test_fraction < 1:
        raise AscendError(f"the test fraction must be in (0, 1), got {test_fraction}")
    digits = sk_load_digits()
    x = digits.data.astype(np.float64)
    y = digits.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(x, y, test_size=test_fraction, random_state=0, stratify=y)
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
