r"""CA-Fed (Rodio et al. 2023, Algorithm 1) as published, the authors' code as a named
variant, and the baselines as run in the official code.

Round :math:`t` of CA-Fed, vectorised over replicates (all per-client state is ``[R, N]``):

1. the active clients :math:`A_t` report their loss :math:`F_k^{(t)}` at :math:`w_t`. §IV-A:
   each client "sends back a noisy estimate :math:`F_k^{(t)}` of the current loss computed
   on a batch of samples" (``losses="batch"``; the batch size defaults to local training's,
   and the batch is drawn independently of the first local step's, which the paper reuses:
   the same law per round). ``losses="exact"`` reports the exact full-data
   :math:`F_k(w_t)` instead: a **deviation** from the paper for the "paper" variant (with
   losses that only fall, :math:`\hat F_k-\hat F_k^*=0` and every exclusion is a tie);
2. loss filter (15) :math:`\hat F\leftarrow(1-\beta\mathbb 1_{A_t})\odot\hat F+
   \beta\mathbb 1_{A_t}\odot F^{(t)}` (in a replicate's first round with an active client,
   observed clients take their loss and the others the mean observed loss, as in the code),
   :math:`\hat F^*=\min_{s\le t}\hat F^{(s)}` (§IV-B: ":math:`\hat F_k^*=
   \min_{s\in[0,t]}\hat F_k^{(s)}`"), (17)
   :math:`\hat\Gamma'=\max_k(\hat F_k-\hat F_k^*)`; availability estimates
   :math:`\hat\pi,\hat\lambda` from an oracle (true values, as in the paper's experiments)
   or Beta-prior posterior means (:mod:`fedtheory.availability.estimators`);
3. :math:`q=\alpha/\hat\pi`, then ``get`` (:func:`~fedtheory.optim.greedy_exclusion`) in
   descending :math:`|\hat\lambda|` (§III: :math:`\lambda_2` is "the second largest
   eigenvalue of P in absolute value"; Guideline B excludes "the clients with largest
   :math:`\lambda(P_k)`") and in ascending :math:`\hat\pi` on the proxy (18) with §VI-A's
   multiplier :math:`\bar\kappa^2`:
   :math:`\hat\epsilon(q)=\langle\hat F-\hat F^*,\hat\pi\tilde\odot q\rangle+
   \bar\kappa^2d_{TV}^2(\alpha,\hat\pi\tilde\odot q)\hat\Gamma'`;
4. active clients with :math:`q_k>0` run :math:`E` local steps and the server applies (3),
   :math:`w_{t+1}=\mathrm{Proj}_W(w_t+\eta_s\sum_{k\in A_t}q_k\Delta_t^k)` with the
   unnormalised :math:`q` (as the code; no projection unless ``radius`` is set).

``variant="code"`` runs the authors' public code (``clients_sampler.py``,
``MarkovianClientsSampler``; ``activity_estimator.py``) where it differs from the text:

* :math:`\hat F_k^*` is the client's true local minimum :math:`F_k^*` (code:
  ``get_local_optimums``), not the running minimum;
* the filter is written with the code's ``smoothness_param`` :math:`s` weighting the *old*
  estimate, :math:`\hat F\leftarrow s\hat F+(1-s)F^{(t)}` on :math:`A_t`, i.e.
  :math:`\beta=1-s` (its run scripts: :math:`s=0.001` for the multi-seed runs, 0.2 in
  ``full_experiment.sh``, 0 for tuning);
* with an estimator (:class:`~fedtheory.availability.estimators.CodePrior`, the code's
  ``--estimator_type bayesian``; its default is the oracle) :math:`\hat\pi,\hat\lambda` are
  :func:`~fedtheory.availability.estimators.cafed_code_estimate`: divided by :math:`t+H`,
  one transition counted from an all-off initial state, each client's *true*
  :math:`\pi,a,b` as prior pseudo-counts;
* the reported loss is exact (``losses`` defaults to ``"exact"``): the code evaluates every
  client's full loss, on the client's held-out split and without the ridge term, where
  fedtheory uses the training objective :math:`F_k` (and its :math:`F_k^*` is the exact
  minimum of :math:`F_k`, where the code fits scikit-learn's ``LogisticRegression`` with
  its default :math:`C=1` and reports its unregularised training log-loss).

The rest is the same in both variants: ``get`` over all clients (the code's
``_truncate_clients`` stops when excluding would leave no weight, which is ``get`` skipping
that exclusion), ties in the orders broken by client index (Python's stable ``sorted``),
(18) with :math:`\bar\kappa^2` (code ``bias_const``). Differences left out: the code stores losses,
:math:`\pi`, :math:`\lambda` in float32, trains only clients with :math:`q_k>10^{-10}`, and
raises in a first round without any active client (here the filter starts at the first
round with one). Left out as well, because they concern every algorithm of the code, not
CA-Fed: its optimiser is SGD with momentum 0.9 and weight decay :math:`10^{-2}` at the
clients and at the server (whose momentum carries across rounds), and a local "step" is an
epoch over the client's shuffled loader (``local_steps`` epochs; with 50 samples and batch
32, mini-batches of 32 and 18), where fedtheory runs (2)-(3) as written.

Choices the paper leaves open, named options of :class:`CaFed` (defaults: line 22 as
printed and the code's initialisation of :math:`\hat F`):

* ``initial_minimum``: Algorithm 1 line 1 initialises :math:`\hat F^{(0)}` and
  :math:`\hat F^*` separately ("Initialize :math:`\hat F^{(0)}`, :math:`\hat F^*`, ...")
  and §IV-B takes the minimum over :math:`s\in[0,t]` without saying what enters it at
  :math:`s=0`. ``"first"`` (the code's initialisation of :math:`\hat F`): the minimum
  starts at the first round's reports, so every gap :math:`\hat F_k-\hat F_k^*` is 0 in
  that round and stays 0 while the filtered losses fall; ``"zero"``: :math:`\hat F^*`
  starts at 0, a lower bound of every (non-negative) loss, so :math:`\hat F_k^*=0` and the
  gap is :math:`\hat F_k` itself. :math:`\hat F^{(0)}` is the first reports in both. The
  code's :math:`\hat F^*` are the true minima, so this option is for variant "paper";
* ``strict``: line 22 tests :math:`\hat\epsilon-\hat\epsilon^+\ge\tau` while §IV-A says
  ":math:`\hat\epsilon^{(t)}` appears to be decreasing by more than a threshold
  :math:`\tau\ge0`" (``strict=True``: :math:`>\tau`); they differ at :math:`\tau=0` on exact
  ties, e.g. when every gap is 0 and the proxy (18) is 0 for every :math:`q`.

Baselines (the official ``clients_sampler.py``; with oracle :math:`\pi`):
:func:`~fedtheory.sim.aggregation.unbiased_weights` (:math:`q_k=\alpha_k/\pi_k`),
:class:`AdaFedWeights` (the same, normalised over :math:`A_t`) and :class:`F3astWeights`
(top-:math:`K` active clients by :math:`\alpha_k^2/r_k^2`, :math:`q_k=\alpha_k/r_k`,
:math:`r_k=(1-\beta_r)\pi_k+\beta_r\mathbb 1_{k\in A_t}`). Each is a stateless
``mask -> q`` rule for :class:`~fedtheory.sim.FedAvg`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import torch

from fedtheory.availability import estimators
from fedtheory.constraints import (
    MAX_SIZE,
    Array,
    Bool,
    Instance,
    Integer,
    Mask,
    Option,
    Probabilities,
    Real,
    Tensor,
    declare,
)
from fedtheory.device import PerDevice
from fedtheory.errors import ParameterError
from fedtheory.optim.greedy import greedy_exclusion
from fedtheory.problems.base import FederatedProblem
from fedtheory.sim import _gather as gather
from fedtheory.sim.aggregation import ALPHA_PI, check_clients, check_mask
from fedtheory.sim.algorithm import INIT, LOCAL_TRAINING, LocalTraining, round_arguments
from fedtheory.sim.f3ast import ROUND_WEIGHTS, f3ast_weights
from fedtheory.sim.optimizer import TrainingState
from fedtheory.sim.reference import local_step, reference_loop, server_step

__all__ = [
    "LOSSES",
    "VARIANTS",
    "AdaFedWeights",
    "CaFed",
    "CaFedState",
    "INITIAL_MINIMA",
    "F3astWeights",
    "adafed_weights",
    "cafed_exclusion_orders",
    "cafed_proxy_error",
    "f3ast_weights",
]

INITIAL_MINIMA = ("first", "zero")
r"""Initial :math:`\hat F^*`: the first reports (running minimum from there) or 0."""
VARIANTS = ("paper", "code")
"""``CaFed`` variants: Algorithm 1 and §IV as published, or the authors' public code."""
LOSSES = ("batch", "exact")
"""Loss reports: a mini-batch estimate (§IV-A) or the exact full-data loss."""
PAPER_BETA = 0.2
"""§V: "For CA-Fed, we used tau = 0, beta = 0.2"."""
CODE_SMOOTHNESS = 1e-3
"""``smoothness_param`` of the code's multi-seed runs (``paper_experiments/*/run.sh``)."""


