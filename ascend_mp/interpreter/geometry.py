"""Window geometry of the convolution and pooling kernels, on NCHW tensors.

:class:`ConvGeometry` (strides, dilations, pads, groups: the forward convolution by im2col and
one fp32 matmul, and both backprops), :class:`PoolGeometry` (TF's SAME/VALID pooling) and
:class:`PadPoolGeometry` (MaxPoolV3/AvgPoolV2: explicit pads, ceil_mode, global pooling), the
filter-tap helpers they share (:func:`tap_span`, :func:`tap_view`), and the data_format
helpers of the kernels (NHWC data is transposed to NCHW and back).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ascend_mp.dialects.ascend import pool_pads, pool_v2_out
from ascend_mp.interpreter.numerics import Array
from ascend_mp.interpreter.spec import KernelError, OpSpec


def channel_axis(fmt: str, rank: int) -> int:
    return 1 if fmt == "NCHW" else rank - 1


def spatial(fmt: str) -> tuple[int, int]:
    """Indices of H and W in a 4-entry strides/ksize/dilations list."""
    return (2, 3) if fmt == "NCHW" else (1, 2)


def to_nchw(x: Array, fmt: str) -> Array:
    return x if fmt == "NCHW" else x.transpose(0, 3, 1, 2)


def from_nchw(y: Array, fmt: str) -> Array:
    return y if fmt == "NCHW" else y.transpose(0, 2, 3, 1)


def contig(x: Array) -> Array:
    return np.ascontiguousarray(x)


def oihw(w: Array, fmt: str) -> Array:
    return w if fmt == "NCHW" else w.transpose(3, 2, 0, 1)


def nchw_shape(shape: tuple[int, ...], fmt: str) -> tuple[int, int, int, int]:
    n, a, b, c = shape
    return (n, a, b, c) if fmt == "NCHW" else (n, c, a, b)


@dataclass(frozen=True)
class ConvGeometry:
    """A Conv2D in NCHW/OIHW terms: strides, dilations, pads (top, bottom, left, right), groups."""

    sh: int
    sw: int
    dh: int
    dw: int
    pads: tuple[int, int, int, int]
    groups: int

    @classmethod
    def of(cls, spec: OpSpec, groups: int | None = None) -> ConvGeometry:
        h, w = spatial(spec.attr("data_format"))
        s = spec.attr("strides")
        d = spec.attr("dilations")
        p = tuple(spec.attr("pads"))
        g = groups if groups is not None else int(spec.attr("groups"))
        return cls(s[h], s[w], d[h], d[w], (p[0], p[1], p[2], p[3]), g)

    def out_size(self, h: int, w: int, kh: int, kw: int) -> tuple[int, int]:
        pt, pb, pl, pr = self.pads
        oh = (h + pt + pb - (self.dh * (kh - 1) + 1)) // self.sh + 1
        ow = (w + pl + pr - (self.dw * (kw - 1) + 1)) // self.sw + 1
        return oh, ow

    def windows(self, x: Array, kh: int, kw: int) -> Array:
        """(N, C, OH, OW, KH, KW) view of the (padded, strided, dilated) windows of `x` (N, C, H, W)."""
        oh, ow = self.out_size(x.shape[2], x.shape[3], kh, kw)
        pt, pb, pl, pr = self.pads
        if any(self.pads):
            x = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
        eh, ew = self.dh * (kh - 1) + 1, self.dw * (kw - 1) + 1
        win = sliding_window_view(x, (eh, ew), axis=(2, 3))  # N, C, H', W', eh, ew
        return win[:, :, : (oh - 1) * self.sh + 1 : self.sh, : (ow - 1) * self.sw + 1 : self.sw, :: self.dh, :: self.dw]

    def columns(self, x: Array, kh: int, kw: int) -> Array:
        """im2col: (N*OH*OW, G, C/G*KH*KW) patches of padded `x` (N, C, H, W)."""
        n, c, h, w = x.shape
        oh, ow = self.out_size(h, w, kh, kw)
        win = self.windows(x, kh, kw)
        return win.transpose(0, 2, 3, 1, 4, 5).reshape(n * oh * ow, self.groups, (c // self.groups) * kh * kw)

    def patches(self, x: Array, kh: int, kw: int) -> Array:
        """im2col, channel-major: (N, C*KH*KW, OH*OW) patches of `x` (N, C, H, W), padding as zeros; a 1x1
        window without padding or dilation is a strided view of `x` (no copy at stride 1). Else one copy
        per filter tap: at stride 1 with an output as wide as x (resnet's 3x3), one flat shifted copy
        (:func:`_copy_shifted_tap`); for a strided window of many taps (the 7x7 stem), a stride-1 copy
        from x split by stride phase (:meth:`phases`); else a copy of the output rows it reads."""
        n, c, h, w = x.shape
        oh, ow = self.out_size(h, w, kh, kw)
        if kh == kw == 1 and not any(self.pads):
            return x[:, :, : (oh - 1) * self.sh + 1 : self.sh, : (ow - 1) * self.sw + 1 : self.sw].reshape(
                n, c, oh * ow
            )
        cols = np.empty((n, c, kh, kw, oh, ow), x.dtype)
        pt, _, pl, _ = self.pads
        if self.sh == self.sw == 1 and ow == w:  # output rows align with x's: one flat copy per tap
            xf, flat = contig(x).reshape(n, c, h * w), cols.reshape(n, c, kh * kw, oh * ow)
            for a in range(kh):
                for b in range(kw):
                    _copy_shifted_tap(
                        cols[:, :, a, b], flat[:, :, a * kw + b], xf, h, a * self.dh - pt, b * self.dw - pl
                    )
            return cols.reshape(n, c * kh * kw, oh * ow)
        if kh * kw >= 4 * self.sh * self.sw > 4:  # a strided window of many taps (resnet's 7x7 stem)
            phases = self.phases(x, kh, kw, oh, ow)
            for a in range(kh):
                u, p = divmod(a * self.dh, self.sh)
                for b in range(kw):
                    v, q = divmod(b * self.dw, self.sw)
                    cols[:, :, a, b] = phases[p, q][:, :, u : u + oh, v : v + ow]
            return cols.reshape(n, c * kh * kw, oh * ow)
        for a in range(kh):  # one slice copy per filter tap (the copy streams whole output rows)
            rows = (*tap_span(oh, h, self.sh, a * self.dh - pt), self.sh)
            for b in range(kw):
                _copy_tap(cols[:, :, a, b], x, rows, (*tap_span(ow, w, self.sw, b * self.dw - pl), self.sw))
        return cols.reshape(n, c * kh * kw, oh * ow)

    def phases(self, x: Array, kh: int, kw: int, oh: int, ow: int) -> dict[tuple[int, int], Array]:
        """The zero-padded x split by stride phase: (p, q) -> the contiguous padded x[:, :, p::SH, q::SW],
        so that tap (a, b) reads phase (a*DH % SH, b*DW % SW) from row a*DH // SH, column b*DW // SW
        with stride 1 (for every phase some tap reads; one strided pass over x instead of one per tap)."""
        n, c, h, w = x.shape
        pt, _, pl, _ = self.pads
        hp = (oh - 1) * self.sh + self.dh * (kh - 1) + 1  # the padded extent the windows read
        wp = (ow - 1) * self.sw + self.dw * (kw - 1) + 1
        xp = np.zeros((n, c, hp + self.sh, wp + self.sw), x.dtype)  # a stride's margin: every phase is as long
        rows, cols = max(0, min(h, hp - pt)), max(0, min(w, wp - pl))
        xp[:, :, pt : pt + rows, pl : pl + cols] = x[:, :, :rows, :cols]
        needed = {((a * self.dh) % self.sh, (b * self.dw) % self.sw) for a in range(kh) for b in range(kw)}
        return {(p, q): contig(xp[:, :, p :: self.sh, q :: self.sw]) for p, q in needed}

    def forward(self, x: Array, w: Array) -> Array:
        """y (N, O, OH, OW) = conv(x (N, C, H, W), w (O, C/G, KH, KW))."""
        n, _, h, wd = x.shape
        o, i, kh, kw = w.shape
        g = self.groups
        oh, ow = self.out_size(h, wd, kh, kw)
        if g == 1:  # (O, C*K) @ (N, C*K, OH*OW): the products land in NCHW order, one fp32 matmul
            return np.matmul(w.reshape(o, i * kh * kw), self.patches(x, kh, kw)).reshape(n, o, oh, ow)
        cols = self.patches(x, kh, kw).reshape(n, g, i * kh * kw, oh * ow)  # channel-major, so group-major
        return np.matmul(w.reshape(g, o // g, i * kh * kw), cols).reshape(n, o, oh, ow)  # N, G, O/G, P: NCHW

    def backprop_filter(self, x: Array, dy: Array, filter_shape: tuple[int, ...]) -> Array:
        """dw (O, C/G, KH, KW) of the forward conv, from its input x and output gradient dy."""
        o, i, kh, kw = filter_shape
        g = self.groups
        cols = self.columns(x, kh, kw)  # P, G, I*K
        dym = dy.transpose(0, 2, 3, 1).reshape(-1, g, o // g)  # P, G, O/G
        dw = np.matmul(dym.transpose(1, 2, 0), cols.transpose(1, 0, 2))  # G, O/G, I*K
        return dw.reshape(o, i, kh, kw)

    def backprop_input(self, w: Array, dy: Array, input_shape: tuple[int, ...]) -> Array:
        """dx (N, C, H, W) of the forward conv, from its filter w and output gradient dy."""
        n, c, h, wd = input_shape
        o, i, kh, kw = w.shape
        g = self.groups
        oh, ow = dy.shape[2], dy.shape[3]
        dym = dy.transpose(0, 2, 3, 1).reshape(-1, g, o // g).transpose(1, 0, 2)  # G, P, O/G
        dcols = np.matmul(dym, w.reshape(g, o // g, i * kh * kw))  # G, P, I*K
        dcols = dcols.reshape(g, n, oh, ow, i, kh, kw).transpose(1, 0, 4, 5, 6, 2, 3).reshape(n, c, kh, kw, oh, ow)
        pt, pb, pl, pr = self.pads
        dx = np.zeros((n, c, h + pt + pb, wd + pl + pr), dcols.dtype)
        for a in range(kh):  # a loop over filter taps, not pixels
            h0 = a * self.dh
            for b in range(kw):
                w0 = b * self.dw
                dx[:, :, h0 : h0 + (oh - 1) * self.sh + 1 : self.sh, w0 : w0 + (ow - 1) * self.sw + 1 : self.sw] += (
                    dcols[:, :, a, b]
                )
        return contig(dx[:, :, pt : pt + h, pl : pl + wd])


def tap_span(n_out: int, n_in: int, stride: int, offset: int) -> tuple[int, int, int]:
    """(first, end, first input index) of the outputs i whose tap i*stride + offset lies inside [0, n_in)."""
    lo = max(0, -(offset // stride))
    hi = max(lo, min(n_out, (n_in - 1 - offset) // stride + 1))
    return lo, hi, lo * stride + offset


def tap_view(x: Array, rows: tuple[int, int, int, int], cols: tuple[int, int, int, int]) -> Array:
    """The elements of x (N, C, H, W) that one window tap reads for outputs i0 <= i < i1, j0 <= j < j1:
    rows r0 + s*(i - i0), columns c0 + s*(j - j0) (`rows`/`cols` = (i0, i1, r0, s), from :func:`tap_span`)."""
    i0, i1, r0, sh = rows
    j0, j1, c0, sw = cols
    return x[:, :, r0 : r0 + (i1 - i0 - 1) * sh + 1 : sh, c0 : c0 + (j1 - j0 - 1) * sw + 1 : sw]


def _copy_tap(dst: Array, x: Array, rows: tuple[int, int, int, int], cols: tuple[int, int, int, int]) -> None:
    """dst (N, C, OH, OW) = what one filter tap reads from x (:func:`tap_view`), zero elsewhere (the padding)."""
    i0, i1 = rows[:2]
    j0, j1 = cols[:2]
    if i1 == i0 or j1 == j0:
        dst[...] = 0
        return
    if i0:
        dst[:, :, :i0] = 0
    if i1 < dst.shape[2]:
        dst[:, :, i1:] = 0
    if j0:
        dst[:, :, i0:i1, :j0] = 0
    if j1 < dst.shape[3]:
        dst[:, :, i0:i1, j1:] = 0
    dst[:, :, i0:i1, j0:j1] = tap_view(x, rows, cols)


def _copy_shifted_tap(dst: Array, flat: Array, xf: Array, h: int, dr: int, dc: int) -> None:
    """dst (N, C, OH, W), and `flat`, the same memory as (N, C, OH*W), = x at rows i + dr, columns
    j + dc, zero outside x (one stride-1 filter tap whose output is as wide as x; `xf` is x
    (N, C, H, W) as (N, C, H*W)). Flat, the tap is x shifted by dr*W + dc: one copy of long
    contiguous runs; then the columns it wrapped around (|dc| per row) and the rows outside x
    are zeroed."""
    oh, w = dst.shape[2], dst.shape[3]
    i0, i1 = max(0, -dr), min(oh, h - dr)
    if i1 <= i0 or abs(dc) >= w:
        dst[...] = 0
        return
    lo, hi = i0 * w, i1 * w
    src_lo, src_hi = lo + dr * w + dc, hi + dr * w + dc  # may pass x's ends by |dc|: those are wrapped columns
    s0, s1 = max(src_lo, 0), min(src_hi, h * w)
    flat[:, :, lo + s0 - src_lo : hi - (src_hi - s1)] = xf[:, :, s0:s1]
    if lo:
        flat[:, :, :lo] = 0
    if hi < flat.shape[2]:
        flat[:, :, hi:] = 0
    if dc < 0:
        dst[:, :, i0:i1, :-dc] = 0
    elif dc > 0:
        dst[:, :, i0:i1, w - dc :] = 0


@dataclass(frozen=True)
class PoolGeometry:
    """TF pooling on the H and W dimensions of an NCHW tensor."""

    kh: int
    kw: int
    sh: int
    sw: int
    same: bool

    @classmethod
    def of(cls, spec: OpSpec) -> PoolGeometry:
        fmt = spec.attr("data_format")
        k, s = spec.attr("ksize"), spec.attr("strides")
        h, w = spatial(fmt)
        others = [i for i in range(4) if i not in (h, w)]
        if any(k[i] != 1 or s[i] != 1 for i in others):
            raise KernelError(
                f"{spec.type} pools only over H and W: ksize {list(k)} and strides {list(s)} must be 1 elsewhere"
            )
        return cls(k[h], k[w], s[h], s[w], spec.attr("padding") == "SAME")

    def layout(self, h: int, w: int) -> tuple[int, int, int, int, int, int]:
        """(OH, OW, pad top, pad bottom, pad left, pad right), TF's SAME/VALID rule."""
        if not self.same:
            return (h - self.kh) // self.sh + 1, (w - self.kw) // self.sw + 1, 0, 0, 0, 0
        oh, ow = -(-h // self.sh), -(-w // self.sw)
        ph = max((oh - 1) * self.sh + self.kh - h, 0)
        pw = max((ow - 1) * self.sw + self.kw - w, 0)
        return oh, ow, ph // 2, ph - ph // 2, pw // 2, pw - pw // 2

    def windows(self, x: Array, fill: float) -> Array:
        """(N, C, OH, OW, KH, KW) windows of `x` padded with `fill`."""
        oh, ow, pt, pb, pl, pr = self.layout(x.shape[2], x.shape[3])
        if pt or pb or pl or pr:
            x = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)), constant_values=fill)
        win = sliding_window_view(x, (self.kh, self.kw), axis=(2, 3))
        return win[:, :, : (oh - 1) * self.sh + 1 : self.sh, : (ow - 1) * self.sw + 1 : self.sw]

    def counts(self, h: int, w: int, dtype: np.dtype[Any]) -> Array | int:
        """Number of valid (unpadded) elements per window: TF's SAME AvgPool divisor."""
        if not self.same:
            return self.kh * self.kw
        ones = np.ones((1, 1, h, w), dtype)
        return self.windows(ones, 0.0).sum(axis=(4, 5))

    def scatter(self, taps: Callable[[int, int], Array], shape: tuple[int, ...], dtype: np.dtype[Any]) -> Array:
        """Sum `taps(a, b)` (N, C, OH, OW) back onto the input positions of window tap (a, b)."""
        n, c, h, w = shape
        oh, ow, pt, pb, pl, pr = self.layout(h, w)
        dx = np.zeros((n, c, h + pt + pb, w + pl + pr), dtype)
        for a in range(self.kh):  # a loop over window taps, not pixels
            for b in range(self.kw):
                dx[:, :, a : a + (oh - 1) * self.sh + 1 : self.sh, b : b + (ow - 1) * self.sw + 1 : self.sw] += taps(
                    a, b
                )
        return contig(dx[:, :, pt : pt + h, pl : pl + w])


