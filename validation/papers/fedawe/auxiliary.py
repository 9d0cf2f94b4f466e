r"""FedAWE's auxiliary sequence: the identities (7) and (8) checked exactly on runs
(Xiang et al. 2024, §6.1, Definition 1, (7)-(8); App. C (18)-(19); Proposition 4, App. F.4).

Runs of FedAWE (the simulator's vectorised class) under the paper's four availability
dynamics record every client model :math:`x_i^t` and mask. From them, Definition 1 (6)
gives the auxiliary models

.. math:: z_i^t=x_i^t-\eta_l\eta_gs\,(t-\tau_i(t)-1)\,\nabla F_i\big(x_i^{\tau_i(t)+1}\big),

with :math:`x_i^{\tau_i(t)+1}` read from the recorded models at round :math:`\tau_i(t)+1`.
The paper's recursion :math:`Z(t+1)=(Z(t)-\eta_l\eta_g\tilde G^t)W^{(t)}` then predicts
:math:`z^{t+1}` from :math:`z^t`, the innovation (19)
(:func:`fedtheory.bounds.fedawe.auxiliary_innovation`, from each active client's local
innovation :math:`G_i^t=x_i^t-x_i^{(t,s)}` computed by the simulator's ``local_sgd``) and
the mask: (7) for the clients active in round :math:`t`
(:data:`fedtheory.bounds.fedawe.auxiliary_active`, which with :math:`z_i^{t+1}=x_i^{t+1}` is
Proposition 4's second part) and (8) for the others
(:data:`fedtheory.bounds.fedawe.auxiliary_inactive`). Both sides are compared at every
replicate, round, client and coordinate, to float64 rounding (:data:`EXACT_RTOL`).

The identities are algebra on the iterates and hold for any gradients; the instance uses
exact gradients (:math:`\sigma=0`) so that the local innovations are reproducible outside
the run. Rounds without an active client have :math:`W^{(t)}=I` (the proof of Lemma 4):
every client follows (8) then. The interleaved sine, outside Assumption 1, is included:
the identities do not use it.
"""

from __future__ import annotations

import numpy as np
import torch

from fedtheory.availability.nonstationary import DYNAMICS
from fedtheory.bounds import fedawe
from fedtheory.budget import check_bytes
from fedtheory.constraints import Array, BoolArray, Exemplified, Fields, Instance, checking, declare
from fedtheory.errors import ParameterError
from fedtheory.problems import QuadraticProblem, fused
from fedtheory.sim import FedAWE
from fedtheory.sim.local import local_sgd
from fedtheory.sim.schedules import Constant
from fedtheory.validation.machinery import plots
from fedtheory.validation.machinery.kinds import part
from fedtheory.validation.machinery.registry import Check, Size, register
from fedtheory.validation.papers.fedawe.statements import NAMES, processes, run_fedawe, staleness
from fedtheory.verdict import compare_equal

EXACT_RTOL = 1e-12
"""Relative tolerance (times ``max(1, |z|)``) of the exact identities: float64 rounding
over a run."""


@part("fedawe-auxiliary")
def settings(size: Size) -> dict:
    reps = {"tiny": 2, "quick": 8, "full": 64}[size]
    return {"clients": 6, "dim": 3, "p_low": 0.15, "p_high": 0.95, "period": 20,
            "gamma": 0.3, "cutoff": 0.1, "rounds": 60, "replicates": reps, "seed": 0,
            "local_steps": 3, "lr": 0.05, "server_lr": 1.5}  # fmt: skip


def _grads(problem: QuadraticProblem, x: np.ndarray) -> np.ndarray:
    r""":math:`\nabla F_i` at client :math:`i`'s own point, ``x [..., N, d] -> [..., N, d]``."""
    return np.einsum("nij,...nj->...ni", problem.A, x - problem.c)


