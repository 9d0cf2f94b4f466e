r"""Shared machinery of problems defined by per-client data (empirical risk + ridge).

Client :math:`k` holds samples :math:`(x_i,y_i)_{i\le n_k}` and

.. math:: F_k(w)=\frac1{n_k}\sum_{i=1}^{n_k}\ell(w;x_i,y_i)+\frac{\rho}{2}\|w\|^2 ,

with ridge :math:`\rho\ge0`. The target weights default to :math:`\alpha_k=n_k/\sum_hn_h`
(the weights of the pooled empirical risk).

**Mini-batches.** ``grad`` draws, for every (point, client) pair independently, a batch of
``b = batch_size`` indices of that client's samples from the torch generator, and returns
:math:`\frac1{b_k}\sum_{i\in\mathcal B}\nabla\ell(w;x_i,y_i)+\rho w`:

* ``sampling="without_replacement"`` (default, what a shuffled data loader does within an
  epoch): a uniformly random subset of :math:`b_k=\min(b,n_k)` distinct samples, so a client
  with :math:`n_k\le b` gets its exact gradient;
* ``sampling="with_replacement"``: :math:`b_k=b` i.i.d. uniform indices.

``batch_size=None`` means full batch (exact gradients, no randomness consumed). The cost is
:math:`O(M\,b\,d)` for the gradients plus :math:`O(M\,n_{\max})` to draw subsets without
replacement (the :math:`b_k` smallest of :math:`n_k` i.i.d. uniform keys: exact, and a fixed
handful of tensor operations whatever :math:`M`, so one-pair calls stay cheap too),
independent of :math:`N`. The batch rows are gathered with one ``index_select`` on the
flattened ``[N n_max, p]`` table and contracted with batched matrix products
(:func:`matvec`, :func:`vecmat`). ``grad`` returns ``w``'s dtype and
computes in it, or in ``compute_dtype=torch.float32`` when set (about twice less memory
traffic; a float32 copy of the data is made once). Exact quantities (losses, optimum,
constants) are always float64.

**Gradient noise** (CA-Fed Assumption 5, :math:`\mathbb E\|g_k-\nabla F_k\|^2\le\sigma_k^2`):
with :math:`S_k^2(w)=\frac1{n_k}\sum_i\|\nabla\ell_i(w)-\nabla\bar\ell(w)\|^2` the population
variance of per-sample gradients, exactly

.. math:: \sigma_k^2(w)=\frac{S_k^2(w)}{b_k}\cdot\frac{n_k-b_k}{n_k-1}\ \text{(without
          replacement)},\qquad \sigma_k^2(w)=\frac{S_k^2(w)}{b}\ \text{(with replacement)}.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import torch

from fedtheory.budget import check_seconds, marginal_seconds, seconds
from fedtheory.constraints import (
    Array,
    Generator,
    Indices,
    Instance,
    Option,
    Probabilities,
    Real,
    Size,
    Tensor,
    checking,
    declare,
)
from fedtheory.data.federated import FederatedDataset
from fedtheory.device import check_device
from fedtheory.errors import ParameterError, SolverError
from fedtheory.problems import fused as fused_kernel
from fedtheory.problems.base import GAMMA_KINDS, GRAD, POINTS, WEIGHTS

__all__ = ["SAMPLING", "ClassificationProblem", "DataProblem"]  # matvec, vecmat: package helpers

SAMPLING = ("without_replacement", "with_replacement")
"""Mini-batch sampling schemes of :meth:`DataProblem.grad`."""
CONSTRUCTOR = dict(
    data=Instance(FederatedDataset),
    ridge=Real(0.0),
    batch_size=Size(none=True),
    sampling=Option(*SAMPLING),
    alpha=Probabilities(size="data.num_clients", none=True),
)
"""The constructor parameters every data-backed problem shares, declared on
:class:`DataProblem`; a subclass declares its own (``data``, ``ridge`` and what it adds) and
passes the rest on (``**options``), checked there under the subclass's name."""

GRAD_TOL = 1e-10
"""Newton's method stops when the full gradient norm is at most this."""
_GRAD_FAIL = 1e-6  # a solve ending above this raises SolverError
_NEWTON_MAX_ITER = 100
_CHUNK_ELEMENTS = 2**24
"""Points are evaluated together (``client_losses``, ``exact_metrics``, ``accuracy``) in
chunks whose intermediates hold about this many elements (:meth:`DataProblem._point_elements`)."""
_TEMPORARIES = 8  # per-sample tensors alive in a linear model's pass (about 7.3 measured)
_CPU = torch.device("cpu")


