r"""The smooth KKT system of a weight program on a fixed support: Newton polishing and the
derivative of the optimal weights with respect to the availability :math:`\pi`.

Rodio et al. 2023, App. D, Lagrangian (26), in the variables :math:`(y,s)`. On the support
:math:`S=\{k:q_k^*>0\}` (assumed strictly complementary: excluded clients stay excluded under
a small change of :math:`\pi`), the optimum :math:`z=(y_S,s,\lambda,\theta)` solves
:math:`R(z,\pi)=0`:

.. math:: \nabla_{y_S}\varphi-\lambda\pi_S+\theta\mathbf 1=0,\quad
          \partial_s\varphi-\theta Q=0,\quad \pi_S^\top y_S=1,\quad \mathbf 1^\top y_S=Qs,

with :math:`\varphi=\frac1{2s}y^\top Ay+Bs+C+w\,(\sum_k\frac{\alpha_k^2}{\pi_ky_k}-1)`
(the last term for ``bias="chi2"``). Newton's method on :math:`R` polishes a solver's
answer to machine precision; the implicit function theorem gives
:math:`dz/d\pi=-(\partial_zR)^{-1}\partial_\pi R` and :math:`q=y/s`. The total-variation
program is not differentiable (absolute values) and is not supported.
"""

from __future__ import annotations

import numpy as np
import torch

from fedtheory.constraints import Array, Bool, Instance, declare
from fedtheory.errors import ParameterError, SolverError
from fedtheory.optim.instance import WeightInstance
from fedtheory.optim.program import ZERO_WEIGHT_RTOL, WeightSolution, excluded_clients

__all__ = ["polish_weights", "weight_sensitivity"]

NEWTON_ITERATIONS = 30
NEWTON_RTOL = 1e-13
"""Newton stops when the KKT residual is below ``NEWTON_RTOL`` times its scale."""