def _mean_active(v: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean of ``v [R, T, N, d]`` over the active clients ``mask [R, T, N]`` -> ``[R, T, 1, d]``
    (0 in rounds without an active client, where it is not used)."""
    count = np.maximum(mask.sum(-1, keepdims=True)[..., None], 1)
    return np.sum(v * mask[..., None], axis=2, keepdims=True) / count


@declare(
    finite_result=True,
    problem=Exemplified(
        Instance(QuadraticProblem), lambda args: QuadraticProblem.random(2, 2, mu=0.5, L=2.0)
    ),
    alg=Exemplified(
        Fields(FedAWE, client_lr=Instance(Constant), server_rate=Instance(Constant)),
        lambda args: FedAWE(local_steps=2, lr=0.05, server_lr=1.5),
    ),
    x=Exemplified(
        Array(shape=(None, None, "problem.num_clients", "problem.dim")),
        lambda args: np.ones((1, 4, args["problem"].num_clients, args["problem"].dim)),
    ),
    mask=Exemplified(
        BoolArray(shape=("x[0]", None, "x[2]")),
        lambda args: np.ones((1, 3, args["problem"].num_clients), dtype=bool),
    ),
)
def auxiliary(problem, alg, mask: np.ndarray, x: np.ndarray) -> dict[str, np.ndarray]:
    r"""Definition 1's :math:`z` ``[R, T, N, d]`` from a run (``mask [R, T, N]``, client
    models ``x [R, T+1, N, d]``) and the prediction of :math:`z^{t+1}` by (7)/(8), with the
    mask of each prediction (``active [R, T-1, N]``). The identities hold at constant rates
    :math:`\eta_l,\eta_g` (a FedAWE of constant ``lr`` and ``server_lr``)."""
    r, T, n = mask.shape
    if checking() and x.shape[1] != T + 1:
        raise ParameterError(
            f"The 'x' parameter of auxiliary must hold the T + 1 = {T + 1} client models "
            f"[R, T+1, N, d] of the run whose mask [R, T, N] is given. Got shape {x.shape} "
            "instead."
        )
    # about twelve [R, T, N, d] arrays: z, gradients, local innovations, both predictions
    check_bytes(
        12 * 8 * x.size, "auxiliary", what=f"arrays like x {x.shape}", fixes="a shorter run"
    )
    eta = alg.client_lr(0) * alg.server_rate(0)  # constant rates (declared)
    s = alg.local_steps
    gap = staleness(mask)  # [R, T, N] t - tau_i(t)
    first = np.arange(T)[None, :, None] - gap + 1  # tau_i(t) + 1
    rr, _, ii = np.meshgrid(np.arange(r), np.arange(T), np.arange(n), indexing="ij")
    at_first = x[rr, first, ii]  # [R, T, N, d] x_i^{tau_i(t)+1}
    g_first = _grads(problem, at_first)
    z = x[:, :T] - eta * s * (gap - 1)[..., None] * g_first
    # local innovations of every (replicate, round, client) from its model x_i^t
    start = torch.as_tensor(x[:, :T].reshape(-1, x.shape[-1]))
    clients = torch.as_tensor(np.broadcast_to(np.arange(n), (r, T, n)).reshape(-1))
    delta = local_sgd(problem, start, clients, steps=s, lr=alg.client_lr(0)).numpy()
    local_sum = -delta.reshape(x[:, :T].shape) / alg.client_lr(0)  # sum_r grad F_i(x^(t,r))
    innov = fedawe.auxiliary_innovation(local_sum, s * _grads(problem, x[:, :T]), gap, mask)
    count = mask.sum(-1, keepdims=True)[..., None]  # [R, T, 1, 1]
    rates = {"eta_l": alg.client_lr(0), "eta_g": alg.server_rate(0), "s": s}
    active = fedawe.auxiliary_active.evaluate(
        eta_l=rates["eta_l"],
        eta_g=rates["eta_g"],
        zbar_active=_mean_active(z, mask),
        innovation_active=_mean_active(innov, mask),
    ).total  # [R, T, 1, d]
    inactive = fedawe.auxiliary_inactive.evaluate(**rates, z_prev=z, grad_prev=g_first).total
    use_active = mask[..., None] & (count > 0)
    predicted = np.where(use_active, active, inactive)  # [R, T, N, d] z^{t+1}
    return {"z": z, "predicted": predicted, "active": mask}


@part("fedawe-auxiliary")
def compute(s: dict) -> dict[str, np.ndarray]:
    with fused.owns_the_cores():  # small tensors: torch on one thread
        problem = QuadraticProblem.random(s["clients"], s["dim"], mu=0.5, L=2.0, seed=s["seed"])
        alg = FedAWE(local_steps=s["local_steps"], lr=s["lr"], server_lr=s["server_lr"])
        out = {}
        for d, proc in processes(s).items():
            run = {"rounds": s["rounds"], "replicates": s["replicates"], "seed": s["seed"]}
            mask, _, x = run_fedawe(problem, proc, alg, **run, w0=np.ones(s["dim"]))
            a = auxiliary(problem, alg, mask, x)
            z_next, pred = a["z"][:, 1:], a["predicted"][:, :-1]  # rounds t + 1 = 1..T-1
            act = np.broadcast_to(a["active"][:, :-1, :, None], pred.shape)
            out[f"{d}_active_measured"] = z_next[act]
            out[f"{d}_active_predicted"] = pred[act]
            out[f"{d}_inactive_measured"] = z_next[~act]
            out[f"{d}_inactive_predicted"] = pred[~act]
            err = np.abs(z_next - pred) / np.maximum(1.0, np.abs(pred))  # [R, T-1, N, d]
            out[f"{d}_error"] = err.max(axis=(0, 2, 3))  # [T-1] worst per round
    return out


@part("fedawe-auxiliary")
def judge(data, s):
    rows = []
    for d in DYNAMICS:
        for key, thm in (
            ("active", fedawe.auxiliary_active),
            ("inactive", fedawe.auxiliary_inactive),
        ):
            who = "in A_t" if key == "active" else "not in A_t"
            m, p = data[f"{d}_{key}_measured"], data[f"{d}_{key}_predicted"]
            rows.append(
                compare_equal(
                    f"z_i^(t+1) by Definition 1 (6) from the run = {thm.title.split(':')[0]} "
                    f"for every client {who}, round t < {s['rounds'] - 1} and coordinate "
                    f"({NAMES[d]})",
                    thm.reference, m, p, rtol=EXACT_RTOL,
                    atol=EXACT_RTOL * max(1.0, float(np.max(np.abs(p), initial=0.0))),
                )
            )  # fmt: skip
    return rows


@part("fedawe-auxiliary")
def plot(data, s, fig):
    (ax,) = plots.panels(fig, 1)
    t = np.arange(1, s["rounds"])
    for i, d in enumerate(DYNAMICS):
        err = np.maximum(data[f"{d}_error"], 1e-18)  # exact zeros drawn at the floor
        ax.plot(t, err, **plots.series(i, points=t.size), label=NAMES[d])
    exponent = round(np.log10(EXACT_RTOL))
    ax.axhline(EXACT_RTOL, **plots.REFERENCE, label=rf"tolerance $10^{{{exponent}}}$")
    ax.set(yscale="log", xlabel="round $t+1$ (rounds)",
           ylabel=r"$\max_i|z_i^{t+1}-\mathrm{(7)/(8)}|\,/\max(1,|\mathrm{(7)/(8)}|)$",
           title="FedAWE auxiliary sequence: (7)/(8) against Definition 1")  # fmt: skip
    plots.legend(ax)
    return (
        "Largest relative deviation per round, over replicates, clients and coordinates, of "
        "z_i^(t+1) by Definition 1 (6) from the run from FedAWE (7) (clients in A_t) or (8) "
        "(the others), one series per dynamics; a row holds when every deviation is within "
        f"the tolerance {EXACT_RTOL:g} (line). Exact zeros are drawn at 1e-18."
    )


register(
    Check(
        "fedawe-auxiliary",
        "FedAWE's auxiliary sequence: (7) and (8) exactly",
        "Xiang et al. (FedAWE), NeurIPS 2024: Definition 1, (7)-(8), App. C (18)-(19), "
        "Proposition 4 (App. F.4)",
        settings,
        compute,
        judge,
        plot,
        bounds=tuple(f"{d}_{k}_predicted" for d in DYNAMICS for k in ("active", "inactive")),
        cost=0.2,
    )
)