@declare(
    q=Tensor(shape=(None, None), low=0.0),
    pi=Tensor(shape=("q[0]", "q[1]"), low=0.0, high=1.0),
    loss_gap=Tensor(shape=("q[0]", "q[1]")),
    alpha=Tensor(shape=("q[1]",), low=0.0, high=1.0),
    gamma=Tensor(shape=("q[0]",)),
    trade_off=Real(0.0),
    finite_result=True,
)
def cafed_proxy_error(
    q: torch.Tensor,
    pi: torch.Tensor,
    loss_gap: torch.Tensor,
    alpha: torch.Tensor,
    gamma: torch.Tensor,
    trade_off: float = 1.0,
) -> torch.Tensor:
    r"""CA-Fed's proxy (18) with §VI-A's :math:`\bar\kappa^2`:
    :math:`\langle\hat F-\hat F^*,p\rangle+\bar\kappa^2d_{TV}^2(\alpha,p)\hat\Gamma'`,
    :math:`p=\pi\tilde\odot q`.

    ``q, pi, loss_gap [R, N]``, ``alpha [N]``, ``gamma [R]`` -> ``[R]`` (refused when
    :math:`\pi^\top q=0`: not finite). A heuristic estimate of Theorem 3's bound, not a
    bound itself."""
    return proxy_values(q, pi, loss_gap, alpha, gamma, trade_off)


