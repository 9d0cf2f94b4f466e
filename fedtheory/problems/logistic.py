r"""Ridge-regularised logistic regression, binary and multinomial (no intercept: append a
constant feature to get one; it is then regularised too, which keeps :math:`\mu` exact).

**Binary** (labels :math:`y\in\{0,1\}`, CA-Fed App. F):
:math:`\ell(w;x,y)=\log(1+e^{z})-yz` with :math:`z=\langle w,x\rangle`, Hessian
:math:`\frac1{n_k}X_k^\top\mathrm{diag}(s_i(1-s_i))X_k+\rho I` with :math:`s=\sigma(z)`.
Since :math:`s(1-s)\le\frac14`, certified constants are

.. math:: L=\max_k\frac{\lambda_{\max}(X_k^\top X_k)}{4n_k}+\rho\ \text{(upper bound)},
          \qquad \mu=\rho\ \text{(lower bound)} .

**Multinomial** (:math:`C` classes, :math:`W\in\mathbb R^{C\times p}` flattened row-major to
:math:`d=Cp`, FedLaAvg's MNIST model): :math:`\ell=\log\sum_ce^{z_c}-z_y` with :math:`z=Wx`.
The Hessian of :math:`\ell` in :math:`z` is :math:`\mathrm{diag}(s)-ss^\top\preceq\frac12I`
(Gershgorin: row :math:`c` gives :math:`s_c(1-s_c)+s_c\sum_{c'\ne c}s_{c'}=2s_c(1-s_c)\le\frac12`),
hence :math:`L=\max_k\lambda_{\max}(X_k^\top X_k)/(2n_k)+\rho` (upper bound) and
:math:`\mu=\rho`.

**CA-Fed Lemma 1 on a ball** :math:`W` (certified upper bounds, not suprema). The residual
:math:`r_i=\partial\ell/\partial z` satisfies :math:`\|r_i\|\le\beta` with
:math:`\beta=1` (binary, :math:`|s-y|\le1`) or :math:`\sqrt2`
(multinomial, :math:`\|s-e_y\|^2\le2(1-s_y)^2`). With :math:`R_W=\|c\|+r`,
:math:`\lambda_k=\lambda_{\max}(X_k^\top X_k/n_k)` and :math:`\nu_k=\max_i\|x_i\|`:

.. math:: D_k=\beta\min\big(\sqrt{\lambda_k},\tfrac1{n_k}\textstyle\sum_i\|x_i\|\big)+\rho R_W,
          \quad \sup_W\sigma_k^2\le\text{factor}_k\,\beta^2\tfrac1{n_k}\textstyle\sum_i\|x_i\|^2,

:math:`G_k^2=\min\{(\beta\nu_k+\rho R_W)^2,\ D_k^2+\sup_W\sigma_k^2\}` and
:math:`H_k=D_k(\|c-w_B^*\|+r)` (mean-value theorem).
"""

from __future__ import annotations

from abc import abstractmethod

import numpy as np
import torch

from fedtheory.constraints import Bool, Instance, Real, declare
from fedtheory.data.federated import FederatedDataset
from fedtheory.errors import ParameterError
from fedtheory.problems import fused as fused_kernel
from fedtheory.problems.ball import Ball, LemmaOneConstants
from fedtheory.problems.data_backed import CONSTRUCTOR, ClassificationProblem, matvec, vecmat

__all__ = ["LogisticRegressionProblem", "MultinomialLogisticProblem"]


def _max_gram_eigenvalue(data: FederatedDataset) -> float:
    r""":math:`\max_k\lambda_{\max}(X_k^\top X_k/n_k)` (padding rows are zero)."""
    gram = np.einsum("nsp,nsq->npq", data.features, data.features) / data.counts[:, None, None]
    return float(np.linalg.eigvalsh(gram)[:, -1].max())


