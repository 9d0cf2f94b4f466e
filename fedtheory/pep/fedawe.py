r"""FedAWE (Xiang et al. 2024, Algorithm 1) written on PEPit points, round by round as
:class:`fedtheory.sim.FedAWE` runs it for a given mask.

Every client keeps its model :math:`x_i` and last active round :math:`\tau_i` (:math:`-1`
at first). In round :math:`t` the active clients :math:`A_t` (the simulator's
``participants``) run :math:`s` local gradient steps from :math:`x_i^t`
(:math:`\Delta_i=x_i^{(t,s)}-x_i^t`); the server sets

.. math:: x^{t+1}=\frac1{|A_t|}\sum_{i\in A_t}\big(x_i^t+\eta_g(t)\,(t-\tau_i(t))\,\Delta_i\big)

(adaptive innovation echoing), sends it to the active clients only (implicit gossiping:
:math:`x_i^{t+1}=x^{t+1}`, :math:`\tau_i=t` for :math:`i\in A_t`), and the others keep
:math:`x_i,\tau_i`. A round without an active client changes nothing (the simulator's
convention, :math:`W^{(t)}=I` in the proof of Lemma 4). The authors' clipped update
(``clip``) is not linear and is refused.

:func:`run` also returns what the paper's statements measure: the client models
:math:`x_i^t`, their mean :math:`\bar x^t` (Corollaries 2-3) and the auxiliary models of
Definition 1 (6), :math:`z_i^t=x_i^t-\eta_l\eta_gs(t-\tau_i(t)-1)\nabla F_i(x_i^{\tau_i(t)+1})`
(Theorem 1, Lemma 6; :math:`x_i^{\tau_i(t)+1}=x_i^t` since an inactive client keeps its
model), with the gradients the method already evaluated; :func:`measure` computes the same
criteria on a simulator run, which is how :func:`fedtheory.pep.replay` replays them.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch

from fedtheory.constraints import (
    Array,
    Exemplified,
    Instance,
    InstanceOf,
    Mask,
    Option,
    SequenceOf,
    Text,
    declare,
)
from fedtheory.errors import ParameterError
from fedtheory.pep._pepit import FUNCTION, FUNCTIONS, POINT, POINTS
from fedtheory.sim.fedawe import FedAWE

STATEMENTS = ("fedawe_zbar", "fedawe_xbar", "fedawe_consensus_x", "fedawe_consensus_z")
"""The left sides of FedAWE's statements, as criteria (:func:`statement_terms`)."""
ALGORITHM = Exemplified(Instance(FedAWE), lambda args: FedAWE(lr=0.1))
PROBLEM = InstanceOf("fedtheory.problems.base:FederatedProblem")


@declare(server=POINTS, clients=SequenceOf(POINTS, min_size=1), aux=SequenceOf(POINTS, min_size=0))
class Trajectory(list):
    """The server models :math:`x^0..x^T` (the list itself, what the generic criteria read)
    with the client models ``clients[t][i]`` (:math:`t\\le T`) and the auxiliary models
    ``aux[t][i]`` (:math:`t<T`), PEPit points."""

    def __init__(self, server, clients, aux) -> None:
        super().__init__(server)
        self.clients, self.aux = clients, aux


@declare(algorithm=ALGORITHM, owner=Text())
def check(algorithm, owner: str) -> None:
    """ParameterError for a FedAWE whose update is not linear in the gradients (clipped) or
    whose rates vary (Definition 1 uses one :math:`\\eta_l\\eta_g`)."""
    if algorithm.clip is not None:
        raise ParameterError(
            f"The 'algorithm' parameter of {owner} must be a FedAWE with clip=None (a clipped "
            f"update is not expressible in a PEP). Got clip={algorithm.clip!r} instead."
        )


def _sum(points: list):
    return sum(points[1:], points[0])


class _State(NamedTuple):
    """FedAWE after the rounds of a mask prefix (PEPit points; lists copied per prefix)."""

    x: tuple  # client models x_i^t
    tau: tuple  # last active rounds
    grads: tuple  # grad F_i(x_i^t), already evaluated
    server: tuple  # x^0..x^t
    clients: tuple  # client models of rounds 0..t
    aux: tuple  # auxiliary models of rounds 0..t-1


_PREFIXES: list = [None, {}]
"""The initial point of the PEP being built and the state after every mask prefix already
run from it: the masks of a distribution that share their first rounds share those rounds'
points (the Gram matrix grows with the number of distinct prefixes, not with masks times
rounds). Only the latest PEP is kept (its masks are run one after the other)."""


@declare(algorithm=ALGORITHM, fs=FUNCTIONS, x0=POINT, mask=Mask(shape=(None, "fs[0]"), min_size=1))
def run(algorithm, fs, x0, mask: np.ndarray) -> Trajectory:
    """Server models, client models and auxiliary models of FedAWE on the clients'
    functions ``fs`` from :math:`x_0` under ``mask [T, N]``."""
    n = len(fs)
    if _PREFIXES[0] is not x0:
        _PREFIXES[:] = [x0, {}]
    cache = _PREFIXES[1]
    key = (id(algorithm), tuple(id(f) for f in fs))
    state = cache.get((key, b""))
    if state is None:
        grads = tuple(f.gradient(x0) for f in fs)
        state = _State((x0,) * n, (-1,) * n, grads, (x0,), ((x0,) * n,), ())
        cache[(key, b"")] = state
    m = np.asarray(mask, bool)
    for t in range(m.shape[0]):
        prefix = (key, m[: t + 1].tobytes())
        if prefix not in cache:
            cache[prefix] = _round(algorithm, fs, state, m[t], t)
        state = cache[prefix]
    return Trajectory(list(state.server), [list(c) for c in state.clients], list(state.aux))