def proxy_values(q, pi, loss_gap, alpha, gamma, trade_off: float) -> torch.Tensor:
    """:func:`cafed_proxy_error` inside CA-Fed's exclusion loop (arguments built by the loop,
    unchecked; broadcast, e.g. candidates ``q [R, K, N]`` with ``pi [R, 1, N]``): a
    candidate with :math:`\\pi^\top q=0` gets NaN, which the loop never keeps."""
    p = pi * q / (pi * q).sum(-1, keepdim=True)
    tv = 0.5 * (alpha - p).abs().sum(-1)
    return (loss_gap * p).sum(-1) + trade_off * tv**2 * gamma


@declare(pi=Tensor(shape=(None, None)), lam=Tensor(shape=("pi[0]", "pi[1]")))
def cafed_exclusion_orders(pi: torch.Tensor, lam: torch.Tensor) -> list[torch.Tensor]:
    r"""The two orders of Algorithm 1's ``get`` (lines 6-7): descending
    :math:`|\hat\lambda_k|` (Guideline B), then ascending :math:`\hat\pi_k` (Guideline A);
    ties keep client order. ``pi, lam [R, N]`` -> two index tensors ``[R, N]``."""
    return [
        torch.argsort(lam.abs(), dim=-1, descending=True, stable=True),
        torch.argsort(pi, dim=-1, stable=True),
    ]


class CaFedState(NamedTuple):
    w: torch.Tensor  # [R, d] server model
    loss_hat: torch.Tensor  # [R, N] filtered losses F_hat_k (15)
    loss_min: torch.Tensor  # [R, N] F_hat_k^*: running minimum (paper), F_k^* (code)
    started: torch.Tensor  # [R] bool: a client has been observed
    counts: estimators.AvailabilityCounts | None  # availability counts [R, N] (None: oracle)
    weights: torch.Tensor | None = None  # [R, N] q applied in the last round
    participants: torch.Tensor | None = None  # [R, N] bool: active clients with q_k > 0
    optimizer: TrainingState | None = None  # momentum buffers (LocalTraining.training)