class _GLMBallBounds(ClassificationProblem):
    r"""Ridge GLM (:math:`\rho>0`) with the certified constants of the module docstring:
    :math:`L=\kappa\max_k\lambda_{\max}(X_k^\top X_k/n_k)+\rho`, :math:`\mu=\rho`, and
    CA-Fed Lemma 1 bounds on a ball."""

    _RESIDUAL_BOUND: float  # beta >= ||d loss / d z||
    _LOSS_CURVATURE: float  # kappa >= ||d^2 loss / d z^2|| (1/4 binary, 1/2 multinomial)

    @declare(data=CONSTRUCTOR["data"], ridge=Real(0.0, low_open=True), fused=Bool(none=True))
    def __init__(
        self, data: FederatedDataset, *, ridge: float = 1e-2, fused: bool | None = None, **options
    ) -> None:
        super().__init__(data, ridge=ridge, positive_ridge=True, **options)
        self._enable_fused(fused)
        self.dim = self._model_dim(data)
        self.L = _max_gram_eigenvalue(data) * self._LOSS_CURVATURE + self.ridge
        self.mu = self.ridge

    @abstractmethod
    def _model_dim(self, data: FederatedDataset) -> int:
        """Check the labels (and set the model's own attributes); return :math:`d`."""

    # -- the model as a function of the logits z (subclasses) ------------------------------
    @abstractmethod
    def _logits(self, w, X) -> torch.Tensor:
        """Logits ``z`` of every sample (``[..., s]`` binary, ``[..., s, C]`` multinomial)."""

    @abstractmethod
    def _losses_at(self, z, y) -> torch.Tensor:
        """Per-sample losses ``[..., s]``."""

    @abstractmethod
    def _grad_at(self, z, X, y, c) -> torch.Tensor:
        r""":math:`\sum_ic_i\nabla\ell_i` ``[..., d]``."""

    @abstractmethod
    def _correct_at(self, z, y) -> torch.Tensor:
        """Boolean ``[..., s]``: is sample ``i`` classified correctly."""

    def _weighted_loss(self, w, X, y, c):
        return (c * self._losses_at(self._logits(w, X), y)).sum(-1)

    def _weighted_grad(self, w, X, y, c):
        return self._grad_at(self._logits(w, X), X, y, c)

    def _correct(self, w, X, y):
        return self._correct_at(self._logits(w, X), y)

    def _data_terms(self, w, X, y, c):
        z = self._logits(w, X)  # one forward pass for the loss, gradient and accuracy
        loss = (c * self._losses_at(z, y)).sum(-1, keepdim=True)
        correct = (self._correct_at(z, y) * (c > 0)).sum(-1, keepdim=True).to(loss.dtype)
        return torch.cat([loss, correct, self._grad_at(z, X, y, c)], -1)

    def max_noise_variance(self, ball: Ball) -> np.ndarray:
        r"""Upper bound on :math:`\max_{w\in W}\sigma_k^2(w)` ``[N]`` (holds on all of
        :math:`\mathbb R^d`)."""
        ball.check_dim(self.dim, self._owner)
        m2 = np.sum(self.data.features**2, axis=(1, 2)) / self.data.counts
        return self.noise_factor() * self._RESIDUAL_BOUND**2 * m2

    def lemma1_constants(self, ball: Ball, weights=None) -> LemmaOneConstants:
        r"""Certified upper bounds :math:`D_k,G_k,H_k` on ``ball`` (``exact=False``), with
        :math:`H` relative to :math:`w_B^*`, the optimum for ``weights``."""
        ball.check_dim(self.dim, self._owner)
        X, n, beta = self.data.features, self.data.counts, self._RESIDUAL_BOUND
        norms = np.linalg.norm(X, axis=-1)  # [N, n_max], 0 on padding
        gram = np.einsum("nsp,nsq->npq", X, X) / n[:, None, None]
        data_grad = beta * np.minimum(np.sqrt(np.linalg.eigvalsh(gram)[:, -1]), norms.sum(1) / n)
        ridge_grad = self.ridge * ball.farthest_distance(np.zeros(self.dim))
        D = data_grad + ridge_grad
        G2 = np.minimum(
            (beta * norms.max(1) + ridge_grad) ** 2, D**2 + self.max_noise_variance(ball)
        )
        w_ref, _ = self.optimum(weights)
        return LemmaOneConstants(D, np.sqrt(G2), D * ball.farthest_distance(w_ref), exact=False)


