"""Kinds of torch values: a tensor with a dtype, shape, device and grad state the call
needs (:class:`Tensor`, returned as given), indices in a range
(:class:`Indices`), a seeded ``torch.Generator`` (:class:`Generator`) and a boolean mask,
an array or a tensor (:class:`Mask`)."""

from __future__ import annotations

import math

import numpy as np

from fedtheory.constraints.arrays import Array, _has_text
from fedtheory.constraints.hostile import HUGE_INT
from fedtheory.constraints.kind import Constraint, _dimension, _lookup, refuse


class Tensor(Array):
    """A torch tensor of ``dtype`` (float64 by default; ``"int64"`` for indices) with the
    declared shape, every entry finite and in the interval; returned as given (no copy).
    The entries are read on the CPU only: on an accelerator reading them would synchronise
    the host with the device (and break graph capture), so there only the type, dtype and
    shape are checked and the simulator's finiteness check after each round reports a
    non-finite value."""

    def __init__(self, *, dtype: str = "float64", dtype_of: str | None = None, **kwargs):
        super().__init__(**kwargs)
        self.dtype, self.dtype_of = dtype, dtype_of

    def _other_dtype(self, args):
        """The dtype of the tensor ``dtype_of`` names (``"table.updates"``), if known."""
        other = _lookup(self.dtype_of, args) if self.dtype_of else None
        return getattr(other, "dtype", None)

    def describe(self, args):
        dtype = self._other_dtype(args)
        what = (
            self.dtype
            if dtype is None
            else f"{str(dtype).removeprefix('torch.')} (as '{self.dtype_of}')"
        )
        return super().describe(args).replace("an array", f"a {what} tensor", 1)

    def check(self, value, name, owner, args):
        import torch

        if isinstance(value, torch.Tensor) and value.requires_grad:  # never read through autograd
            what = f"{self.describe(args)}, not requiring grad (pass {name}.detach())"
            raise refuse(name, owner, what, value.detach())
        return super().check(value, name, owner, args)

    def _dtype_ok(self, value, args=None) -> bool:
        other = self._other_dtype(args or {})
        if other is not None:
            return value.dtype == other
        if self.dtype == "floating":
            return value.is_floating_point()
        import torch

        return value.dtype == getattr(torch, self.dtype)

    def convert(self, value, args):
        import torch

        if not isinstance(value, torch.Tensor) or not self._dtype_ok(value, args):
            return None
        if value.requires_grad:  # inside a list or a record: refused without the hint
            return None
        if value.device.type != "cpu" or self._shape_only():
            want = self._want_shape(args)
            if self.ndim is not None and value.dim() not in self._ndims():
                return None
            if want is not None and value.dim() < len(want) or value.numel() < self.min_size:
                return None
            pairs = zip(want or (), value.shape[value.dim() - len(want or ()) :], strict=True)
            return value if all(s in (None, n) for s, n in pairs) else None
        return value if super().convert(value, args) is not None else None

    def _shape_only(self) -> bool:
        """Whether nothing about the entries is declared (``finite=False``, no interval):
        then the entries are not read at all, on any device (a per-round argument of the
        simulator costs no copy)."""
        e = self.entries
        return not self.finite and e.low is None and e.high is None and type(self) is Tensor

    def hostile(self):
        import torch

        nan = [("nan tensor", torch.tensor([0.5, math.nan], dtype=torch.float64))]
        return [*super().hostile(), ("array", np.zeros(2)), *(nan if self.finite else [])]

    def example(self, args):
        import torch

        return torch.as_tensor(super().example(args)).to(self._torch_dtype())

    def _torch_dtype(self):
        import torch

        return torch.float64 if self.dtype == "floating" else getattr(torch, self.dtype)

    def _edge(self, a):
        import torch

        return torch.as_tensor(a).to(self._torch_dtype())


