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
from typing import Any

import numpy as np

from ascend_mp.errors import AscendError

DATA_FILE = "digits.npz"
"""Package resource of `ascend_mp.train`: `images` (1797x64 uint8), `target` (uint8),
`train_index` and `test_index` (uint16, the split in order)."""


class Features:
    """The inputs of a model with several inputs: named arrays of one length, indexed together
    like one array (`features[idx]` selects the same examples of each)."""

    def __init__(self, arrays: dict[str, np.ndarray]):
        self.arrays = arrays

    def __len__(self) -> int:
        return len(next(iter(self.arrays.values())))

    def __getitem__(self, idx: Any) -> Features:
        return Features({k: v[idx] for k, v in self.arrays.items()})


def example_shape(x: np.ndarray | Features) -> Any:
    """One example's shape: `x.shape[1:]`, or ((name, shape), ...) for `Features`."""
    if isinstance(x, Features):
        return tuple((k, v.shape[1:]) for k, v in x.arrays.items())
    return x.shape[1:]


def pad_batch(x: Any, batch: int) -> Any:
    """`x` (an array or `Features` of at most `batch` examples) padded with zeros to `batch`."""
    if isinstance(x, Features):
        return Features({k: pad_batch(v, batch) for k, v in x.arrays.items()})
    n = len(x)
    return x if n == batch else np.concatenate([x, np.zeros((batch - n, *x.shape[1:]), x.dtype)])


@dataclass(frozen=True)
class Dataset:
    """Standardised fp32 features (or `Features` of a model with several inputs), one-hot fp32
    labels and integer classes."""

    x_train: Any
    y_train: np.ndarray
    x_test: Any
    y_test: np.ndarray
    num_classes: int = 10

    def onehot(self, y: np.ndarray) -> np.ndarray:
        return np.eye(self.num_classes, dtype=np.float32)[y]


def _read_digits() -> dict[str, np.ndarray]:
    try:
        with (
            resources.files("ascend_mp.train").joinpath(DATA_FILE).open("rb") as f,
            np.load(f, allow_pickle=False) as data,
        ):
            return {k: np.array(data[k]) for k in ("images", "target", "train_index", "test_index")}
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as e:  # pragma: no cover - a broken installation
        raise AscendError(
            f"the digits data shipped with ascend-mp cannot be read ({type(e).__name__}: {e}); reinstall the package"
        ) from None


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


BREAST_CANCER_FILE = "breast_cancer.npz"
"""Package resource of `ascend_mp.train`: `features` (569x30 float64), `target` (uint8: 0
malignant, 1 benign), `train_index` and `test_index` (uint16: a fixed split, 80/20 stratified
by a seeded permutation per class). UCI's "Breast Cancer Wisconsin (Diagnostic)" (W. H. Wolberg,
W. N. Street, O. L. Mangasarian; CC BY 4.0) as scikit-learn 1.6.1 ships it
(`sklearn/datasets/data/breast_cancer.csv`), the second real data set of the training
measurements (scikit-learn's only image set, digits, is the first; its other image set, Olivetti
faces, is downloaded at run time)."""


def load_breast_cancer() -> Dataset:
    """The breast-cancer split: (N, 30) standardised features (training-set statistics), 2 classes."""
    try:
        with (
            resources.files("ascend_mp.train").joinpath(BREAST_CANCER_FILE).open("rb") as f,
            np.load(f, allow_pickle=False) as data,
        ):
            raw = {k: np.array(data[k]) for k in ("features", "target", "train_index", "test_index")}
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as e:  # pragma: no cover - a broken installation
        raise AscendError(
            f"the breast-cancer data shipped with ascend-mp cannot be read ({type(e).__name__}: {e}); reinstall the package"
        ) from None
    x, y = raw["features"], raw["target"].astype(np.int64)
    train, test = raw["train_index"].astype(np.int64), raw["test_index"].astype(np.int64)
    mean, std = x[train].mean(axis=0), x[train].std(axis=0)
    x = (x - mean) / np.where(std == 0, 1.0, std)
    return Dataset(x[train].astype(np.float32), y[train], x[test].astype(np.float32), y[test], 2)


# --------------------------------------------------------------------------------------
# The user's data: an .npz file
# --------------------------------------------------------------------------------------


def _read_npz(path: str) -> dict[str, np.ndarray]:
    try:
        with np.load(path, allow_pickle=False) as data:
            return {k: np.asarray(data[k]) for k in data.files}
    except FileNotFoundError:
        raise AscendError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise AscendError(f"{path}: is a folder, expected an .npz file") from None
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as e:
        raise AscendError(
            f"{path}: not a readable .npz file ({type(e).__name__}: {' '.join(str(e).split())})"
        ) from None


def _input(path: str, key: str, x: np.ndarray) -> np.ndarray:
    if x.dtype.kind not in "fiub" or x.ndim < 2:
        raise AscendError(
            f"{path}: '{key}' must be a numeric array of examples (rank >= 2), got {x.dtype} of shape {x.shape}"
        )
    x = x.astype(np.int64 if x.dtype.kind in "iu" else np.float32)  # integer inputs (token ids) stay integers
    if x.dtype.kind == "f" and not np.all(np.isfinite(x)):
        raise AscendError(f"{path}: '{key}' holds non-finite values")
    return x


