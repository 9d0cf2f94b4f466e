r"""A small multilayer perceptron classifier, its forward and backward passes written in
closed form as batched matrix products over (point, client) pairs (no paper constant applies:
the problem is non-convex).

Layers :math:`p\to h_1\to\dots\to C` with :math:`\tanh` between them (smooth, so gradients
and Hessians exist everywhere), softmax cross-entropy and ridge
:math:`\frac\rho2\|\theta\|^2` on the flat parameter :math:`\theta\in\mathbb R^d` (weights
``[out, in]`` and biases of each layer, concatenated in the order of
``torch.nn.Sequential.named_parameters``). With :math:`a_0=x`,
:math:`a_l=\tanh(W_la_{l-1}+b_l)` and logits :math:`z=W_La_{L-1}+b_L`, the loss
:math:`\sum_ic_i\ell_i` has :math:`\delta_L=c_i(\operatorname{softmax}(z_i)-e_{y_i})`,
:math:`\partial W_l=\sum_i\delta_{l,i}a_{l-1,i}^\top`, :math:`\partial b_l=\sum_i\delta_{l,i}`
and :math:`\delta_{l-1}=W_l^\top\delta_l\odot(1-a_{l-1}^2)`: every leading dimension of
the parameters and the data is a batch dimension of the matrix products (one pass for all
pairs, no per-pair autograd graph). Hessians are ``torch.func.hessian`` of the closed-form
loss. The tests compare every quantity with autograd through ``torch.nn``.

``optimum`` is a *local* minimum found by L-BFGS from :meth:`MLPProblem.initial_point`;
:meth:`~MLPProblem.optimality_gap_bound` certifies it only through :math:`F\ge0` (no ``L``,
``mu``: the objective is non-convex).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.optimize
import torch
from torch.func import hessian, vmap

from fedtheory import rng
from fedtheory.budget import check_bytes
from fedtheory.constraints import MAX_SIZE, Array, Integer, declare
from fedtheory.data.federated import FederatedDataset
from fedtheory.problems.base import WEIGHTS
from fedtheory.problems.data_backed import CONSTRUCTOR, ClassificationProblem

__all__ = ["MLPProblem"]

_OWNER = "MLPProblem"
_LBFGS_OPTIONS = {"maxiter": 20000, "gtol": 1e-12, "ftol": 0.0, "maxcor": 30}


def _product(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``a @ b`` for ``a [..., i, j]``, ``b [..., j, k]``: a batched matrix product when the
    leading dimensions agree (a mini-batch per point), else a broadcasting einsum, which does
    not copy the broadcast operand (every client's data against many points)."""
    if a.shape[:-2] == b.shape[:-2]:
        return a @ b
    return torch.einsum("...ij,...jk->...ik", a, b)


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
        data=CONSTRUCTOR["data"],
        ridge=CONSTRUCTOR["ridge"],
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
        self._sizes = sizes
        self.dim = weights

    def initial_point(self) -> np.ndarray:
        r"""Weights :math:`\mathcal U(\pm1/\sqrt{\text{fan-in}})`, biases 0: ``[d]``."""
        gen = rng.numpy_rng(self.seed, 0, rng.INITIAL_STATE)
        parts = []
        for fan_in, fan_out in zip(self._sizes[:-1], self._sizes[1:], strict=True):
            bound = 1 / math.sqrt(fan_in)
            parts += [gen.uniform(-bound, bound, size=fan_in * fan_out), np.zeros(fan_out)]
        return np.concatenate(parts)

    # -- the network in closed form, batched over leading dimensions ----------------------
    def _layers(self, w: torch.Tensor) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """Each layer's weight ``[..., out, in]`` and bias ``[..., out]``: views of ``w [..., d]``
        in the order of ``torch.nn.Sequential.named_parameters``."""
        out, start = [], 0
        for fan_in, fan_out in zip(self._sizes[:-1], self._sizes[1:], strict=True):
            weight = w[..., start : start + fan_in * fan_out].unflatten(-1, (fan_out, fan_in))
            start += fan_in * fan_out
            out.append((weight, w[..., start : start + fan_out]))
            start += fan_out
        return out

    def _forward(self, layers, X) -> tuple[torch.Tensor, list[torch.Tensor]]:
        r"""Logits ``z [..., s, C]`` and the inputs ``[X, a_1, ...]`` of the ``layers``
        (:meth:`_layers`), :math:`a_l=\tanh(a_{l-1}W_l^\top+b_l)`, for ``X [..., s, p]``."""
        inputs = [X]
        for weight, bias in layers[:-1]:
            inputs.append(torch.tanh(_product(inputs[-1], weight.mT).add_(bias.unsqueeze(-2))))
        weight, bias = layers[-1]
        return _product(inputs[-1], weight.mT).add_(bias.unsqueeze(-2)), inputs

    @staticmethod
    def _log_partition(z, y) -> tuple[torch.Tensor, torch.Tensor]:
        r""":math:`\operatorname{lse}(z_i)` ``[..., s]`` and the label indices ``[..., s, 1]``."""
        return torch.logsumexp(z, dim=-1), y.long().expand(z.shape[:-1]).unsqueeze(-1)

    def _gradient(self, w, X, y, c):
        r"""One forward and backward pass for :math:`\sum_ic_i\ell_i`: the logits ``[..., s, C]``,
        :math:`\operatorname{lse}` and labels (:meth:`_log_partition`) and the gradient's
        parts (each layer's weight ``[..., out, in]`` and bias ``[..., out]``; concatenated,
        ``[..., d]``). The logits' derivative :math:`c_i(\operatorname{softmax}(z_i)-e_{y_i})`
        is computed as autograd does (the log-partition's part plus the picked logit's), then
        :math:`\partial W_l=\delta_l^\top a_{l-1}`, :math:`\partial b_l=\sum_i\delta_{l,i}`,
        :math:`\delta_{l-1}=(\delta_lW_l)\odot(1-a_{l-1}^2)`."""
        layers = self._layers(w)
        z, inputs = self._forward(layers, X)
        lse, label = self._log_partition(z, y)
        dz = torch.exp(z - lse.unsqueeze(-1)).mul_(c.unsqueeze(-1))
        dz.scatter_add_(-1, label, -c.unsqueeze(-1).expand(label.shape))
        parts: list[torch.Tensor] = []
        for layer in range(len(layers) - 1, -1, -1):
            a = inputs[layer]
            parts[:0] = [_product(dz.mT, a).flatten(-2), dz.sum(-2)]
            if layer:
                dz = torch.ops.aten.tanh_backward(dz @ layers[layer][0], a)
        return z, lse, label, parts

    @staticmethod
    def _picked(z, lse, label, c) -> torch.Tensor:
        r""":math:`\sum_ic_i(\operatorname{lse}(z_i)-z_{i,y_i})` ``[...]``."""
        return (c * (lse - z.gather(-1, label)[..., 0])).sum(-1)

    def _weighted_loss(self, w, X, y, c):
        z = self._forward(self._layers(w), X)[0]
        return self._picked(z, *self._log_partition(z, y), c)

    def _weighted_grad(self, w, X, y, c):
        return torch.cat(self._gradient(w, X, y, c)[-1], -1)

    def _per_sample_grads(self, w, X, y):
        """Each sample as a batch of one: ``w [..., 1, d]`` against ``X [..., s, 1, p]``."""
        ones = torch.ones_like(y).unsqueeze(-1)
        return self._weighted_grad(w.unsqueeze(-2), X.unsqueeze(-2), y.unsqueeze(-1), ones)

    def _weighted_hessian(self, w, X, y, c):
        """``torch.func.hessian`` of the closed-form loss, ``vmap``-ed over the pairs."""
        lead = torch.broadcast_shapes(w.shape[:-1], X.shape[:-2], y.shape[:-1], c.shape[:-1])
        args = [w.expand(*lead, -1).reshape(-1, w.shape[-1])]
        args.append(X.expand(*lead, -1, -1).reshape(-1, *X.shape[-2:]))
        args += [r.expand(*lead, -1).reshape(-1, r.shape[-1]) for r in (y, c)]
        out = vmap(hessian(self._weighted_loss))(*args)
        return out.reshape(*lead, *out.shape[1:])

    def _correct(self, w, X, y):
        return self._forward(self._layers(w), X)[0].argmax(-1) == y.long()

    def _data_terms(self, w, X, y, c) -> torch.Tensor:
        """``[..., 2 + d]``: loss, number of correctly classified samples, gradient (one pass)."""
        z, lse, label, parts = self._gradient(w, X, y, c)
        loss = self._picked(z, lse, label, c)
        count = ((z.argmax(-1) == label[..., 0]) * (c > 0)).sum(-1).to(loss.dtype)
        return torch.cat([loss[..., None], count[..., None], *parts], -1)

    # -- local minima (non-convex) ------------------------------------------------------
    def _minimise(self, X, y, c) -> tuple[torch.Tensor, torch.Tensor]:
        r"""L-BFGS on :math:`J` separable problems at once from :meth:`initial_point` (the
        samples of weight 0 in every problem, the tables' padding, dropped)."""
        J, d, rho = X.shape[0], self.dim, self.ridge
        used = (c != 0).any(0)
        X, y, c = X[:, used], y[:, used], c[:, used]

        def value_and_grad(flat):
            w = torch.from_numpy(flat.reshape(J, d))
            z, lse, label, parts = self._gradient(w, X, y, c)
            f = self._picked(z, lse, label, c).sum() + 0.5 * rho * (w * w).sum()
            return f.item(), (torch.cat(parts, -1) + rho * w).reshape(-1).numpy()

        x0 = np.tile(self.initial_point(), J)
        res = scipy.optimize.minimize(
            value_and_grad, x0, jac=True, method="L-BFGS-B", options=_LBFGS_OPTIONS
        )
        w = torch.from_numpy(res.x.reshape(J, d))
        return w, (self._weighted_grad(w, X, y, c) + rho * w).norm(dim=-1)

    @declare(weights=WEIGHTS)
    def optimality_gap_bound(self, weights=None) -> float:
        r"""Certificate :math:`F_p(\hat w)-F_p^*\le F_p(\hat w)` of the computed local minimum
        :math:`\hat w` (default ``p = alpha``): cross-entropy and ridge are nonnegative, so
        :math:`F_p^*\ge0`. No curvature certificate exists (the objective is non-convex), so
        the bound is loose unless the model nearly interpolates its data (ridge 0)."""
        return self._solve(weights)[1]

    def __repr__(self) -> str:
        return (
            f"MLPProblem(N={self.num_clients}, layers={self.hidden}, C={self.num_classes}, "
            f"d={self.dim}, ridge={self.ridge:g}, batch_size={self.batch_size})"
        )