class _Tables(NamedTuple):
    """A problem's data on one device (``X``, ``y``, ``weight`` in one dtype)."""

    X: torch.Tensor  # [N, n_max, p]
    y: torch.Tensor  # [N, n_max]
    weight: torch.Tensor  # [N, n_max] full-batch weights 1/n_k on valid samples, rows sum to 1
    counts: torch.Tensor  # [N] int64 n_k
    valid: torch.Tensor  # [N, n_max] bool


def matvec(X: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    r""":math:`Xw`: ``X [..., s, p]``, ``w [..., p]`` -> ``[..., s]``.

    One batched matrix product when the leading dimensions agree (a mini-batch per point),
    a broadcasting einsum otherwise (many points against every client's data)."""
    if X.shape[:-2] == w.shape[:-1]:
        return (X @ w.unsqueeze(-1)).squeeze(-1)
    return torch.einsum("...sp,...p->...s", X, w)


def vecmat(r: torch.Tensor, X: torch.Tensor) -> torch.Tensor:
    r""":math:`X^\top r`: ``r [..., s]``, ``X [..., s, p]`` -> ``[..., p]`` (batched matrix
    product when the leading dimensions agree, einsum otherwise)."""
    if r.shape[:-1] == X.shape[:-2]:
        return (r.unsqueeze(-2) @ X).squeeze(-2)
    return torch.einsum("...sp,...s->...p", X, r)


class DataProblem(ABC):
    r"""Base of data-backed problems; subclasses give the per-sample loss :math:`\ell`.

    Subclasses set ``dim``, ``L`` and ``mu`` and implement, with broadcasting leading
    dimensions ``...`` (``w [..., d]``, ``X [..., s, p]``, ``y [..., s]``, per-sample weights
    ``c [..., s]``), the data term only (the ridge is added here):
    ``_weighted_loss -> [...]`` :math:`\sum_ic_i\ell_i`, ``_weighted_grad -> [..., d]``,
    ``_weighted_hessian -> [..., d, d]`` and ``_per_sample_grads -> [..., s, d]``.

    Parameters
    ----------
    data : FederatedDataset
    ridge : float
        :math:`\rho\ge0` (:math:`>0` where ``positive_ridge``).
    batch_size : int or None
        Mini-batch size of ``grad`` (``None``: full batch).
    sampling : {"without_replacement", "with_replacement"}
    alpha : array [N], optional
        Target weights (default :math:`n_k/\sum_hn_h`).
    compute_dtype : torch.dtype, optional
        ``torch.float32`` computes ``grad`` in float32 (module docstring).
    positive_ridge : bool
        Whether the subclass requires :math:`\rho>0`.

    A subclass names its own parameters and passes the rest on (``**options``).
    """

    dim: int
    L: float
    mu: float
    _LINK: int | None = None  # link of the fused local-SGD kernel, for subclasses that have one
    fused: bool = False
    """Whether :meth:`local_sgd` (the fused kernel) is used by the simulator."""

    @declare(**CONSTRUCTOR)
    def __init__(
        self,
        data: FederatedDataset,
        *,
        ridge: float,
        batch_size: int | None = None,
        sampling: str = "without_replacement",
        alpha=None,
        compute_dtype: torch.dtype | None = None,
        positive_ridge: bool = False,
    ) -> None:
        owner = type(self).__name__
        if positive_ridge and ridge == 0:
            raise ParameterError(
                f"The 'ridge' parameter of {owner} must be a finite real number in (0, inf) "
                "(the model needs it for strong convexity). Got 0.0 (float) instead."
            )
        self._owner = owner
        self.data = data
        self.num_clients = data.num_clients
        self.ridge = ridge
        self.batch_size = batch_size
        self.sampling = sampling
        if compute_dtype not in (None, torch.float64, torch.float32):
            raise ParameterError(
                f"The 'compute_dtype' parameter of {owner} must be None, torch.float64 or "
                f"torch.float32. Got {compute_dtype!r} instead."
            )
        self.compute_dtype = compute_dtype
        counts = data.counts.astype(np.float64)
        self.alpha = counts / counts.sum() if alpha is None else alpha
        self._X = torch.from_numpy(data.features)  # [N, n_max, p]
        self._y = torch.from_numpy(data.labels)  # [N, n_max]
        self._counts = torch.from_numpy(data.counts)  # [N]
        self._valid = torch.from_numpy(data.valid)  # [N, n_max]
        self._mean_weight = self._valid / self._counts[:, None].double()  # [N, n_max], rows sum 1
        self._optima: dict[bytes, tuple[np.ndarray, float, float]] = {}
        self._tables: dict[tuple[torch.dtype, torch.device], _Tables] = {
            (torch.float64, _CPU): _Tables(
                self._X, self._y, self._mean_weight, self._counts, self._valid
            )
        }

    # -- per-sample model (subclasses) ----------------------------------------------------
    @abstractmethod
    def _weighted_loss(self, w, X, y, c) -> torch.Tensor: ...

    @abstractmethod
    def _weighted_grad(self, w, X, y, c) -> torch.Tensor: ...

    @abstractmethod
    def _weighted_hessian(self, w, X, y, c) -> torch.Tensor: ...

    @abstractmethod
    def _per_sample_grads(self, w, X, y) -> torch.Tensor: ...

    # -- validation -------------------------------------------------------------------------
    def _weights(self, weights: np.ndarray | None) -> np.ndarray:
        """Declared weights, or the target ``alpha`` for ``None``."""
        return self.alpha if weights is None else weights

    # -- stochastic gradients for the simulator -------------------------------------------
    @property
    def full_batch(self) -> bool:
        """Whether ``grad`` returns exact gradients (no batch smaller than a client's data)."""
        return self.batch_size is None or (
            self.sampling == "without_replacement" and self.batch_size >= self._X.shape[1]
        )

    def _stored(self, dtype: torch.dtype, device: torch.device = _CPU) -> _Tables:
        """The data tables with ``X``, ``y`` and full-batch weights in ``dtype``, on
        ``device`` (each (dtype, device) copy is made once, the first time it is asked for)."""
        key = (dtype, device)
        if key not in self._tables:
            base = self._tables[(torch.float64, _CPU)]
            self._tables[key] = _Tables(
                *(t.to(device=device, dtype=dtype) for t in base[:3]),
                *(t.to(device) for t in base[3:]),
            )
        return self._tables[key]

    def _minibatch(
        self,
        clients: torch.Tensor,
        generator: torch.Generator | None,
        dtype,
        batch_size: int | None = None,
        caller: str = "grad",
    ):
        """Samples ``X [M, b, p]``, ``y [M, b]`` and weights ``c [M, b]`` (rows sum to 1) with
        ``b = batch_size`` (default :attr:`batch_size`), on the device of ``clients`` (and of
        ``generator``)."""
        dev = clients.device
        X, y, mean_weight, counts, valid = self._stored(dtype, dev)
        b = self.batch_size if batch_size is None else batch_size
        if b is None or (self.sampling == "without_replacement" and b >= X.shape[1]):
            return X[clients], y[clients], mean_weight[clients]
        Instance(torch.Generator).check(generator, "generator", f"{self._owner}.{caller}", {})
        m = clients.shape[0]  # a minibatch: never torch's global generator
        n_max, p = X.shape[1], X.shape[2]
        counts = counts[clients]  # [M]
        if self.sampling == "with_replacement":
            u = torch.rand((m, b), generator=generator, dtype=torch.float64, device=dev)
            idx = (u * counts[:, None]).long()  # [M, b], uniform in {0..n_k-1}
            c = torch.full((m, b), 1.0 / b, dtype=dtype, device=dev)
        else:
            keys = torch.rand((m, n_max), generator=generator, dtype=torch.float64, device=dev)
            keys.masked_fill_(~valid[clients], 2.0)  # padding sorts last
            # [M, b] in any order: a uniform b-subset, or all n_k < b samples and padding
            idx = keys.topk(b, dim=1, largest=False, sorted=False).indices
            size = counts.clamp(max=b)[:, None]  # b_k
            c = ((idx < counts[:, None]) / size.double()).to(dtype)  # padding is past n_k
        rows = (clients[:, None] * n_max + idx).reshape(-1)  # [M b] rows of the flat tables
        X_batch = X.reshape(-1, p).index_select(0, rows).view(m, b, p)
        return X_batch, y.reshape(-1).index_select(0, rows).view(m, b), c

    @declare(**GRAD)
    def grad(
        self, w: torch.Tensor, clients: torch.Tensor, generator: torch.Generator | None = None
    ) -> torch.Tensor:
        r"""Mini-batch gradients ``[M, d]`` of clients ``clients [M]`` at ``w [M, d]``, in
        ``w``'s dtype (computed in ``compute_dtype`` if set)."""
        v = w if self.compute_dtype is None else w.to(self.compute_dtype)
        X, y, c = self._minibatch(clients, generator, v.dtype)
        return (self._weighted_grad(v, X, y, c) + self.ridge * v).to(w.dtype)

    @declare(
        w=GRAD["w"],
        clients=GRAD["clients"],
        index=Indices("self._X[1]", shape=("w[0]", None), min_size=0),
        weight=Tensor(dtype="floating", shape=("w[0]", "index[1]"), low=0.0, min_size=0),
    )
    def indexed_grad(
        self,
        w: torch.Tensor,
        clients: torch.Tensor,
        index: torch.Tensor,
        weight: torch.Tensor,
    ) -> torch.Tensor:
        r""":math:`\sum_ic_i\nabla\ell(w;x_{k,j_i},y_{k,j_i})+\rho w` ``[M, d]`` for given sample
        indices ``index [M, b]`` of clients ``clients [M]`` and weights ``weight [M, b]`` (a
        data loader's batch: :math:`1/|\mathcal B|` on its samples, 0 on padding)."""
        self._check_pairs(w, clients, f"{self._owner}.indexed_grad", device=clients.device)
        v = w if self.compute_dtype is None else w.to(self.compute_dtype)
        X, y = self._stored(v.dtype, clients.device)[:2]
        m, b = index.shape
        n_max, p = X.shape[1], X.shape[2]
        rows = (clients[:, None] * n_max + index).reshape(-1)
        X_batch = X.reshape(-1, p).index_select(0, rows).view(m, b, p)
        y_batch = y.reshape(-1).index_select(0, rows).view(m, b)
        g = self._weighted_grad(v, X_batch, y_batch, weight.to(v.dtype))
        return (g + self.ridge * v).to(w.dtype)

    @declare(**GRAD, batch_size=Size(none=True))
    def batch_losses(
        self,
        w: torch.Tensor,
        clients: torch.Tensor,
        generator: torch.Generator | None = None,
        *,
        batch_size: int | None = None,
    ) -> torch.Tensor:
        r"""Mini-batch estimates of the local objectives ``[M]`` (float64) of clients
        ``clients [M]`` at ``w [M, d]``:
        :math:`F_k(w,\mathcal B)=\frac1{b_k}\sum_{i\in\mathcal B}\ell(w;x_i,y_i)+\frac\rho2\|w\|^2`,
        an unbiased estimate of :math:`F_k(w)`, with a batch of ``batch_size`` samples (default
        :attr:`batch_size`, the one of :meth:`grad`) drawn as in :meth:`grad` (CA-Fed §IV-A:
        "a noisy estimate :math:`F_k^{(t)}` of the current loss computed on a batch"). A batch
        covering a client's data (or ``batch_size=None`` with a full-batch problem) gives
        the exact :math:`F_k(w)`."""
        self._check_pairs(w, clients, f"{self._owner}.batch_losses", device=clients.device)
        v = w.to(torch.float64)
        X, y, c = self._minibatch(clients, generator, torch.float64, batch_size, "batch_losses")
        return self._weighted_loss(v, X, y, c) + 0.5 * self.ridge * (v * v).sum(-1)

    def _check_pairs(self, w, clients, owner: str, *, device=None) -> None:
        """``w`` a real tensor ``[M, d]`` and ``clients`` integer indices ``[M]`` in [0, N),
        both on ``device`` (default the CPU: the fused kernel's; ``batch_losses`` accepts the
        device of ``clients``, where the simulator's device runs draw their batches). The
        indices' range is read (a host synchronisation) only where checks run: inside
        ``simulate``'s trusted rounds the runner built them from the mask."""
        Instance(torch.Tensor).check(w, "w", owner, {})
        Instance(torch.Tensor).check(clients, "clients", owner, {})
        dev = torch.device("cpu") if device is None else torch.device(device)
        where = "CPU" if dev.type == "cpu" else str(dev)
        why = " (the fused kernel runs on the CPU; on other devices the simulator steps with grad)"
        if w.ndim != 2 or w.shape[1] != self.dim or not w.is_floating_point() or w.device != dev:
            raise ParameterError(
                f"The 'w' parameter of {owner} must be a real {where} tensor of shape "
                f"(M, {self.dim}){why if device is None else ''}. Got a {w.dtype} tensor of "
                f"shape {tuple(w.shape)} on {w.device} instead."
            )
        n = self.num_clients
        ranged = (
            not (checking() and clients.numel())
            or 0 <= int(clients.min()) <= int(clients.max()) < n
        )
        if (
            clients.shape != (w.shape[0],)
            or clients.dtype != torch.int64
            or clients.device != dev
            or not ranged
        ):
            raise ParameterError(
                f"The 'clients' parameter of {owner} must be an int64 {where} tensor of shape "
                f"({w.shape[0]},) with entries in [0, {n - 1}]. Got a {clients.dtype} tensor of "
                f"shape {tuple(clients.shape)} on {clients.device} instead."
            )

    def _enable_fused(self, fused: bool | None) -> None:
        """Set :attr:`fused` from a subclass's ``fused`` argument (``None``: if it has a kernel)."""
        if fused is None:
            self.fused = self._LINK is not None
            return
        if not isinstance(fused, (bool, np.bool_)) or (fused and self._LINK is None):
            allowed = "None or a bool" if self._LINK is not None else "None or False (no kernel)"
            raise ParameterError(
                f"The 'fused' parameter of {self._owner} must be {allowed}. Got {fused!r} instead."
            )
        self.fused = bool(fused)

    @declare(
        w=Tensor(dtype="floating", shape=(None, "self.dim"), min_size=0),
        clients=GRAD["clients"],
        steps=Size(),
        lr=Real(0.0),
        prox=Real(0.0),
        generator=Generator(none=True),
        finite_result=True,  # called by a user: an overflowing run is refused naming its cause
    )
    def local_sgd(
        self,
        w: torch.Tensor,
        clients: torch.Tensor,
        *,
        steps: int,
        lr: float,
        prox: float,
        generator: torch.Generator | None = None,
    ) -> torch.Tensor:
        r"""Updates :math:`\Delta=y_E-w` ``[M, d]`` of ``steps`` local SGD steps of clients
        ``clients [M]`` from ``w [M, d]`` (CPU tensors), in the fused kernel of
        :mod:`fedtheory.problems.fused`: the law of :func:`fedtheory.sim.local_sgd` with
        :meth:`grad`, not its random numbers. Data reads are in ``compute_dtype`` if set,
        arithmetic in float64. The pairs are shared among
        :func:`fedtheory.problems.fused.threads` threads (``torch.get_num_threads()``, no
        more than the machine has idle cores), with bit-identical results whatever that
        number."""
        owner = f"{self._owner}.local_sgd"
        if self._LINK is None:
            raise NotImplementedError(f"{self._owner} has no fused local-SGD kernel")
        self._check_pairs(w, clients, owner)  # on the CPU: the kernel's device
        X, y = self._stored(self.compute_dtype or torch.float64)[:2]
        batch = X.shape[1] if self.full_batch else self.batch_size
        start = w.detach().to(torch.float64).numpy()
        sampler = (
            fused_kernel.FULL_BATCH
            if self.full_batch
            else fused_kernel.WITHOUT_REPLACEMENT
            if self.sampling == "without_replacement"
            else fused_kernel.WITH_REPLACEMENT
        )

        threads = fused_kernel.threads()  # one count for the time probe and the run

        def run(n: int, keys: np.ndarray) -> np.ndarray:
            """The updates of ``n`` steps, the pairs' random streams from ``keys [M]``."""
            return fused_kernel.local_sgd_glm(
                X.numpy(),
                y.numpy(),
                self._counts.numpy(),
                clients.numpy(),
                start,
                keys,
                steps=n,
                batch=self.batch_size or 0,
                sampler=sampler,
                link=self._LINK,
                lr=lr,
                ridge=self.ridge,
                prox=prox,
                threads=threads,
            )

        cells = max(clients.numel() * batch * self.dim, 1)  # data read by one step
        probe_keys = np.zeros(clients.shape, dtype=np.uint64)  # the caller's generator kept

        def step_seconds() -> float:
            """Seconds a step of these pairs takes here now, over steps reading about 2^22
            cells (tens of milliseconds: fewer steps measure the kernel's start, and a
            shorter probe can fit in a time slice of a loaded machine)."""
            return marginal_seconds(lambda n: run(n, probe_keys), 1 + (1 << 22) // cells)

        check_seconds(seconds(cells=steps * cells), owner, fixes="fewer steps",
                      what=f"{steps} steps of {clients.numel()} clients on batches of {batch} x "
                      f"{self.dim}", units=steps, unit="step", probe=step_seconds)  # fmt: skip
        if self.full_batch:
            keys = np.empty(0, dtype=np.uint64)
        else:
            Instance(torch.Generator).check(generator, "generator", owner, {})
            keys = torch.randint(-(2**63), 2**63 - 1, clients.shape, generator=generator)
            keys = keys.numpy().view(np.uint64)  # one stream per pair
        delta = run(steps, keys)
        return torch.from_numpy(delta).to(w.dtype)

    # -- exact full-data quantities -------------------------------------------------------
    def _per_client(
        self,
        points: np.ndarray,
        fn: Callable,
        data: FederatedDataset | None = None,
        device: torch.device = _CPU,
    ) -> np.ndarray:
        """``fn(w [c, 1, d], X [N, n, p], y [N, n], c [N, n]) -> [c, N, *out]`` over all of
        the checked ``points [..., d]`` in chunks, computed on ``device``
        -> ``[..., N, *out]``."""
        if data is None:
            X, y, c = self._stored(torch.float64, device)[:3]
        else:
            X, y = torch.from_numpy(data.features), torch.from_numpy(data.labels)
            c = torch.from_numpy(data.valid / data.counts[:, None])
        flat = torch.from_numpy(points.reshape(-1, self.dim)).to(device)
        chunk = max(1, _CHUNK_ELEMENTS // self._point_elements(X.shape))
        out = torch.cat(
            [fn(flat[i : i + chunk, None, :], X, y, c) for i in range(0, flat.shape[0], chunk)]
        )
        return out.cpu().numpy().reshape(points.shape[:-1] + tuple(out.shape[1:]))

    _LINEAR = False
    """Whether the model is ``X w`` computed by einsum (binary logistic regression, least
    squares): a point's pass then never copies the data table."""

    def _point_elements(self, shape: tuple[int, ...]) -> int:
        r"""Elements one point's pass over data ``[N, n, p]`` keeps alive: for a linear
                model :math:`N(4n\lceil d/p
        ceil+d)` (per-sample logits and their by-products, one
                column per class, and the gradients), otherwise :math:`Nn\max(p,d)` (a copy of the
                data, or per-sample gradients)."""
        N, n, p = shape
        if self._LINEAR:
            return N * (_TEMPORARIES * n * -(-self.dim // p) + self.dim)
        return N * n * max(p, self.dim)

    @declare(w=POINTS, finite_result=True)  # inside simulate (trusted): a diverged run's inf
    def client_losses(self, w) -> np.ndarray:
        r""":math:`F_k(w)` (full data, with ridge) for ``w [..., d]`` -> ``[..., N]``."""
        return self._per_client(w, self._weighted_loss) + self._ridge_loss(w)

    @declare(w=POINTS, weights=WEIGHTS)
    def loss(self, w, weights=None) -> np.ndarray:
        r""":math:`\sum_kp_kF_k(w)` for ``w [..., d]`` -> ``[...]`` (default ``p = alpha``)."""
        return self.client_losses(w) @ self._weights(weights)

    @declare(w=POINTS, finite_result=True)  # inside simulate (trusted): a diverged run's inf
    def client_grads(self, w) -> np.ndarray:
        r"""Exact :math:`\nabla F_k(w)` (full data, ridge): ``w [..., d]`` -> ``[..., N, d]``."""
        return self._per_client(w, self._weighted_grad) + self._ridge_grad(w)

    def _ridge_loss(self, points: np.ndarray) -> np.ndarray:
        r""":math:`\frac\rho2\|w\|^2` ``[..., 1]`` (the same for every client)."""
        return 0.5 * self.ridge * np.sum(np.square(points), axis=-1)[..., None]

    def _ridge_grad(self, points: np.ndarray) -> np.ndarray:
        r""":math:`\rho w` ``[..., 1, d]`` (the same for every client)."""
        return self.ridge * points[..., None, :]

    def _data_terms(self, w, X, y, c) -> torch.Tensor:
        """``[..., 1 + d]``: the data term's loss and gradient (classifiers insert a correct-
        count column after the loss; subclasses may share one forward pass)."""
        loss = self._weighted_loss(w, X, y, c)[..., None]
        return torch.cat([loss, self._weighted_grad(w, X, y, c)], -1)

    @declare(w=POINTS, finite_result=True)  # inside simulate (trusted): a diverged run's inf
    def exact_metrics(self, w, *, device=None) -> dict[str, np.ndarray]:
        r"""Exact full-data quantities at ``w [..., d]`` in one pass over the data:
        ``client_losses [..., N]`` and ``client_grads [..., N, d]`` (with ridge, as
        :meth:`client_losses` and :meth:`client_grads`) and, for classifiers, ``accuracy
        [...]`` (as :meth:`ClassificationProblem.accuracy`). Computed on ``device``
        (default CPU; a copy of the data is made there once), returned as NumPy."""
        dev = check_device(device, "device", f"{self._owner}.exact_metrics")
        points = w
        # an overflow at huge w is returned as inf: simulate reports a diverged run from it
        with np.errstate(over="ignore", invalid="ignore"):
            terms = self._per_client(points, self._data_terms, device=dev)  # [..., N, 1(+1)+d]
            out = {
                "client_losses": terms[..., 0] + self._ridge_loss(points),
                "client_grads": terms[..., -self.dim :] + self._ridge_grad(points),
            }
        if isinstance(self, ClassificationProblem):  # column 1: correctly classified samples
            out["accuracy"] = terms[..., 1].sum(-1) / self.data.counts.sum()
        return out

    def _exact_metric_sums(self, w: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
        r"""The exact metrics of the points ``w [P, d]`` (float64, on any device) reduced
        where they are, in one pass over the data per chunk of points: ``[P, K + 1 (+1)]``
        with columns :math:`\sum_kp_{j,k}F_k(w)` for the rows :math:`p_j` of ``weights
        [K, N]``, :math:`\|\sum_k\alpha_k\nabla F_k(w)\|^2` and, for classifiers, the
        accuracy (as :meth:`exact_metrics` and its sums); nothing is read back to the host."""
        X, y, c = self._stored(torch.float64, w.device)[:3]
        alpha = torch.from_numpy(self.alpha).to(w.device)
        chunk = max(1, _CHUNK_ELEMENTS // self._point_elements(X.shape))
        parts = []
        for v in w.split(chunk):
            terms = self._data_terms(v[:, None, :], X, y, c)  # [c, N, 1(+1) + d]
            losses = terms[..., 0] + 0.5 * self.ridge * (v * v).sum(-1, keepdim=True)
            grad = torch.einsum("n,pnd->pd", alpha, terms[..., -self.dim :]) + self.ridge * v
            columns = [losses @ weights.T, (grad * grad).sum(-1, keepdim=True)]
            if isinstance(self, ClassificationProblem):  # column 1: correctly classified
                columns.append(terms[..., 1].sum(-1, keepdim=True) / float(self.data.counts.sum()))
            parts.append(torch.cat(columns, -1))
        return torch.cat(parts)

    @declare(w=POINTS, weights=WEIGHTS)
    def full_grad(self, w, weights=None) -> np.ndarray:
        r"""Exact :math:`\nabla\sum_kp_kF_k(w)`: ``w [..., d]`` -> ``[..., d]``."""
        return np.einsum("n,...nd->...d", self._weights(weights), self.client_grads(w))

    def noise_factor(self) -> np.ndarray:
        r"""``[N]`` factors :math:`\sigma_k^2(w)/S_k^2(w)`: :math:`(n_k-b_k)/(b_k(n_k-1))`
        without replacement, :math:`1/b` with replacement, 0 for full batches."""
        n = self.data.counts.astype(np.float64)
        if self.batch_size is None:
            return np.zeros_like(n)
        if self.sampling == "with_replacement":
            return np.full_like(n, 1.0 / self.batch_size)
        b = np.minimum(n, self.batch_size)
        return np.where(n > 1, (n - b) / (b * np.maximum(n - 1, 1)), 0.0)

    @declare(w=Array(shape=("self.dim",)), finite_result=True)
    def noise_variance(self, w) -> np.ndarray:
        r"""Exact mini-batch gradient-noise variance :math:`\sigma_k^2(w)` ``[N]`` at ``w [d]``
        (module docstring; CA-Fed Assumption 5)."""
        g = self._per_sample_grads(torch.from_numpy(w)[None], self._X, self._y)  # [N, n, d]
        mean = torch.einsum("ns,nsd->nd", self._mean_weight, g)
        dev = ((g - mean[:, None]) ** 2).sum(-1) * self._mean_weight  # [N, n]
        return dev.sum(-1).numpy() * self.noise_factor()  # S_k^2 times the factor

    # -- minimisers -------------------------------------------------------------------------
    def _minimise(self, X, y, c) -> tuple[torch.Tensor, torch.Tensor]:
        r"""Damped Newton on :math:`J` problems at once: ``X [J, s, p]``, ``y [J, s]``,
        ``c [J, s]`` -> minimisers ``[J, d]`` and final gradient norms ``[J]``."""
        rho = self.ridge
        w = torch.zeros(X.shape[0], self.dim, dtype=torch.float64)

        def value(v):
            return self._weighted_loss(v, X, y, c) + 0.5 * rho * (v * v).sum(-1)

        def gradient(v):
            return self._weighted_grad(v, X, y, c) + rho * v

        g = gradient(w)
        for _ in range(_NEWTON_MAX_ITER):
            norm = g.norm(dim=-1)
            active = norm > GRAD_TOL
            if not active.any():
                break
            H = self._weighted_hessian(w, X, y, c) + rho * torch.eye(self.dim, dtype=w.dtype)
            step, info = torch.linalg.solve_ex(H, g)
            if info.any():  # singular Hessian (least squares without ridge): min-norm step
                step = torch.linalg.lstsq(H, g[..., None], driver="gelsd").solution[..., 0]
            f0, slope = value(w), (g * step).sum(-1)
            t = torch.ones_like(norm)
            for _ in range(60):  # Armijo, or a decrease of the gradient norm near the optimum
                cand = w - t[:, None] * step
                g_cand = gradient(cand)
                ok = (value(cand) <= f0 - 0.25 * t * slope) | (g_cand.norm(dim=-1) < 0.5 * norm)
                if (ok | ~active).all():
                    break
                t = torch.where(ok, t, 0.5 * t)
            w = torch.where(active[:, None], cand, w)
            g = torch.where(active[:, None], g_cand, g)
        norm = g.norm(dim=-1)
        if norm.max() > _GRAD_FAIL:
            raise SolverError(
                f"{self._owner}: Newton's method stopped with gradient norm "
                f"{norm.max().item():.3g} > {_GRAD_FAIL:g} after {_NEWTON_MAX_ITER} iterations."
            )
        return w, norm

    def _solve(self, weights) -> tuple[np.ndarray, float, float]:
        p = self._weights(weights)
        key = p.tobytes()
        if key not in self._optima:
            c = (torch.from_numpy(p)[:, None] * self._mean_weight).reshape(1, -1)
            X = self._X.reshape(1, -1, self._X.shape[-1])
            w, norm = self._minimise(X, self._y.reshape(1, -1), c)
            w = w[0].numpy()
            self._optima[key] = (w, float(self.loss(w, p)), float(norm[0]))
        return self._optima[key]

    @declare(weights=WEIGHTS)
    def optimum(self, weights=None) -> tuple[np.ndarray, float]:
        r"""Minimiser :math:`w_p^*` ``[d]`` and minimum of :math:`\sum_kp_kF_k` (default
        ``p = alpha``), by Newton's method to gradient norm ``GRAD_TOL``; the value is
        certified by :meth:`optimality_gap_bound`."""
        w, value, _ = self._solve(weights)
        return w.copy(), value

    @declare(weights=WEIGHTS)
    def optimality_gap_bound(self, weights=None) -> float:
        r"""Certificate :math:`F_p(\hat w)-F_p^*\le\|\nabla F_p(\hat w)\|^2/(2\mu)` of the
        computed optimum (:math:`\mu`-strong convexity)."""
        norm = self._solve(weights)[2]
        if norm == 0.0:
            return 0.0
        return norm**2 / (2 * self.mu) if self.mu > 0 else float("inf")

    def client_optima(self) -> tuple[np.ndarray, np.ndarray]:
        r"""Local minimisers :math:`w_k^*` ``[N, d]`` and minima :math:`F_k^*` ``[N]``."""
        key = b"clients"
        if key not in self._optima:
            w, norm = self._minimise(self._X, self._y, self._mean_weight)
            w = w.numpy()
            values = np.diagonal(self.client_losses(w)).copy()
            self._optima[key] = (w, values, float(norm.max()))
        w, values, _ = self._optima[key]
        return w.copy(), values.copy()

    @declare(weights=WEIGHTS, kind=Option(*GAMMA_KINDS))
    def gamma(self, weights=None, kind: str = "cafed") -> float:
        r""":math:`\max_k\{F_k(w_p^*)-F_k^*\}`: :math:`\Gamma` for ``p = alpha`` (CA-Fed
        Thm 1), :math:`\Gamma'` for the biased weights ``p`` (CA-Fed Thm 3).

        ``kind`` says which heterogeneity: ``"cafed"`` (default) the maximum above;
        ``"li"`` Li et al. 2020's :math:`\Gamma=F^*-\sum_kp_kF_k^*` (Section 3, "Quantifying
        the degree of non-iid"), with :math:`F^*` the minimum of :math:`\sum_kp_kF_k`."""
        w, optimum = self.optimum(weights)
        if kind == "li":
            p = self.alpha if weights is None else weights
            return float(optimum - np.dot(p, self.client_optima()[1]))
        return float(np.max(self.client_losses(w) - self.client_optima()[1]))

    @property
    def kappa(self) -> float:
        r"""Condition number bound :math:`\kappa=L/\mu`."""
        return self.L / self.mu


class ClassificationProblem(DataProblem):
    """A data-backed problem whose model predicts labels (subclasses give ``_correct``)."""

    @staticmethod
    def _multiclass(data: FederatedDataset, owner: str) -> int:
        """``data.num_classes``, which a multiclass model needs set."""
        if data.num_classes is None:
            raise ParameterError(
                f"The 'data' parameter of {owner} must have num_classes set. Got None instead."
            )
        return data.num_classes

    @abstractmethod
    def _correct(self, w, X, y) -> torch.Tensor:
        """Boolean ``[..., s]``: is sample ``i`` classified correctly at ``w``."""

    def _data_terms(self, w, X, y, c) -> torch.Tensor:
        """``[..., 2 + d]``: loss, number of correctly classified samples, gradient."""
        loss = self._weighted_loss(w, X, y, c)[..., None]
        correct = (self._correct(w, X, y) * (c > 0)).sum(-1, keepdim=True).to(loss.dtype)
        return torch.cat([loss, correct, self._weighted_grad(w, X, y, c)], -1)

    @declare(w=POINTS)
    def accuracy(self, w, data: FederatedDataset | None = None) -> np.ndarray:
        r"""Fraction of correctly classified samples, pooled over all clients, of ``data``
        (default the training data) for ``w [..., d]`` -> ``[...]``."""
        data = self.data if data is None else data
        if not isinstance(data, FederatedDataset) or data.num_features != self.data.num_features:
            raise ParameterError(
                f"The 'data' parameter of {self._owner}.accuracy must be a FederatedDataset "
                f"with {self.data.num_features} features. Got {data!r:.60} instead."
            )
        per_client = self._per_client(
            w, lambda v, X, y, c: (self._correct(v, X, y) * (c > 0)).sum(-1).double(), data
        )
        return per_client.sum(-1) / data.counts.sum()