def _examples(path: str, input_names: list[str] | None) -> tuple[Any, np.ndarray]:
    """(inputs, integer labels) of one file: keys `x` and `y`, or the model's input names and
    `labels` (several inputs give `Features`)."""
    arrays = _read_npz(path)
    keys = ", ".join(sorted(arrays)) or "none"
    names = input_names or []
    if "x" in arrays and "y" in arrays and len(names) <= 1:
        x: Any = _input(path, "x", arrays["x"])
        y, yk = arrays["y"], "y"
    elif names and all(n in arrays for n in names) and "labels" in arrays:
        xs = {n: _input(path, n, arrays[n]) for n in names}
        lengths = {n: len(v) for n, v in xs.items()}
        if len(set(lengths.values())) > 1:
            raise AscendError(f"{path}: the inputs hold different numbers of examples ({lengths})")
        x = xs[names[0]] if len(names) == 1 else Features(xs)
        y, yk = arrays["labels"], "labels"
    else:
        quoted = ", ".join(f"'{n}'" for n in names)
        named = (
            f"{quoted} and 'labels'"
            if len(names) > 1
            else "'x' and 'y'" + (f", or {quoted} and 'labels'" if names else "")
        )
        raise AscendError(f"{path}: expected arrays {named}; the file holds {keys}")
    if y.dtype.kind not in "iu" or y.shape != (len(x),):
        raise AscendError(
            f"{path}: '{yk}' must hold one integer class per example (shape ({len(x)},)), got {y.dtype} of shape {y.shape}"
        )
    if y.size and y.min() < 0:
        raise AscendError(f"{path}: '{yk}' holds a negative class ({int(y.min())})")
    return x, y.astype(np.int64)


def load_npz(
    path: str,
    val: str | None = None,
    val_split: float | None = None,
    input_names: list[str] | None = None,
    num_classes: int | None = None,
    seed: int = 0,
) -> Dataset:
    """Training data from an .npz file (`x`/`y`, or the model's `input_names` and `labels`;
    integer classes; several inputs give `Features`);
    validation from `val` (same keys) or the last `val_split` (default 0.1) of a seeded shuffle.
    `num_classes` defaults to the largest class + 1. Inputs are used as they are (no scaling):
    float32, or int64 for integer arrays (token ids)."""
    x, y = _examples(path, input_names)
    if val is not None:
        xv, yv = _examples(val, input_names)
        if example_shape(xv) != example_shape(x):
            raise AscendError(f"{val}: examples of shape {example_shape(xv)}, the training data has {example_shape(x)}")
    else:
        split = 0.1 if val_split is None else val_split
        if not 0 < split < 1:
            raise AscendError(f"--val-split must be in (0, 1), got {split:g}")
        order = np.random.default_rng(seed).permutation(len(x))
        n_val = max(1, round(split * len(x)))
        if n_val >= len(x):
            raise AscendError(f"{path}: {len(x)} examples are too few to hold out {split:g} for validation")
        x, y, xv, yv = x[order[n_val:]], y[order[n_val:]], x[order[:n_val]], y[order[:n_val]]
    classes = int(max(y.max(initial=0), yv.max(initial=0))) + 1
    if num_classes is not None:
        if classes > num_classes:
            raise AscendError(f"{path}: the labels go up to class {classes - 1}, the model gives {num_classes} classes")
        classes = num_classes
    return Dataset(x, y, xv, yv, classes)


def builder_for(kind: str, data: Dataset) -> tuple[Any, Dataset]:
    """The built-in model `kind` sized to `data`: `mlp` (features-128-classes, inputs
    flattened) or `cnn` ((C, H, W) inputs: conv 3x3 (8) -> relu -> maxpool 2 -> dense)."""
    from ascend_mp.builder import Conv2D, Dense, Flatten, MaxPool, Relu, Sequential, mlp

    data = Dataset(
        data.x_train.astype(np.float32), data.y_train, data.x_test.astype(np.float32), data.y_test, data.num_classes
    )
    if kind == "mlp":
        flat = Dataset(
            data.x_train.reshape(len(data.x_train), -1),
            data.y_train,
            data.x_test.reshape(len(data.x_test), -1),
            data.y_test,
            data.num_classes,
        )
        return mlp((flat.x_train.shape[1], 128, data.num_classes)), flat
    c_h_w = data.x_train.shape[1:]
    if len(c_h_w) != 3 or min(c_h_w[1:]) < 2:
        raise AscendError(f"--model cnn takes (C, H, W) examples with H, W >= 2, the data has {c_h_w}")
    c, h, w = c_h_w
    layers = [Conv2D(c, 8, 3, pad=1), Relu(), MaxPool(2), Flatten(), Dense(8 * (h // 2) * (w // 2), data.num_classes)]
    return Sequential(layers, input_shape=c_h_w, name="cnn"), data