@declare(**LOCAL_TRAINING)
@dataclass(frozen=True, kw_only=True)
class CaFed(LocalTraining):
    r"""CA-Fed, Algorithm 1 of Rodio et al. 2023, or the authors' code (module docstring).

    Parameters
    ----------
    alpha : array [N]
        Target weights :math:`\alpha`.
    pi, lam : array [N], optional
        Oracle availability and correlation :math:`\pi_k,\lambda_k` (the paper's setting);
        with a :class:`~fedtheory.availability.estimators.CodePrior` they are the code's
        prior instead.
    prior : BetaPrior or CodePrior, optional
        Estimate :math:`\hat\pi,\hat\lambda` online: Beta-prior posterior means (variant
        "paper"; give no ``pi``/``lam``) or the code's estimator (variant "code").
    variant : {"paper", "code"}
        Algorithm 1 and §IV as published, or the authors' code.
    beta : float, optional
        Variant "paper": filter parameter :math:`\beta\in(0,1]` of (15) (default 0.2, §V).
    smoothness : float, optional
        Variant "code": the code's ``smoothness_param`` :math:`s\in[0,1]`, the weight of the
        old estimate (:math:`\beta=1-s`; default 0.001, the multi-seed runs).
    losses : {"batch", "exact"}, optional
        The reported :math:`F_k^{(t)}`: a mini-batch estimate (§IV-A; the default of
        "paper") or the exact full-data loss (the default of "code"; for "paper" a
        deviation from the text).
    loss_batch : int, optional
        Batch size of the ``"batch"`` estimate (default: the problem's local-training
        batch, ``problem.batch_size``).
    tau : float
        Exclusion threshold :math:`\tau\ge0` of ``get`` (paper 0).
    strict : bool
        ``get`` keeps an exclusion when the proxy drops by more than :math:`\tau` (§IV-A)
        instead of by at least :math:`\tau` (line 22, the default).
    initial_minimum : {"first", "zero"}
        Variant "paper": :math:`\hat F^*` starts at the first round's reports (default) or
        at 0 (module docstring); the code's :math:`\hat F^*` are the true minima.
    trade_off : float
        :math:`\bar\kappa^2\ge0` of §VI-A (code ``bias_const``, default 1).
    local_steps, lr, server_lr, radius, ...
        As in :class:`~fedtheory.sim.algorithm.LocalTraining`.

    Examples
    --------
    >>> from fedtheory.availability import TwoStateMarkov
    >>> from fedtheory.data import cafed_clustered
    >>> from fedtheory.problems import LogisticRegressionProblem
    >>> from fedtheory.sim import simulate
    >>> problem = LogisticRegressionProblem(cafed_clustered(6, 3, 40, seed=0), batch_size=8)
    >>> process = TwoStateMarkov([0.5] * 6, [0.9, 0.9, 0.0, 0.0, -0.5, -0.5])
    >>> paper = CaFed(alpha=problem.alpha, pi=process.pi, lam=process.lam, lr=0.1)
    >>> code = CaFed(alpha=problem.alpha, pi=process.pi, lam=process.lam, lr=0.1,
    ...              variant="code")
    >>> rec = simulate(problem, process, paper, rounds=5, replicates=2, seed=0)
    >>> rec.participants.shape
    (2, 5)
    """

    alpha: np.ndarray
    pi: np.ndarray | None = None
    lam: np.ndarray | None = None
    prior: estimators.BetaPrior | estimators.CodePrior | None = None
    variant: str = "paper"
    beta: float | None = None
    smoothness: float | None = None
    losses: str | None = None
    loss_batch: int | None = None
    tau: float = 0.0
    strict: bool = False
    initial_minimum: str = "first"
    trade_off: float = 1.0
    name: str = field(default="ca-fed")

    def __post_init__(self) -> None:
        super().__post_init__()
        owner = "CaFed"
        alpha = Probabilities().check(self.alpha, "alpha", owner, {})
        object.__setattr__(self, "alpha", alpha)
        variant = Option(*VARIANTS).check(self.variant, "variant", owner, {})
        code = variant == "code"
        code_prior = isinstance(self.prior, estimators.CodePrior)
        beta_prior = isinstance(self.prior, estimators.BetaPrior)
        truth = self.pi is not None or self.lam is not None
        if self.prior is not None and not (beta_prior or code_prior):
            raise ParameterError(
                f"The 'prior' parameter of {owner} must be None, a BetaPrior or a CodePrior. "
                f"Got {self.prior!r} instead."
            )
        if code_prior != code and self.prior is not None:
            raise ParameterError(
                f"The 'prior' parameter of {owner} must be a "
                f"{'CodePrior' if code else 'BetaPrior'} with variant={variant!r} (each "
                f"variant has its own estimator). Got {type(self.prior).__name__} instead."
            )
        need_truth = self.prior is None or code_prior
        if need_truth != truth or (truth and (self.pi is None or self.lam is None)):
            raise ParameterError(
                f"The 'prior' parameter of {owner} must be a BetaPrior exactly when the oracle "
                "'pi' and 'lam' are not given (a CodePrior takes them as its prior). Got "
                f"pi={'set' if self.pi is not None else None}, "
                f"lam={'set' if self.lam is not None else None}, prior={self.prior} instead."
            )
        if truth:
            n = alpha.shape
            pi = Array(shape=n, low=0.0, high=1.0, low_open=True, min_size=0).check(
                self.pi, "pi", owner, {}
            )
            lam = Array(shape=n, low=-1.0, high=1.0, min_size=0).check(self.lam, "lam", owner, {})
            object.__setattr__(self, "pi", pi)
            object.__setattr__(self, "lam", lam)
        if code:
            if self.beta is not None:
                raise ParameterError(
                    f"The 'beta' parameter of {owner} must be None with variant='code' (the "
                    f"code's filter is set by 'smoothness', s = 1 - beta). Got {self.beta!r} "
                    "instead."
                )
            s = CODE_SMOOTHNESS if self.smoothness is None else self.smoothness
            s = Real(low=0.0, high=1.0).check(s, "smoothness", owner, {})
            object.__setattr__(self, "smoothness", s)
        else:
            if self.smoothness is not None:
                raise ParameterError(
                    f"The 'smoothness' parameter of {owner} must be None with variant='paper' "
                    f"(the paper's filter is set by 'beta'). Got {self.smoothness!r} instead."
                )
            b = PAPER_BETA if self.beta is None else self.beta
            b = Real(low=0.0, high=1.0, low_open=True).check(b, "beta", owner, {})
            object.__setattr__(self, "beta", b)
        losses = self.losses if self.losses is not None else ("exact" if code else "batch")
        object.__setattr__(self, "losses", Option(*LOSSES).check(losses, "losses", owner, {}))
        if self.loss_batch is not None:
            Integer(low=1).check(self.loss_batch, "loss_batch", owner, {})
        Real(low=0.0).check(self.tau, "tau", owner, {})
        Bool().check(self.strict, "strict", owner, {})
        Option(*INITIAL_MINIMA).check(self.initial_minimum, "initial_minimum", owner, {})
        if code and self.initial_minimum != "first":
            raise ParameterError(
                f"The 'initial_minimum' parameter of {owner} must be 'first' with "
                "variant='code' (the code's F_hat^* are the true local minima). Got "
                f"{self.initial_minimum!r} instead."
            )
        Real(low=0.0).check(self.trade_off, "trade_off", owner, {})

    @property
    def filter_weight(self) -> float:
        r"""The weight :math:`\beta` of a new loss in (15): ``beta``, or :math:`1-s`."""
        return self.beta if self.variant == "paper" else 1.0 - self.smoothness

    @declare(**INIT)
    def init(self, problem: FederatedProblem, w0: torch.Tensor) -> CaFedState:
        r, n = w0.shape[0], problem.num_clients
        if n != self.alpha.size:
            raise ParameterError(
                f"The 'problem' parameter of CaFed.init must have N={self.alpha.size} clients "
                f"like alpha. Got {n} instead."
            )
        if self.losses == "batch" and not hasattr(problem, "batch_losses"):
            raise ParameterError(
                "The 'losses' parameter of CaFed must be 'exact' for a problem without "
                f"samples (no batch_losses). Got 'batch' with {type(problem).__name__} instead."
            )
        if self.variant == "code" and not hasattr(problem, "client_optima"):
            raise ParameterError(
                "The 'variant' parameter of CaFed must be 'paper' for a problem without local "
                f"optima (no client_optima). Got 'code' with {type(problem).__name__} instead."
            )
        zeros = torch.zeros(r, n, dtype=torch.float64, device=w0.device)
        if self.variant == "code":
            optima = torch.from_numpy(np.asarray(problem.client_optima()[1], np.float64))
            loss_min = optima.to(w0.device).expand(r, n).clone()
        else:
            loss_min = zeros
        counts = None if self.prior is None else estimators.init((r, n))
        started = torch.zeros(r, dtype=torch.bool, device=w0.device)
        opt = self.training_init(problem, w0)
        return CaFedState(w0, zeros, loss_min, started, counts, optimizer=opt)

    @declare(
        "device",
        counts=Instance(estimators.AvailabilityCounts, none=True),
        shape=Array(shape=(2,), integer=True, low=1, high=MAX_SIZE),
    )
    def estimates(self, counts, shape, device=None) -> tuple[torch.Tensor, torch.Tensor]:
        r""":math:`(\hat\pi,\hat\lambda)`, each ``[R, N]`` (on ``device``)."""
        if counts is None:
            pi, lam = np.tile(self.pi, (shape[0], 1)), np.tile(self.lam, (shape[0], 1))
        elif isinstance(self.prior, estimators.CodePrior):
            est = estimators.cafed_code_estimate(
                counts, self.pi, self.lam, horizon=self.prior.horizon
            )
            pi, lam = est.pi, est.lam
        else:
            est = estimators.estimate(counts, self.prior)
            pi, lam = est.pi, est.lam
        return tuple(torch.as_tensor(x, dtype=torch.float64, device=device) for x in (pi, lam))

    @declare(
        "generator",
        problem=Instance(FederatedProblem),
        w=Tensor(dtype="floating", shape=(None, "problem.dim")),
        mask=Mask(tensor=True, shape=("w[0]", "problem.num_clients")),
        finite_result=True,
    )
    def reported_losses(
        self,
        problem: FederatedProblem,
        w: torch.Tensor,
        mask: torch.Tensor,
        generator: torch.Generator | None,
    ) -> torch.Tensor:
        r"""The losses :math:`F_k^{(t)}` ``[R, N]`` the active clients of ``mask [R, N]``
        report at ``w [R, d]`` (entries of inactive clients are 0 and never read)."""
        if self.losses == "exact":
            return torch.from_numpy(problem.client_losses(w.cpu().numpy())).to(w.device)
        pairs = gather.pairs(mask)  # a static round: a fixed capacity, padding rows zeroed
        out = torch.zeros(mask.shape, dtype=torch.float64, device=w.device)
        if pairs.valid is None and pairs.rep.numel() == 0:
            return out
        losses = problem.batch_losses(
            w[pairs.rep], pairs.cli, generator, batch_size=self.loss_batch
        )
        return out.index_put(
            (pairs.rep, pairs.cli), gather.where_valid(losses.to(torch.float64), pairs)
        )

    @declare(
        state=Instance(CaFedState),
        losses=Tensor(shape=("state.w[0]", "self.alpha[0]")),
        mask=Mask(tensor=True, shape=("losses[0]", "losses[1]")),
    )
    def filter_losses(
        self, state: CaFedState, losses: torch.Tensor, mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(15) and :math:`\\hat F^*`: ``(loss_hat, loss_min, started)``, ``[R, N]``/``[R]``."""
        m = mask.to(torch.float64)
        beta = self.filter_weight
        fresh = ~state.started & mask.any(-1)  # [R]
        mean_seen = (losses * m).sum(-1, keepdim=True) / m.sum(-1, keepdim=True).clamp_min(1.0)
        first = torch.where(mask, losses, mean_seen)
        filtered = (1.0 - beta * m) * state.loss_hat + beta * m * losses
        started = state.started | fresh
        loss_hat = torch.where(
            fresh[:, None], first, torch.where(state.started[:, None], filtered, state.loss_hat)
        )
        if self.variant == "code":  # the true local minima, fixed at init
            return loss_hat, state.loss_min, started
        if self.initial_minimum == "zero":  # F_hat^* = 0 <= every loss
            return loss_hat, state.loss_min, started
        loss_min = torch.where(
            fresh[:, None],
            first,
            torch.where(state.started[:, None], torch.minimum(state.loss_min, loss_hat), loss_hat),
        )
        return loss_hat, loss_min, started

    @declare(
        pi=Tensor(shape=(None, "self.alpha[0]"), low=0.0, high=1.0, low_open=True),
        lam=Tensor(shape=("pi[0]", "pi[1]"), low=-1.0, high=1.0),
        loss_gap=Tensor(shape=("pi[0]", "pi[1]"), low=0.0),
        finite_result=True,
    )
    def aggregation_weights(
        self, pi: torch.Tensor, lam: torch.Tensor, loss_gap: torch.Tensor
    ) -> torch.Tensor:
        """``get`` twice from :math:`q=\\alpha/\\hat\\pi`: ``[R, N]`` inputs -> ``q [R, N]``."""
        alpha = torch.from_numpy(self.alpha).to(pi.device)
        gamma = loss_gap.max(-1).values  # (17)
        gap = loss_gap[:, None]

        def proxy(q: torch.Tensor) -> torch.Tensor:  # candidates [R, K, N] -> [R, K]
            return proxy_values(q, pi[:, None], gap, alpha, gamma[:, None], self.trade_off)

        orders = cafed_exclusion_orders(pi, lam)
        return greedy_exclusion(proxy, alpha / pi, orders, tau=self.tau, strict=self.strict)

    @declare(**round_arguments(CaFedState))
    def step(
        self,
        problem: FederatedProblem,
        state: CaFedState,
        mask: torch.Tensor,
        t: int,
        generator: torch.Generator | None = None,
    ) -> CaFedState:
        """One round of Algorithm 1: ``state.w [R, d]``, ``mask [R, N]`` -> next state."""
        w = state.w
        mask = self.participants(mask, t)
        losses = self.reported_losses(problem, w, mask, generator)  # [R, N]
        loss_hat, loss_min, started = self.filter_losses(state, losses, mask)
        seen = mask.cpu().numpy()
        counts = None if state.counts is None else estimators.update(state.counts, seen)
        pi, lam = self.estimates(counts, tuple(mask.shape), w.device)
        q = self.aggregation_weights(pi, lam, loss_hat - loss_min)
        working = mask & (q > 0)
        w_next, opt = self.trained_round(problem, w, q, working, t, generator, state.optimizer)
        applied = torch.where(working, q, torch.zeros_like(q))
        return CaFedState(w_next, loss_hat, loss_min, started, counts, applied, working, opt)


@declare(**ROUND_WEIGHTS, finite_result=True)
def adafed_weights(mask: torch.Tensor, alpha: torch.Tensor, pi: torch.Tensor) -> torch.Tensor:
    r"""AdaFed as in CA-Fed's code: :math:`q_k=\frac{\alpha_k/\pi_k}{\sum_{j\in A_t}\alpha_j/\pi_j}`
    for :math:`k\in A_t` (0 otherwise; all zero if :math:`A_t=\emptyset`). ``mask [R, N]``."""
    u = mask.to(torch.float64) * (alpha / pi)
    return u / u.sum(-1, keepdim=True).clamp_min(torch.finfo(torch.float64).tiny)


class AdaFedWeights:
    """AdaFed's weights (CA-Fed code's ``full_participation`` branch) with oracle ``pi``."""

    name = "adafed"

    @declare(**ALPHA_PI)
    def __init__(self, alpha, pi) -> None:
        self.alpha, self.pi = torch.from_numpy(alpha), torch.from_numpy(pi)
        self._constants = PerDevice((self.alpha, self.pi))

    def __call__(self, mask: torch.Tensor) -> torch.Tensor:
        check_clients(self.alpha, check_mask(mask, "AdaFedWeights"), "alpha", "AdaFedWeights")
        return adafed_weights(mask, *self._constants.on(mask.device))

    def __repr__(self) -> str:
        return f"AdaFedWeights(N={self.alpha.numel()})"


class F3astWeights:
    """F3AST's weights as in CA-Fed's code, with oracle ``pi`` (``clients`` = code's
    ``fast_n_clients_per_round``, 12; ``beta_r`` = ``smoothness_param``, 0.001)."""

    name = "f3ast"

    @declare(**ALPHA_PI, clients=Integer(1), beta_r=Real(0.0, 1.0))
    def __init__(self, alpha, pi, *, clients: int = 12, beta_r: float = 1e-3) -> None:
        self.alpha, self.pi = torch.from_numpy(alpha), torch.from_numpy(pi)
        self.clients, self.beta_r = clients, beta_r
        self._constants = PerDevice((self.alpha, self.pi))

    def __call__(self, mask: torch.Tensor) -> torch.Tensor:
        check_clients(self.alpha, check_mask(mask, "F3astWeights"), "alpha", "F3astWeights")
        alpha, pi = self._constants.on(mask.device)
        return f3ast_weights(mask, alpha, pi, clients=self.clients, beta_r=self.beta_r)

    def __repr__(self) -> str:
        return f"F3astWeights(N={self.alpha.numel()}, clients={self.clients})"


# --- the plain loop (one replicate, one client at a time) --------------------
def _cafed_proxy(q, pi_hat, gap, alpha, bias_coef):
    """CA-Fed (18): <F_hat - F_hat^*, pi ~. q> + kappa_bar^2 Gamma_hat' d_TV^2(alpha, pi ~. q)."""
    n = len(q)
    mass = sum(pi_hat[k] * q[k] for k in range(n))
    if mass == 0:
        return math.nan
    p_eff = [pi_hat[k] * q[k] / mass for k in range(n)]
    tv = 0.5 * sum(abs(alpha[k] - p_eff[k]) for k in range(n))
    return sum(gap[k] * p_eff[k] for k in range(n)) + bias_coef * tv**2