class _SupportKKT:
    """KKT residual of ``instance`` on the support of ``q``; ``z = (y_S, s, lambda, theta)``."""

    def __init__(
        self, instance: WeightInstance, q, owner: str, curvature_scales_with_pi=False, support=None
    ):
        Instance(WeightInstance).check(instance, "instance", owner, {})
        if instance.bias == "tv" and instance.bias_weight > 0:
            raise ParameterError(
                f"The 'instance' parameter of {owner} must have bias 'none' or 'chi2' (the "
                "total-variation program is not differentiable). Got bias='tv' instead."
            )
        n, self.Q = instance.num_clients, instance.Q
        self.q = Array(shape=(n,), low=0.0, min_size=0).check(q, "q", owner, {})
        if support is None:
            positive = ~excluded_clients(self.q, self.Q)
            if instance.bias == "chi2" and instance.bias_weight > 0:
                positive |= instance.alpha > 0  # chi-square keeps these strictly positive
            support = np.flatnonzero(positive & ~instance.excluded)
        if support.size == 0:
            raise ParameterError(
                f"The 'q' parameter of {owner} must have a positive entry. Got all zeros instead."
            )
        self.inst, self.n, self.S = instance, n, torch.from_numpy(support)
        self.pi = torch.from_numpy(instance.pi)
        self.scales = curvature_scales_with_pi
        self.grad_phi = torch.func.grad(self.phi, argnums=(0, 1))

    def phi(self, y_S: torch.Tensor, s: torch.Tensor, pi: torch.Tensor) -> torch.Tensor:
        inst, S = self.inst, self.S
        a = torch.from_numpy(inst.a)
        if self.scales:
            a = a * pi / self.pi
        value = 0.5 * (a[S] * y_S**2).sum() / s + inst.B * s + inst.C
        if inst.bias == "chi2" and inst.bias_weight > 0:
            alpha = torch.from_numpy(inst.alpha)[S]
            value = value + inst.bias_weight * ((alpha**2 / (pi[S] * y_S)).sum() - 1.0)
        return value

    def residual(self, z: torch.Tensor, pi: torch.Tensor) -> torch.Tensor:
        S, m = self.S, self.S.numel()
        y_S, s, lam, theta = z[:m], z[m], z[m + 1], z[m + 2]
        g_y, g_s = self.grad_phi(y_S, s, pi)
        return torch.cat(
            [
                g_y - lam * pi[S] + theta,
                (g_s - theta * self.Q)[None],
                (pi[S] @ y_S - 1.0)[None],
                (y_S.sum() - self.Q * s)[None],
            ]
        )

    def start(self) -> torch.Tensor:
        """``z`` from ``q``, with the multipliers fitted to stationarity (least squares)."""
        S, pi = self.S, self.pi
        q = torch.from_numpy(self.q)
        s = 1.0 / (pi @ q)
        y_S = s * q[S]
        g_y, g_s = self.grad_phi(y_S, s, pi)
        theta = g_s / self.Q
        lam = ((g_y + theta) @ pi[S]) / (pi[S] @ pi[S])
        return torch.cat([y_S, s[None], lam[None], theta[None]])

    def jacobians(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        J_z = torch.func.jacrev(self.residual, argnums=0)(z, self.pi)  # [m+3, m+3]
        J_pi = torch.func.jacrev(self.residual, argnums=1)(z, self.pi)  # [m+3, N]
        return J_z, J_pi

    def weights(self, z: torch.Tensor) -> np.ndarray:
        m = self.S.numel()
        q = torch.zeros(self.n, dtype=torch.float64)
        q[self.S] = z[:m] / z[m]
        return q.numpy()


def _newton(kkt: _SupportKKT) -> tuple[torch.Tensor, float]:
    """Damped Newton on ``kkt``'s residual from its start; ``(z, max |residual|)``."""
    m = kkt.S.numel()
    z = kkt.start()
    z[:m] = z[:m].clamp_min(1e-12 * z[m])  # y_S > 0 on the support
    scale = 1.0 + z.abs().max()
    r = kkt.residual(z, kkt.pi)
    for _ in range(NEWTON_ITERATIONS):
        if r.abs().max() <= NEWTON_RTOL * scale:
            break
        step = torch.linalg.solve(kkt.jacobians(z)[0], r)
        for t in 0.5 ** np.arange(40):  # damped: stay in y_S > 0, decrease the residual
            trial = z - t * step
            r_trial = kkt.residual(trial, kkt.pi) if torch.all(trial[:m] > 0) else r
            if r_trial.norm() < r.norm():
                z, r = trial, r_trial
                break
        else:
            break  # no descent step: reported by the caller
    return z, float(r.abs().max() / scale)


@declare(instance=Instance(WeightInstance), q=Array(shape=("instance.num_clients",), low=0.0))
def polish_weights(instance: WeightInstance, q) -> WeightSolution:
    r"""Newton's method on the KKT system of ``instance``, starting from the support of ``q``.

    Turns a solver's approximate optimum (accurate to about the square root of its
    tolerance) into one accurate to rounding, for ``bias`` ``"none"`` or ``"chi2"``. A
    client left out of the support whose multiplier :math:`\mu_k=\theta-\lambda\pi_k`
    (App. D, (26)) is negative is added back and Newton is rerun (active set). ``SolverError``
    if damped Newton does not converge."""
    kkt = _SupportKKT(instance, q, "polish_weights")
    allowed = ~instance.excluded
    for _ in range(instance.num_clients):
        z, residual = _newton(kkt)
        if residual > NEWTON_RTOL:
            raise SolverError(
                f"polish_weights: Newton did not reach a KKT residual below {NEWTON_RTOL:g} "
                f"in {NEWTON_ITERATIONS} iterations (relative residual {residual:.3g})."
            )
        m = kkt.S.numel()
        lam, theta = float(z[m + 1]), float(z[m + 2])
        outside = allowed.copy()
        outside[kkt.S.numpy()] = False
        mu = np.where(outside, theta - lam * instance.pi, np.inf)
        if mu.min() >= -NEWTON_RTOL * (abs(theta) + abs(lam)):
            break
        grown = np.sort(np.append(kkt.S.numpy(), np.argmin(mu)))
        q_next = kkt.weights(z)
        q_next[np.argmin(mu)] = ZERO_WEIGHT_RTOL * instance.Q  # small positive start
        kkt = _SupportKKT(instance, q_next, "polish_weights", support=grown)
    qp = kkt.weights(z)
    return WeightSolution(
        qp, instance.objective(qp), "optimal", excluded_clients(qp, instance.Q), "newton"
    )


@declare(
    instance=Instance(WeightInstance),
    q=Array(shape=("instance.num_clients",), low=0.0),
    curvature_scales_with_pi=Bool(),
    finite_result=True,  # q far from the optimum (zero, huge) leaves the KKT system singular
)
def weight_sensitivity(
    instance: WeightInstance, q, *, curvature_scales_with_pi: bool = False
) -> np.ndarray:
    r"""Jacobian :math:`\partial q^*_k/\partial\pi_j` ``[N, N]`` at the optimum ``q [N]``.

    ``q`` is the optimum of ``instance`` (from :class:`~fedtheory.optim.WeightProgram`,
    :func:`~fedtheory.optim.waterfilling_weights` or :func:`polish_weights`). With
    ``curvature_scales_with_pi`` the diagonal :math:`a_k` is taken proportional to
    :math:`\pi_k`, as in Theorem 2's :math:`\Sigma=\mathrm{diag}(\sigma_k^2\pi_k\sum_t\eta_t^2)`;
    otherwise :math:`A` is held fixed. Exact at a strictly complementary optimum (up to the
    accuracy of ``q``); excluded clients have zero derivative.
    """
    kkt = _SupportKKT(instance, q, "weight_sensitivity", curvature_scales_with_pi)
    z = kkt.start()
    J_z, J_pi = kkt.jacobians(z)
    dz = -torch.linalg.solve(J_z, J_pi)  # [m+3, N]
    m, S = kkt.S.numel(), kkt.S
    y_S, s = z[:m], z[m]
    dq = torch.zeros(kkt.n, kkt.n, dtype=torch.float64)
    dq[S] = (dz[:m] - (y_S / s)[:, None] * dz[m][None, :]) / s  # d(y/s)
    return dq.numpy()