class Indices(Tensor):
    """An int64 tensor of indices in ``[0, count)`` (``count``: a number, a parameter or an
    attribute such as ``"self.num_clients"``) with the declared shape."""

    def __init__(self, count: int | str, *, shape=None, none: bool = False, min_size: int = 1):
        super().__init__(dtype="int64", shape=shape, low=0, none=none, min_size=min_size)
        self.count = count

    def describe(self, args):
        n = _dimension(self.count, args)
        return super().describe(args).replace(", finite, with entries in [0, inf)",
                                              f" with entries in [0, {n})", 1)  # fmt: skip

    def convert(self, value, args):
        out = super().convert(value, args)
        n = _dimension(self.count, args)
        if out is None or n is None or out.device.type != "cpu" or out.numel() == 0:
            return out
        return out if int(out.max()) < n else None

    def hostile(self):
        import torch

        return [*super().hostile(), ("float tensor", torch.zeros(2, dtype=torch.float64)),
                ("out of range", torch.tensor([HUGE_INT // 2**8]))]  # fmt: skip

    def edges(self, valid):
        return []

    def example(self, args):
        import torch

        want = self._want_shape(args)
        return torch.zeros(tuple(2 if s is None else s for s in want or (2,)), dtype=torch.int64)


class Generator(Constraint):
    """A ``torch.Generator`` (``numpy=True``: a ``numpy.random.Generator``, e.g.
    :func:`fedtheory.rng.numpy_rng`); never the global random state."""

    def __init__(self, *, numpy: bool = False, none: bool = False):
        self.numpy, self.none = numpy, none

    def describe(self, args):
        return "a numpy.random.Generator" if self.numpy else "a torch.Generator"

    def _kind(self) -> type:
        import torch

        return np.random.Generator if self.numpy else torch.Generator

    def convert(self, value, args):
        return value if isinstance(value, self._kind()) else None

    def hostile(self):
        import torch

        other = ("torch generator", torch.Generator()) if self.numpy else (
            "numpy generator", np.random.default_rng(0))  # fmt: skip
        return [*super().hostile(), ("seed", 0), other]

    def example(self, args):
        import torch

        return np.random.default_rng(0) if self.numpy else torch.Generator().manual_seed(0)


class Mask(Constraint):
    """A boolean mask (availability, participation) of ``ndim`` dimensions or ``shape``
    (entries as for :class:`Array`): a NumPy array (``True``/``False`` or 0/1 numbers,
    returned as a bool array) or, with ``tensor=True``, a ``torch.bool`` tensor (returned
    as given, its entries never read: a mask's every value is valid); ``copy=False``
    returns a bool NumPy array as given (a run record's masks, not duplicated)."""

    def __init__(self, *, ndim=None, shape=None, tensor=False, min_size=0, copy=True,
                 none=False):  # fmt: skip
        self.leading = shape is not None and shape[0] is Ellipsis  # (..., N): trailing dims
        shape = shape[1:] if self.leading else shape
        self.ndim = len(shape) if shape is not None and not self.leading else ndim
        self.shape, self.tensor, self.min_size, self.none = shape, tensor, min_size, none
        self.copy = copy

    def describe(self, args):
        what = "a torch.bool tensor" if self.tensor else "a boolean (0/1) array"
        want = None if self.shape is None else tuple(_dimension(s, args) for s in self.shape)
        if want is not None:
            dims = ["..."] * self.leading + ["any" if s is None else str(s) for s in want]
            return what + " of shape (" + ", ".join(dims) + ")"
        return what + ("" if self.ndim is None else f" with {self.ndim} dimension(s)")

    def _shape_ok(self, shape, args) -> bool:
        if self.ndim is not None and len(shape) != self.ndim:
            return False
        want = None if self.shape is None else [_dimension(s, args) for s in self.shape]
        if want is not None and len(shape) < len(want):
            return False
        trailing = shape[len(shape) - len(want or ()) :] if self.leading else shape
        return all(w in (None, n) for w, n in zip(want or (), trailing, strict=False))

    def convert(self, value, args):
        if self.tensor:
            import torch

            ok = isinstance(value, torch.Tensor) and value.dtype == torch.bool
            return value if ok and self._shape_ok(value.shape, args) else None
        if _has_text(value):
            return None
        if type(value).__module__ == "torch":
            value = value.detach().cpu().numpy()
        a = np.asarray(value)
        if a.dtype.kind not in "biuf" or not self._shape_ok(a.shape, args):
            return None
        if a.size < self.min_size or not (a.dtype == bool or np.isin(a, (0, 1)).all()):
            return None
        return a.astype(bool, copy=self.copy)

    def hostile(self):
        bad = [*super().hostile(), ("string", "1"), ("ragged", [[True], [True, False]])]
        if self.ndim is not None:
            bad.append(("wrong dimensions", np.ones((2,) * (self.ndim + 1), dtype=bool)))
        return bad if self.tensor else [*bad, ("two", np.full((2,) * (self.ndim or 1), 2))]

    def example(self, args):
        shape = tuple(
            2 if s is None else s
            for s in (self.shape or (None,) * (self.ndim or 1))
            for s in [_dimension(s, args)]
        )
        mask = np.ones(shape, dtype=bool)
        if self.tensor:
            import torch

            return torch.from_numpy(mask)
        return mask