def _cafed_estimates(alg: CaFed, history, t):
    """(pi_hat, lam_hat) per client after the availability rows ``history`` (rounds 0..t)."""
    n = len(alg.alpha)
    if alg.prior is None:
        return list(alg.pi), list(alg.lam)
    pi_hat, lam_hat = [0.0] * n, [0.0] * n
    for k in range(n):
        seq = [bool(row[k]) for row in history]
        on = sum(seq)
        pairs = list(zip(seq[:-1], seq[1:], strict=True))
        n11 = sum(a and b for a, b in pairs)
        n10 = sum(a and not b for a, b in pairs)
        n00 = sum(not a and not b for a, b in pairs)
        n01 = sum(not a and b for a, b in pairs)
        if alg.variant == "code":  # the code's BayesianActivityEstimator
            h, p, lam = alg.prior.horizon, alg.pi[k], alg.lam[k]
            n00 += not seq[0]  # its initial active set is empty
            pi_hat[k] = (on + p * h) / (t + 1 + h)
            a = (n11 + (p + lam - lam * p) * h) / (t + 1 + h)
            b = (n00 + (1 - p + lam * p) * h) / (t + 1 + h)
        else:
            p = alg.prior
            pi_hat[k] = (on + p.on) / (t + 1 + p.on + p.off)
            a = (n11 + p.stay_on) / (n11 + n10 + p.stay_on + p.leave_on)
            b = (n00 + p.stay_off) / (n00 + n01 + p.stay_off + p.leave_off)
        lam_hat[k] = a + b - 1
    return pi_hat, lam_hat


