r"""A small multilayer perceptron classifier, vectorised over (point, client) pairs with
``torch.func`` (no paper constant applies: the problem is non-convex).

Layers :math:`p\to h_1\to\dots\to C` with :math:`\tanh` between them (smooth, so gradients
and Hessians exist everywhere), softmax cross-entropy and ridge
:math:`\frac\rho2\|\theta\|^2` on the flat parameter :math:`\theta\in\mathbb R^d` (weights
and biases, concatenated in the order of ``torch.nn.Sequential.named_parameters``). Every
per-pair quantity is ``torch.func.vmap`` of a function of one flat parameter vector, built
with ``torch.func.functional_call``.

``optimum`` is a *local* minimum found by L-BFGS from :meth:`MLPProblem.initial_point`
(uncertified: :meth:`optimality_gap_bound` is not available, and neither are ``L``, ``mu``).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.optimize
import torch
from torch.func import functional_call, grad, hessian, vmap

from fedtheory import rng
from fedtheory.budget import check_bytes
from fedtheory.constraints import Array, Integer, declare
from fedtheory.data.federated import FederatedDataset
from fedtheory.params import MAX_SIZE
from fedtheory.problems.data_backed import CONSTRUCTOR, ClassificationProblem

__all__ = ["MLPProblem"]

_OWNER = "MLPProblem"
_LBFGS_OPTIONS = {"maxiter": 20000, "gtol": 1e-12, "ftol": 0.0, "maxcor": 30}


class MLPProblem(ClassificationProblem):
    r"""MLP classifier :math:`p\to h_1\to\dots\to C` (tanh) with ridge :math:`\rho\ge0`.

    Parameters
    ----------
    data : FederatedDataset
        With ``num_classes`` set.
    hidden : tuple of int
        Hidden layer widths.
    ridge : float
    **options
        ``batch_size``, ``sampling``, ``alpha``, ``compute_dtype``, as in
        :class:`~fedtheory.problems.data_backed.DataProblem`.
    seed : int
        Seed of :meth:`initial_point` (``numpy_rng(seed, 0, INITIAL_STATE)``).

    Examples
    --------
    >>> from fedtheory.data import load_digits_federated
    >>> prob = MLPProblem(load_digits_federated(10, seed=0), hidden=(16,), batch_size=8)
    >>> prob.dim  # 65*16 + 16 + 16*10 + 10
    1226
    """

    @declare(
        **CONSTRUCTOR,
        hidden=Array(ndim=1, low=1.0, high=MAX_SIZE, integer=True, min_size=0),
        seed=Integer(0),
    )
    def __init__(
        self,
        data: FederatedDataset,
        *,
        hidden: tuple[int, ...] = (32,),
        ridge: float = 1e-4,
        seed: int = 0,
        **options,
    ) -> None:
        super().__init__(data, ridge=ridge, **options)
        self.num_classes = self._multiclass(data, _OWNER)
        self.hidden = tuple(int(h) for h in hidden)
        self.seed = seed
        sizes = (data.num_features, *self.hidden, self.num_classes)
        weights = sum((a + 1) * b for a, b in zip(sizes[:-1], sizes[1:], strict=True))
        check_bytes(8 * weights, _OWNER, what=f"{weights} weights of layers {sizes}",
                    fixes="narrower hidden layers")  # fmt: skip
        layers: list[torch.nn.Module] = []
        for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):
            layers.append(torch.nn.Linear(a, b, dtype=torch.float64))
            if i < len(sizes) - 2:
                layers.append(torch.nn.Tanh())
        self._module = torch.nn.Sequential(*layers).requires_grad_(False)  # shape template
        self._shapes = [(name, p.shape) for name, p in self._module.named_parameters()]
        self.dim = sum(math.prod(shape) for _, shape in self._shapes)

    def initial_point(self) -> np.ndarray:
        r"""Weights :math:`\mathcal U(\pm1/\sqrt{\text{fan-in}})`, biases 0: ``[d]``."""
        gen = rng.numpy_rng(self.seed, 0, rng.INITIAL_STATE)
        parts = []
        for name, shape in self._shapes:
            if name.endswith("weight"):
                bound = 1 / math.sqrt(shape[1])
                parts.append(gen.uniform(-bound, bound, size=math.prod(shape)))
            else:
                parts.append(np.zeros(math.prod(shape)))
        return np.concatenate(parts)

    # -- one flat parameter vector ------------------------------------------------------
    def _params(self, theta):
        out, start = {}, 0
        for name, shape in self._shapes:
            size = math.prod(shape)
            out[name] = theta[start : start + size].view(shape)
            start += size
        return out

    def _sample_losses(self, theta, X, y):
        """``theta [d]``, ``X [s, p]``, ``y [s]`` -> cross-entropy ``[s]``."""
        z = functional_call(self._module, self._params(theta), (X,))  # [s, C]
        picked = z.gather(-1, y.long()[:, None])[:, 0]
        return torch.logsumexp(z, dim=-1) - picked

    def _pair_loss(self, theta, X, y, c):
        return (c * self._sample_losses(theta, X, y)).sum()

    def _pair_sample_grads(self, theta, X, y):
        one = lambda t, x, label: self._sample_losses(t, x[None], label[None])[0]  # noqa: E731
        return vmap(grad(one), in_dims=(None, 0, 0))(theta, X, y)  # [s, d]

    def _pair_correct(self, theta, X, y):
        z = functional_call(self._module, self._params(theta), (X,))
        return z.argmax(-1) == y.long()

    def _pairs(self, fn, w, X, *rest):
        """Broadcast the leading dims of ``w [..., d]``, ``X [..., s, p]`` and ``rest``
        (``[..., s]``), then ``vmap`` ``fn`` over the flattened pairs."""
        lead = torch.broadcast_shapes(w.shape[:-1], X.shape[:-2], *(r.shape[:-1] for r in rest))
        args = [w.expand(*lead, -1).reshape(-1, w.shape[-1])]
        args.append(X.expand(*lead, -1, -1).reshape(-1, *X.shape[-2:]))
        args += [r.expand(*lead, -1).reshape(-1, r.shape[-1]) for r in rest]
        out = vmap(fn)(*args)
        return out.reshape(*lead, *out.shape[1:])

    def _weighted_loss(self, w, X, y, c):
        return self._pairs(self._pair_loss, w, X, y, c)

    def _weighted_grad(self, w, X, y, c):
        return self._pairs(grad(self._pair_loss), w, X, y, c)

    def _weighted_hessian(self, w, X, y, c):
        return self._pairs(hessian(self._pair_loss), w, X, y, c)

    def _per_sample_grads(self, w, X, y):
        return self._pairs(self._pair_sample_grads, w, X, y)

    def _correct(self, w, X, y):
        return self._pairs(self._pair_correct, w, X, y)

    # -- local minima (non-convex) ------------------------------------------------------
    def _minimise(self, X, y, c) -> tuple[torch.Tensor, torch.Tensor]:
        r"""L-BFGS on :math:`J` separable problems at once from :meth:`initial_point`."""
        J, d, rho = X.shape[0], self.dim, self.ridge

        def value_and_grad(flat):
            w = torch.from_numpy(flat.reshape(J, d))
            f = self._weighted_loss(w, X, y, c).sum() + 0.5 * rho * (w * w).sum()
            g = self._weighted_grad(w, X, y, c) + rho * w
            return f.item(), g.reshape(-1).numpy()

        x0 = np.tile(self.initial_point(), J)
        res = scipy.optimize.minimize(
            value_and_grad, x0, jac=True, method="L-BFGS-B", options=_LBFGS_OPTIONS
        )
        w = torch.from_numpy(res.x.reshape(J, d))
        return w, (self._weighted_grad(w, X, y, c) + rho * w).norm(dim=-1)

    def optimality_gap_bound(self, weights=None) -> float:
        """Not available: the MLP objective is non-convex (no certificate)."""
        raise NotImplementedError(
            f"{_OWNER} is non-convex: its optimum is a local minimum found by L-BFGS and has "
            "no optimality certificate."
        )

    def __repr__(self) -> str:
        return (
            f"MLPProblem(N={self.num_clients}, layers={self.hidden}, C={self.num_classes}, "
            f"d={self.dim}, ridge={self.ridge:g}, batch_size={self.batch_size})"
        )