def _round(algorithm, fs, state: _State, row: np.ndarray, t: int) -> _State:
    """One round of Algorithm 1 (module docstring) on the points of ``state``."""
    x, tau, grads = list(state.x), list(state.tau), list(state.grads)
    lr, server_lr = float(algorithm.client_lr(t)), float(algorithm.server_rate(t))
    eta = float(algorithm.client_lr(0)) * float(algorithm.server_rate(0))
    s = algorithm.local_steps
    aux = tuple(x[i] - (eta * s * (t - tau[i] - 1)) * grads[i] for i in range(len(fs)))
    work = np.flatnonzero(algorithm.participants(torch.from_numpy(row[None]), t)[0].numpy())
    w = state.server[-1]
    if work.size:
        reports = []
        for i in work:
            y, g = x[i], grads[i]
            for step in range(s):
                if step:
                    g = fs[i].gradient(y)
                if algorithm.prox:
                    g = g + algorithm.prox * (y - x[i])
                y = y - lr * g
            reports.append(x[i] + (server_lr * (t - tau[i])) * (y - x[i]))
        w = (1 / work.size) * _sum(reports)
        for i in work:
            x[i], tau[i], grads[i] = w, t, fs[i].gradient(w)
    return _State(
        tuple(x), tuple(tau), tuple(grads), (*state.server, w), (*state.clients, tuple(x)),
        (*state.aux, aux),
    )  # fmt: skip


@declare(points=POINTS)
def average(points: list):
    """:math:`\\frac1N\\sum_ip_i` of PEPit points."""
    return (1 / len(points)) * _sum(points)


def _trajectory(args):
    """Two rounds of two clients on fresh points (the generated tests' valid trajectory)."""
    x = [POINT.example(args) for _ in range(4)]
    return Trajectory(x[:3], [x[:2], x[1:3], x[2:]], [x[:2], x[2:]])


@declare(
    criterion=Option(*STATEMENTS),
    traj=Exemplified(Instance(Trajectory), _trajectory),
    F=FUNCTION,
)
def statement_terms(criterion: str, traj: Trajectory, F) -> list:
    r"""The PEPit expression of FedAWE's statements at :math:`\sigma=0` on one trajectory
    (one term: the criterion is an average, linear in the Gram matrix):

    * ``fedawe_zbar``: :math:`\frac1T\sum_{t<T}\|\nabla F(\bar z^t)\|^2` (Theorem 1);
    * ``fedawe_xbar``: :math:`\frac1T\sum_{t<T}\|\nabla F(\bar x^t)\|^2` (Corollary 2);
    * ``fedawe_consensus_x``: :math:`\frac1T\sum_{t<T}\frac1m\sum_i\|x_i^t-\bar x^t\|^2`
      (Corollary 3);
    * ``fedawe_consensus_z``: the same for :math:`z` (Lemma 6's left side)."""
    T = len(traj.aux)
    if criterion == "fedawe_zbar":
        terms = [F.gradient(average(z)) ** 2 for z in traj.aux]
    elif criterion == "fedawe_xbar":
        terms = [F.gradient(average(x)) ** 2 for x in traj.clients[:T]]
    else:
        seq = traj.clients[:T] if criterion == "fedawe_consensus_x" else traj.aux
        terms = []
        for pts in seq:
            bar = average(pts)
            terms.append((1 / len(pts)) * _sum([(p - bar) ** 2 for p in pts]))
    return [(1 / T) * _sum(terms)]


@declare(
    criterion=Option(*STATEMENTS),
    algorithm=ALGORITHM,
    problem=PROBLEM,
    mask=Mask(shape=(None, "problem.num_clients"), min_size=1),
    x0=Array(shape=("problem.dim",)),
    finite_result=True,
)
def measure(criterion: str, algorithm, problem, mask: np.ndarray, x0: np.ndarray) -> float:
    """The same criterion as :func:`statement_terms` on a run of the simulator's FedAWE
    (``algorithm.init``/``step``, one replicate) on ``problem`` from ``x0 [d]`` under
    ``mask [T, N]``: the replay of a worst case measured by a FedAWE statement."""
    T, n = mask.shape
    state = algorithm.init(problem, torch.as_tensor(np.asarray(x0, float))[None].clone())
    xs, taus = [], []
    for t in range(T):
        xs.append(state.x[0].numpy().copy())  # [N, d] x_i^t
        taus.append(state.tau[0].numpy().copy())
        state = algorithm.step(
            problem, state, torch.from_numpy(np.asarray(mask[t : t + 1], bool)), t
        )
    x = np.stack(xs)  # [T, N, d]
    if criterion in ("fedawe_zbar", "fedawe_consensus_z"):
        clients = torch.arange(n).repeat(T)
        g = problem.grad(torch.as_tensor(x.reshape(-1, x.shape[-1])), clients).numpy()
        gap = np.arange(T)[:, None] - np.stack(taus)  # [T, N] t - tau_i(t)
        eta = float(algorithm.client_lr(0)) * float(algorithm.server_rate(0))
        x = x - eta * algorithm.local_steps * (gap - 1)[..., None] * g.reshape(x.shape)
    bar = x.mean(axis=1)  # [T, d]
    if criterion in ("fedawe_zbar", "fedawe_xbar"):
        full = np.einsum("n,tnd->td", problem.alpha, problem.client_grads(bar))
        return float(np.mean(np.sum(full**2, -1)))
    return float(np.mean(np.sum((x - bar[:, None]) ** 2, -1)))