def pool_geometry(spec: OpSpec) -> PoolGeometry:
    """TF SAME/VALID pooling (MaxPool, AvgPool) or explicit-pad pooling (MaxPoolV3, AvgPoolV2)."""
    return PadPoolGeometry.of(spec) if spec.type in ("MaxPoolV3", "AvgPoolV2") else PoolGeometry.of(spec)


@dataclass(frozen=True)
class PadPoolGeometry(PoolGeometry):
    """MaxPoolV3/AvgPoolV2 pooling: explicit pads or TF's SAME/VALID, ceil_mode, global pooling."""

    mode: str = "CALCULATED"
    pads: tuple[int, int, int, int] = (0, 0, 0, 0)
    ceil_mode: bool = False
    exclusive: bool = True

    @classmethod
    def of(cls, spec: OpSpec) -> PadPoolGeometry:
        fmt = spec.attr("data_format")
        exclusive = bool(spec.attr("exclusive")) if spec.type == "AvgPoolV2" else True
        if spec.attr("global_pooling"):  # the window is the whole (static) H x W
            n, c, h, w = nchw_shape(spec.in_shapes[0], fmt)
            if min(h, w) < 0:
                raise KernelError(f"{spec.type} with global_pooling needs a static H and W, got {spec.in_shapes[0]}")
            return cls(h, w, 1, 1, False, "VALID", exclusive=exclusive)
        k, s, p = spec.attr("ksize"), spec.attr("strides"), tuple(spec.attr("pads"))
        h, w = spatial(fmt)
        if any(k[i] != 1 or s[i] != 1 for i in range(4) if i not in (h, w)):
            raise KernelError(
                f"{spec.type} pools only over H and W: ksize {list(k)} and strides {list(s)} must be 1 elsewhere"
            )
        return cls(
            k[h],
            k[w],
            s[h],
            s[w],
            False,
            spec.attr("padding_mode"),
            (p[0], p[1], p[2], p[3]),
            bool(spec.attr("ceil_mode")),
            exclusive,
        )

    def layout(self, h: int, w: int) -> tuple[int, int, int, int, int, int]:
        """(OH, OW, pad top, pad bottom, pad left, pad right); bottom/right include the ceil_mode overhang."""
        pt, pb = pool_pads(h, self.kh, self.sh, self.mode, self.pads[0], self.pads[1])
        pl, pr = pool_pads(w, self.kw, self.sw, self.mode, self.pads[2], self.pads[3])
        oh = pool_v2_out(h, self.kh, self.sh, pt, pb, self.ceil_mode)
        ow = pool_v2_out(w, self.kw, self.sw, pl, pr, self.ceil_mode)
        extra_h = max((oh - 1) * self.sh + self.kh - (h + pt + pb), 0)
        extra_w = max((ow - 1) * self.sw + self.kw - (w + pl + pr), 0)
        return oh, ow, pt, pb + extra_h, pl, pr + extra_w

    def counts(self, h: int, w: int, dtype: np.dtype[Any]) -> Array | int:
        """AvgPoolV2's per-window divisor: input elements (`exclusive`) or elements of the padded
        input (the ceil_mode overhang excluded), shaped (1, 1, OH, OW)."""
        if self.exclusive:
            return self.windows(np.ones((1, 1, h, w), dtype), 0.0).sum(axis=(4, 5))
        pt, pb = pool_pads(h, self.kh, self.sh, self.mode, self.pads[0], self.pads[1])
        pl, pr = pool_pads(w, self.kw, self.sw, self.mode, self.pads[2], self.pads[3])
        oh, ow, _, pb_all, _, pr_all = self.layout(h, w)
        inside = np.zeros((1, 1, h + pt + pb_all, w + pl + pr_all), dtype)
        inside[:, :, : h + pt + pb, : w + pl + pr] = 1
        win = sliding_window_view(inside, (self.kh, self.kw), axis=(2, 3))
        return win[:, :, : (oh - 1) * self.sh + 1 : self.sh, : (ow - 1) * self.sw + 1 : self.sw].sum(axis=(4, 5))