@reference_loop(CaFed)
def _reference(problem, alg: CaFed, mask, w, gen):
    """CA-Fed, Algorithm 1 of Rodio et al. 2023 (or the authors' code, ``alg.variant``),
    line by line for one replicate."""
    n = mask.shape[1]
    alpha = alg.alpha
    code = alg.variant == "code"
    running_min = not code and alg.initial_minimum == "first"  # else F_hat^* fixed (0 or F^*)
    beta = alg.beta if not code else 1 - alg.smoothness
    loss_hat, loss_min, started = np.zeros(n), np.zeros(n), False
    if code:
        loss_min = np.array(problem.client_optima()[1], float)
    out = [w]
    for t, m in enumerate(mask):
        active = [k for k in range(n) if m[k]]
        if alg.losses == "exact":
            losses = problem.client_losses(w)
        else:  # one mini-batch per active client (section IV-A)
            losses = np.zeros(n)
            for k in active:
                point, client = torch.from_numpy(w)[None], torch.tensor([k])
                losses[k] = float(
                    problem.batch_losses(point, client, gen(t), batch_size=alg.loss_batch)[0]
                )
        if not started and active:  # first observation: unseen clients get the mean loss
            mean = sum(losses[k] for k in active) / len(active)
            for k in range(n):
                loss_hat[k] = losses[k] if m[k] else mean
                if running_min:
                    loss_min[k] = loss_hat[k]
            started = True
        elif started:
            for k in active:  # (15); the code's s F_hat + (1 - s) F is beta = 1 - s
                loss_hat[k] = (1 - beta) * loss_hat[k] + beta * losses[k]
            if running_min:
                for k in range(n):
                    loss_min[k] = min(loss_min[k], loss_hat[k])
        pi_hat, lam_hat = _cafed_estimates(alg, mask[: t + 1], t)
        gap = [loss_hat[k] - loss_min[k] for k in range(n)]
        gamma = max(gap)  # (17)

        q = [alpha[k] / pi_hat[k] for k in range(n)]
        by_lambda = sorted(range(n), key=lambda k: abs(lam_hat[k]), reverse=True)
        by_pi = sorted(range(n), key=lambda k: pi_hat[k])
        for order in (by_lambda, by_pi):  # get(), twice
            eps = _cafed_proxy(q, pi_hat, gap, alpha, alg.trade_off * gamma)
            for k in order:
                trial = list(q)
                trial[k] = 0.0
                eps_trial = _cafed_proxy(trial, pi_hat, gap, alpha, alg.trade_off * gamma)
                drop = eps - eps_trial
                if math.isfinite(eps_trial) and (drop > alg.tau if alg.strict else drop >= alg.tau):
                    q, eps = trial, eps_trial
        v = np.zeros_like(w)
        for k in active:
            if q[k] > 0:
                v += q[k] * local_step(problem, alg, w, k, t, gen(t))
        w = server_step(alg, w, v, t)
        out.append(w)
    return out


EXPORTS = ("AdaFedWeights", "CaFed", "CaFedState", "F3astWeights")
"""Re-exported by :mod:`fedtheory.sim` (the paper's record, :mod:`fedtheory.papers`)."""
