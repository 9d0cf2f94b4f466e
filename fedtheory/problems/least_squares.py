r"""Federated least squares with ridge: every constant is exact.

Client :math:`k`: :math:`F_k(w)=\frac1{2n_k}\|X_kw-y_k\|^2+\frac\rho2\|w\|^2
=\tfrac12w^\top A_kw-m_k^\top w+\frac{\|y_k\|^2}{2n_k}` with
:math:`A_k=X_k^\top X_k/n_k+\rho I` and :math:`m_k=X_k^\top y_k/n_k`. Hence (tight)

.. math:: L=\max_k\lambda_{\max}(A_k),\qquad\mu=\min_k\lambda_{\min}(A_k),\qquad
          w_p^*=\Big(\sum_kp_kA_k\Big)^{-1}\sum_kp_km_k ,

(one Newton step from 0 is this solve; a singular system gets the minimum-norm
solution). The per-sample gradients :math:`x_i(x_i^\top w-y_i)` are affine in :math:`w`, so
the noise variance :math:`\sigma_k^2(w)` (see :mod:`fedtheory.problems.data_backed`) is a
convex quadratic in :math:`w` and CA-Fed Lemma 1's :math:`D,G,H` on a ball are exact
trust-region maxima (:mod:`fedtheory.problems.ball`).
"""

from __future__ import annotations

import numpy as np

from fedtheory.constraints import Bool, declare
from fedtheory.data.federated import FederatedDataset
from fedtheory.problems import fused as fused_kernel
from fedtheory.problems.ball import QuadraticConstantsMixin, QuadraticForms
from fedtheory.problems.data_backed import CONSTRUCTOR, DataProblem, matvec, vecmat

__all__ = ["LeastSquaresProblem"]


class LeastSquaresProblem(QuadraticConstantsMixin, DataProblem):
    r"""Ridge least squares :math:`\ell(w;x,y)=\tfrac12(x^\top w-y)^2`, :math:`\rho\ge0`.

    Parameters
    ----------
    data : FederatedDataset
        Real-valued labels.
    ridge : float
        :math:`\rho\ge0`.
    **options
        ``batch_size``, ``sampling``, ``alpha``, ``compute_dtype``, as in
        :class:`~fedtheory.problems.data_backed.DataProblem`.
    fused : bool
        As in :class:`~fedtheory.problems.logistic.LogisticRegressionProblem`.

    Examples
    --------
    >>> from fedtheory.data import gaussian_linear
    >>> prob = LeastSquaresProblem(gaussian_linear(3, 2, 10, seed=0), batch_size=4)
    >>> w, f = prob.optimum()
    >>> bool(np.linalg.norm(prob.full_grad(w)) < 1e-12)
    True
    """

    _LINEAR = True  # X w by einsum: a point never copies the data

    _LINK = fused_kernel.IDENTITY

    @declare(**CONSTRUCTOR, fused=Bool(none=True))
    def __init__(
        self, data: FederatedDataset, *, ridge: float = 0.0, fused: bool | None = None, **options
    ) -> None:
        super().__init__(data, ridge=ridge, **options)
        self._enable_fused(fused)
        self.dim = data.num_features
        X, y, n = data.features, data.labels, data.counts.astype(np.float64)
        self._gram = np.einsum("nsp,nsq->npq", X, X) / n[:, None, None]  # X^T X / n  [N,d,d]
        self._moment = np.einsum("nsp,ns->np", X, y) / n[:, None]  # m_k  [N, d]
        eig = np.linalg.eigvalsh(self._gram)
        self.L = float(eig[:, -1].max()) + self.ridge
        self.mu = float(eig[:, 0].min()) + self.ridge
        self._half_y2 = 0.5 * np.sum(y * y, axis=-1) / n

    # -- per-sample model -------------------------------------------------------------
    def _weighted_loss(self, w, X, y, c):
        return (c * 0.5 * (matvec(X, w) - y) ** 2).sum(-1)

    def _weighted_grad(self, w, X, y, c):
        r = c * (matvec(X, w) - y)
        return vecmat(r, X)

    def _weighted_hessian(self, w, X, y, c):
        return (X.transpose(-1, -2) * c[..., None, :]) @ X

    def _per_sample_grads(self, w, X, y):
        return X * (matvec(X, w) - y)[..., None]

    # -- exact constants as quadratic forms ---------------------------------------------
    def _A(self) -> np.ndarray:
        return self._gram + self.ridge * np.eye(self.dim)

    def loss_forms(self) -> QuadraticForms:
        r""":math:`F_k(w)=\tfrac12w^\top A_kw-m_k^\top w+\|y_k\|^2/(2n_k)`."""
        return QuadraticForms(self._A(), -self._moment, self._half_y2)

    def grad_norm_forms(self) -> QuadraticForms:
        r""":math:`\|\nabla F_k(w)\|^2=\|A_kw-m_k\|^2`."""
        A = self._A()
        return QuadraticForms(
            2 * A @ A, -2 * np.einsum("nij,nj->ni", A, self._moment), np.sum(self._moment**2, -1)
        )

    def noise_forms(self) -> QuadraticForms:
        r""":math:`\sigma_k^2(w)=\text{factor}_k\,S_k^2(w)` with
        :math:`S_k^2(w)=\frac1{n_k}\sum_i\|x_i\|^2(x_i^\top w-y_i)^2-\|G_kw-m_k\|^2`,
        :math:`G_k=X_k^\top X_k/n_k`."""
        X, y, n = self.data.features, self.data.labels, self.data.counts.astype(np.float64)
        sq = np.sum(X * X, axis=-1)  # ||x_i||^2  [N, n_max] (0 on padding)
        K = np.einsum("ns,nsp,nsq->npq", sq, X, X) / n[:, None, None]
        k = np.einsum("ns,ns,nsp->np", sq, y, X) / n[:, None]
        k0 = np.einsum("ns,ns->n", sq, y * y) / n
        G, m = self._gram, self._moment
        S2 = QuadraticForms(
            2 * (K - G @ G), -2 * (k - np.einsum("nij,nj->ni", G, m)), k0 - np.sum(m * m, -1)
        )
        return S2.scaled(self.noise_factor())

    def __repr__(self) -> str:
        return (
            f"LeastSquaresProblem(N={self.num_clients}, d={self.dim}, ridge={self.ridge:g}, "
            f"batch_size={self.batch_size}, L={self.L:.4g}, mu={self.mu:.4g})"
        )