class LogisticRegressionProblem(_GLMBallBounds):
    r"""Binary logistic regression with ridge :math:`\rho>0` on federated data.

    Parameters
    ----------
    data : FederatedDataset
        Labels in {0, 1}.
    ridge : float
        :math:`\rho>0` (CA-Fed App. F: :math:`10^{-2}`).
    fused : bool, optional
        Whether the simulator runs local SGD in the compiled kernel of
        :mod:`fedtheory.problems.fused` (same law as step-by-step ``grad``, other random
        numbers). ``None`` (default): when the model has one (binary logistic regression
        and least squares do; ``True`` for a model without one is an error).
    **options
        ``batch_size``, ``sampling``, ``alpha``, ``compute_dtype``, as in
        :class:`~fedtheory.problems.data_backed.DataProblem`.

    Examples
    --------
    >>> from fedtheory.data import cafed_clustered
    >>> prob = LogisticRegressionProblem(cafed_clustered(4, 3, 20, seed=0), batch_size=8)
    >>> w, f = prob.optimum()
    >>> bool(prob.optimality_gap_bound() < 1e-18)
    True
    """

    _LINEAR = True  # logits X w by einsum: a point never copies the data

    _RESIDUAL_BOUND = 1.0
    _LOSS_CURVATURE = 0.25
    _LINK = fused_kernel.LOGISTIC

    def _model_dim(self, data: FederatedDataset) -> int:
        if not np.isin(data.labels[data.valid], (0.0, 1.0)).all():
            raise ParameterError(
                f"The 'data' parameter of {self._owner} must have labels in {{0, 1}}. "
                "Got other values instead."
            )
        return data.num_features

    @declare(ball=Instance(Ball), finite_result=True)
    def curvature_on_ball(self, ball: Ball) -> tuple[float, float]:
        r"""Certified :math:`(\mu_W, L_W)` with :math:`\mu_WI\preceq\nabla^2F_k(w)\preceq L_WI`
        for all :math:`w\in W` and all :math:`k` (tighter than the global ``mu``, ``L``).

        On :math:`W`, :math:`z_i=\langle x_i,w\rangle` ranges over
        :math:`[\langle x_i,c\rangle\mp r\|x_i\|]` and :math:`\sigma'(z)` decreases in
        :math:`|z|`, so :math:`\sigma'(|\langle x_i,c\rangle|+r\|x_i\|)\le s_i(1-s_i)\le
        \sigma'(\max(0,|\langle x_i,c\rangle|-r\|x_i\|))`; the Hessian is monotone in these
        weights (Loewner order)."""
        ball.check_dim(self.dim, self._owner)
        X, n = self.data.features, self.data.counts
        centre = np.abs(X @ ball.center)  # [N, n_max]
        spread = ball.radius * np.linalg.norm(X, axis=-1)

        def sigma_prime(z):
            s = 1.0 / (1.0 + np.exp(-z))
            return s * (1.0 - s)

        def extreme_eigenvalue(h, which):
            H = np.einsum("ns,nsp,nsq->npq", h * self.data.valid, X, X) / n[:, None, None]
            return np.linalg.eigvalsh(H)[:, which]

        # the data term is PSD: a negative smallest eigenvalue is rounding
        mu = max(extreme_eigenvalue(sigma_prime(centre + spread), 0).min(), 0.0) + self.ridge
        L = extreme_eigenvalue(sigma_prime(np.maximum(centre - spread, 0.0)), -1).max()
        return float(mu), float(L + self.ridge)

    def _logits(self, w, X):
        return matvec(X, w)  # [..., s]

    def _losses_at(self, z, y):
        return torch.logaddexp(torch.zeros_like(z), z) - y * z

    def _grad_at(self, z, X, y, c):
        return vecmat(c * (torch.sigmoid(z) - y), X)

    def _correct_at(self, z, y):
        return (z > 0) == (y > 0.5)

    def _weighted_hessian(self, w, X, y, c):
        s = torch.sigmoid(self._logits(w, X))
        return (X.transpose(-1, -2) * (c * s * (1 - s))[..., None, :]) @ X

    def _per_sample_grads(self, w, X, y):
        return X * (torch.sigmoid(self._logits(w, X)) - y)[..., None]

    def __repr__(self) -> str:
        return (
            f"LogisticRegressionProblem(N={self.num_clients}, d={self.dim}, ridge="
            f"{self.ridge:g}, batch_size={self.batch_size}, L<={self.L:.4g}, mu={self.mu:g})"
        )


class MultinomialLogisticProblem(_GLMBallBounds):
    r"""Multinomial (softmax) logistic regression with ridge :math:`\rho>0`.

    Parameters are those of :class:`LogisticRegressionProblem`; ``data.num_classes`` gives
    :math:`C` and the flat parameter is :math:`W` ``[C, p]`` row-major (``d = C p``).

    Examples
    --------
    >>> from fedtheory.data import load_digits_federated
    >>> prob = MultinomialLogisticProblem(load_digits_federated(10, seed=0), batch_size=5)
    >>> prob.dim
    650
    """

    _RESIDUAL_BOUND = float(np.sqrt(2.0))
    _LOSS_CURVATURE = 0.5

    def _model_dim(self, data: FederatedDataset) -> int:
        self.num_classes = self._multiclass(data, self._owner)
        return self.num_classes * data.num_features

    def _logits(self, w, X):
        W = w.reshape(*w.shape[:-1], self.num_classes, self.data.num_features)  # [..., C, p]
        return X @ W.transpose(-1, -2)  # [..., s, C]

    def _onehot_like(self, y):
        return torch.nn.functional.one_hot(y.long(), self.num_classes).to(y.dtype)

    def _losses_at(self, z, y):
        return torch.logsumexp(z, dim=-1) - (z * self._onehot_like(y)).sum(-1)

    def _residuals_at(self, z, y):
        return torch.softmax(z, dim=-1) - self._onehot_like(y)  # [..., s, C]

    def _grad_at(self, z, X, y, c):
        r = self._residuals_at(z, y) * c[..., None]  # [..., s, C]
        g = r.transpose(-1, -2) @ X  # [..., C, p]
        return g.reshape(*g.shape[:-2], self.dim)

    def _correct_at(self, z, y):
        return z.argmax(-1) == y.long()

    def _weighted_hessian(self, w, X, y, c):
        s = torch.softmax(self._logits(w, X), dim=-1)  # [..., s, C]
        sx = (s[..., :, None] * X[..., None, :]).flatten(-2)  # [..., s, C p]
        outer = (sx * c[..., None]).transpose(-1, -2) @ sx  # sum_i c_i (s x)(s x)^T
        csx = ((c[..., None] * s)[..., :, None] * X[..., None, :]).flatten(-2)  # [..., s, C p]
        diag = (csx.transpose(-1, -2) @ X).unflatten(-2, (self.num_classes, -1))  # [.., C,p,p]
        eye = torch.eye(self.num_classes, dtype=s.dtype)
        block = torch.einsum("...ajl,ab->...ajbl", diag, eye).flatten(-4, -3).flatten(-2)
        return block - outer

    def _per_sample_grads(self, w, X, y):
        r = self._residuals_at(self._logits(w, X), y)
        return (r[..., :, None] * X[..., None, :]).flatten(-2)  # [..., s, C p]

    def __repr__(self) -> str:
        return (
            f"MultinomialLogisticProblem(N={self.num_clients}, C={self.num_classes}, d="
            f"{self.dim}, ridge={self.ridge:g}, batch_size={self.batch_size}, "
            f"L<={self.L:.4g}, mu={self.mu:g})"
        )
