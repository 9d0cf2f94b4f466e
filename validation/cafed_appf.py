r"""CA-Fed's synthetic experiment (App. F) next to the paper's Table I, judged as an
empirical finding over independent data draws, for Algorithm 1 under each reading of the
choices the paper leaves open and for the authors' code.

Set-up (App. F and the code's ``full_experiment.sh``): :math:`N=24` clients with clustered
binary data (two groups, the second with label-flip 0.2, :math:`d=10`, 50 train / 150 test
samples per client), ridge-regularised logistic regression (:math:`10^{-2}`), CA-Fed's
availability population (:math:`g=0.4`, :math:`\nu=0.9`, :math:`\varepsilon=10^{-2}`, the
paper variant), :math:`E=2` local steps, batch 32, :math:`T=150` rounds; algorithms
Unbiased, F3AST, AdaFed, FedAU and CA-Fed, all with oracle :math:`\pi,\lambda` (§V-A: "We
assume all algorithms can access an oracle providing the true availability parameters").

**Data draws.** A *data draw* is one data set and one availability population
(``cafed_clustered`` and ``cafed_population`` at the draw's seed; the population's weakly
correlated :math:`\lambda\sim\mathcal N(0,\varepsilon^2)` are random). Every algorithm runs
on ``data_seeds`` draws (at least :data:`~fedtheory.verdict.MIN_DATA_SEEDS`), each with
``replicates`` run seeds (availability paths, batches); Table I is "the average over three
runs" of one data set. A finding is judged by :func:`~fedtheory.verdict.compare_finding`:
the interval over the draws of the per-draw difference to F3AST decides (*reproduced*,
*not reproduced*, or *reversed* -- the opposite ordering significant across the draws and
larger than the smallest difference detected with 80% power); never *violated*.

**Tuning.** §V-A: "We tuned the learning rates :math:`\eta,\eta_s` via grid search, on the
grid :math:`\eta:\{10^{-3},10^{-2.5},10^{-2},10^{-1.5},10^{-1}\}`,
:math:`\eta_s:\{10^{-2},10^{-1.5},10^{-1},10^{-0.5},10^0\}`". Every algorithm (each CA-Fed
configuration on its own) is tuned on its own :math:`(\eta,\eta_s)` by time-average test
accuracy on a separate data draw (``tuning_seed``, never one of the judged draws); the
quick size uses every other point of the paper's grid (:math:`\eta\in\{10^{-3},10^{-2},
10^{-1}\}`, :math:`\eta_s\in\{10^{-2},10^{-1},1\}`), the full size the whole grid, the
tiny size (tests) no tuning (:math:`\eta=10^{-1}`, :math:`\eta_s=1`).

**CA-Fed configurations.** §V-A: "For CA-Fed, we used :math:`\tau=0`, :math:`\beta=0.2`".
Two choices are left open (named options of :class:`~fedtheory.sim.cafed.CaFed`):

* ``initial_minimum``: Algorithm 1 line 1 says only "Initialize :math:`\hat F^{(0)}`,
  :math:`\hat F^*`", §IV-B ":math:`\hat F_k^*=\min_{s\in[0,t]}\hat F_k^{(s)}`". "first": the
  running minimum starts at the first reports (every gap 0 in that round, ties follow);
  "zero": :math:`\hat F^*` starts at 0;
* ``strict``: line 22 reads ":math:`\hat\epsilon-\hat\epsilon^+\ge\tau`" (``>=``), §IV-A
  "appears to be decreasing by more than a threshold :math:`\tau\ge0`" (``>``).

"paper" runs Algorithm 1 with each of the four combinations (loss reports on a batch of 32,
§IV-A: "a noisy estimate :math:`F_k^{(t)}` of the current loss computed on a batch";
:math:`\beta=0.2`); "code" runs the authors' code (exact losses, the true local minima
:math:`F_k^*` of ``get_local_optimums``, which §V does not disclose, ``smoothness_param``
0.001) with ``>=`` and ``>``. Runs that come out identical (the code meets no ties) are
reported once; a ``>`` run whose ``>=`` twin met no tie in any round of any replicate
(checked in each round, :func:`_run`) is that twin's run, number for number, and is not
run again. The code's optimiser pieces (momentum 0.9, weight decay :math:`10^{-2}`,
epochs as local steps) concern every algorithm and are not modelled: every algorithm runs
(2)-(3) as written; :math:`\eta_s` is tuned per algorithm as in §V-A.

Claims (§V-B: CA-Fed "gets a higher time-average accuracy (1.24 percentage points) in
comparison to the second best (F3AST), and a smaller standard deviation
(:math:`1.5\times`)"; Table I, synthetic): for each CA-Fed configuration, its time-average
test error and its second-half standard deviation are below F3AST's.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import torch

from fedtheory.availability.builders import cafed_population
from fedtheory.data import FederatedDataset, cafed_clustered
from fedtheory.problems.logistic import LogisticRegressionProblem
from fedtheory.sim import FedAU, FedAvg, simulate, unbiased_weights
from fedtheory.sim.cafed import AdaFedWeights, CaFed, F3astWeights
from fedtheory.sim.optimizer import SGD, Training
from fedtheory.validation import plots
from fedtheory.validation.registry import Check, Size, register
from fedtheory.validation.setups import Aspect, SetUp
from fedtheory.verdict import FindingSpec, compare_findings, distinct_runs, finding_difference

BASELINES = ("Unbiased", "F3AST", "AdaFed", "FedAU")
CAFED_RUNS = {  # name -> (variant, initial_minimum, strict): §V-A / Algorithm 1's readings
    "CA-Fed paper, min from first, >=": ("paper", "first", False),
    "CA-Fed paper, min from first, >": ("paper", "first", True),
    "CA-Fed paper, min from 0, >=": ("paper", "zero", False),
    "CA-Fed paper, min from 0, >": ("paper", "zero", True),
}
#: The authors' ``paper_experiments/synthetic/full_experiment.sh``: (local lr, server lr) of
#: each sampler, CA-Fed (``markov``) with ``--smoothness_param 0.2 --tolerance_param 0.0``,
#: F3AST (``fast``) with ``--smoothness_param 0.001 --fast_n_clients_per_round 12``, AdaFed
#: with ``--adafed_full_participation``; ``--local_steps 2`` epochs, ``--train_bz 32``,
#: ``--seed 42``, SGD with ``MOMENTUM = 0.9``, ``WEIGHT_DECAY = 1e-2`` (``utils/constants.py``)
#: at clients and server.
CODE_PAIRS = {
    "code set-up: Unbiased": (0.03, 0.03),
    "code set-up: F3AST": (0.03, 0.03),
    "code set-up: AdaFed": (0.001, 1.0),
    "code set-up: CA-Fed, >=": (0.01, 0.3),
    "code set-up: CA-Fed, >": (0.01, 0.3),
}
CODE_SMOOTHNESS = {"CA-Fed": 0.2, "F3AST": 1e-3}
CODE_MOMENTUM, CODE_WEIGHT_DECAY = 0.9, 1e-2
LITERAL = "CA-Fed paper, min from first, >="  # Algorithm 1 line 22 as printed
ALGORITHMS = BASELINES + tuple(CAFED_RUNS) + tuple(CODE_PAIRS)
PAPER_ALGORITHMS = BASELINES + tuple(CAFED_RUNS)
#: Rodio et al. 2023, Table I, synthetic data: maximum, time-average accuracy (%), std (%)
TABLE_I = {
    "Unbiased": (78.94, 75.32, 0.48),
    "F3AST": (78.97, 75.33, 0.40),
    "AdaFed": (78.69, 74.81, 0.59),
    "CA-Fed": (79.03, 76.22, 0.28),
}
TABLE_I_GAP = TABLE_I["CA-Fed"][1] - TABLE_I["F3AST"][1]  # 0.89 points of accuracy
PAPER_GRID = np.array([-3.0, -2.5, -2.0, -1.5, -1.0]), np.array([-2.0, -1.5, -1.0, -0.5, 0.0])
REFERENCE = 'Rodio et al. (CA-Fed), Table I (synthetic, "average over three runs") and §V-B'


def settings(size: Size) -> dict:
    step = {"tiny": None, "quick": 2, "full": 1}[size]  # every `step`-th point of §V-A's grid
    lrs, server = (
        ([0.1], [1.0])
        if step is None
        else tuple((10 ** g[::step]).round(6).tolist() for g in PAPER_GRID)
    )
    return {
        "num_clients": 24,
        "dim": 10,
        "train": 50,
        "test": 150,
        "ridge": 1e-2,
        "batch_size": 32,
        "local_steps": 2,
        "lr_grid": lrs,
        "server_lr_grid": server,
        "tuning_seed": 1000,
        "tuning_replicates": {"tiny": 1, "quick": 2, "full": 4}[size],
        "fedau_cutoff": 50,
        "paper_beta": 0.2,
        "rounds": {"tiny": 30, "quick": 150, "full": 150}[size],
        "data_seeds": {"tiny": 5, "quick": 5, "full": 10}[size],
        "replicates": {"tiny": 2, "quick": 4, "full": 10}[size],
    }


def _setup(s: dict, seed: int, *, code: bool = False):
    """One data draw: the problem, its test set and its availability process. The paper's
    (App. F): group ids Bernoulli(1/2), no intercept, §V-A's population; the code's
    (``--deterministic_split``, ``LinearLayer(bias=True)``): the first half of the clients in
    group 0, a constant feature for the bias, its client-type population."""
    total = s["train"] + s["test"]
    data = cafed_clustered(s["num_clients"], s["dim"], total, random_groups=not code, seed=seed)
    train, test = data.split(s["test"] / total, seed=seed)
    if code:
        train, test = _with_bias(train), _with_bias(test)
    problem = LogisticRegressionProblem(train, ridge=s["ridge"], batch_size=s["batch_size"])
    variant = "code" if code else "paper"
    population = cafed_population(variant=variant, num_clients=s["num_clients"], seed=seed)
    return problem, test, population.process


def _with_bias(data: FederatedDataset) -> FederatedDataset:
    """The samples with a constant feature 1 appended (a linear layer's bias)."""
    ones = data.valid[..., None].astype(np.float64)
    return replace(data, features=np.concatenate([data.features, ones], axis=-1))


def _algorithm(name: str, s: dict, problem, process, lr: float, server_lr: float):
    alpha, pi, lam = problem.alpha, process.pi, process.lam
    kw = {"local_steps": s["local_steps"], "lr": lr, "server_lr": server_lr}
    if name in CODE_PAIRS:
        sgd = SGD(momentum=CODE_MOMENTUM)  # the code's client weight decay is the ridge
        server = SGD(momentum=CODE_MOMENTUM, weight_decay=CODE_WEIGHT_DECAY)
        kw["training"] = Training(client=sgd, server=server, local="epochs")
        if "CA-Fed" in name:
            return CaFed(alpha=alpha, pi=pi, lam=lam, variant="code", strict=name.endswith(">"),
                         smoothness=CODE_SMOOTHNESS["CA-Fed"], **kw)  # fmt: skip
        name = name.removeprefix("code set-up: ")
        if name == "F3AST":
            return FedAvg(F3astWeights(alpha, pi, beta_r=CODE_SMOOTHNESS["F3AST"]), **kw)
    if name in CAFED_RUNS:
        _, initial_minimum, strict = CAFED_RUNS[name]
        opts = {"beta": s["paper_beta"], "initial_minimum": initial_minimum}
        return CaFed(alpha=alpha, pi=pi, lam=lam, strict=strict, **opts, **kw)
    return {
        "Unbiased": lambda: FedAvg(unbiased_weights(alpha, pi), **kw),
        "F3AST": lambda: FedAvg(F3astWeights(alpha, pi), **kw),
        "AdaFed": lambda: FedAvg(AdaFedWeights(alpha, pi), **kw),
        "FedAU": lambda: FedAvg(FedAU(cutoff=s["fedau_cutoff"]), **kw),
    }[name]()


STRICT_TWIN = {  # a CA-Fed run with ">" -> the run with ">=" that it repeats without ties
    **{n: n.replace(", >", ", >=") for n in CAFED_RUNS if n.endswith(", >")},
    "code set-up: CA-Fed, >": "code set-up: CA-Fed, >=",
}


def _run(s, draw, algorithm, *, replicates: int, seed: int, strict=None):
    r"""Test accuracy (%) ``[R, T+1]``, the number of training clients per round ``[R, T]``
    and whether ``strict`` (the same CA-Fed with ">" in line 22, or None) would have run
    the same rounds: in each round its weights applied on the available clients are those
    ``algorithm`` applied (no exclusion decided by a tie :math:`\hat\epsilon-\hat\epsilon^+
    =\tau`), so by induction its run is this one, number for number."""
    problem, test, process = draw
    record = {}
    if strict is not None:

        def same(state, mask):  # [R]: strict's q on the same inputs applies the same weights
            pi, lam = strict.estimates(state.counts, tuple(mask.shape), mask.device)
            q = strict.aggregation_weights(pi, lam, state.loss_hat - state.loss_min)
            return (torch.where(mask & (q > 0), q, 0.0) == state.weights).all(-1)

        record["same"] = same
    rec = simulate(  # metrics come from the iterates here: none evaluated per round
        problem,
        process,
        algorithm,
        rounds=s["rounds"],
        replicates=replicates,
        seed=seed,
        eval_every=s["rounds"],
        keep_masks=False,
        record=record,
    )
    same = strict is not None and bool(rec.recorded["same"].all())
    return 100 * problem.accuracy(rec.iterates, test), np.asarray(rec.participants), same


def _runs(s, draw, names, steps, *, replicates: int, seed: int) -> list[tuple]:
    """:func:`_run` of each algorithm of ``names`` at its ``steps`` ``(lr, server_lr)``; a
    ">" run of CA-Fed is its ">=" twin's (:data:`STRICT_TWIN`) where the twin ran at the
    same steps and met no tie (checked in every round of every replicate), else its own."""
    out = {}
    for name, (lr, slr) in zip(names, steps, strict=True):
        twin = STRICT_TWIN.get(name)
        if twin in out and out[twin][1] == (lr, slr) and out[twin][0][2]:
            out[name] = out[twin]
            continue
        strict = next((n for n, t in STRICT_TWIN.items() if t == name and n in names), None)
        build = {n: _algorithm(n, s, draw[0], draw[2], lr, slr) for n in (name, strict) if n}
        result = _run(s, draw, build[name], replicates=replicates, seed=seed,
                      strict=build.get(strict))  # fmt: skip
        out[name] = result, (lr, slr)
    return [out[name][0] for name in names]


def _tuned(s, draw) -> list[tuple[float, float]]:
    """Per algorithm of the paper's set-up, the grid point :math:`(\\eta,\\eta_s)` with the
    best time-average test accuracy on the tuning draw (a one-point grid needs no run)."""
    grid = [(lr, slr) for lr in s["lr_grid"] for slr in s["server_lr_grid"]]
    if len(grid) == 1:
        return grid * len(PAPER_ALGORITHMS)
    scores = np.array([
        [acc.mean() for acc, _, _ in _runs(
            s, draw, PAPER_ALGORITHMS, [point] * len(PAPER_ALGORITHMS),
            replicates=s["tuning_replicates"], seed=s["tuning_seed"],
        )]
        for point in grid
    ])  # fmt: skip  # [grid, A]
    return [grid[int(j)] for j in np.argmax(scores, axis=0)]


def compute(s: dict) -> dict[str, np.ndarray]:
    tuning = _setup(s, s["tuning_seed"])
    steps = np.array(
        _tuned(s, tuning) + list(CODE_PAIRS.values())
    )  # [A, 2]: tuned on the paper's grid, or the code's own pairs
    seeds = np.arange(s["data_seeds"])  # the judged draws: seeds 0..S-1
    half, shape = s["rounds"] // 2, (len(ALGORITHMS), seeds.size, s["replicates"])
    maximum, average, spread = np.empty(shape), np.empty(shape), np.empty(shape)  # [A, S, R] %
    curves = np.zeros((len(ALGORITHMS), s["rounds"] + 1))  # mean over draws and runs
    participants = np.zeros(len(ALGORITHMS))  # mean number of training clients per round
    for j, seed in enumerate(seeds):
        runs = {}
        for code in (False, True):
            names = [n for n in ALGORITHMS if (n in CODE_PAIRS) == code]
            pairs = [tuple(steps[ALGORITHMS.index(n)]) for n in names]
            draw = _setup(s, int(seed), code=code)
            done = _runs(s, draw, names, pairs, replicates=s["replicates"], seed=int(seed))
            runs.update(zip(names, done, strict=True))
        for i, name in enumerate(ALGORITHMS):
            acc, used, _ = runs[name]
            maximum[i, j], average[i, j] = acc.max(axis=1), acc.mean(axis=1)
            spread[i, j] = acc[:, half:].std(axis=1)
            curves[i] += acc.mean(axis=0) / seeds.size
            participants[i] += used.mean() / seeds.size
    return {
        "maximum": maximum,
        "average": average,
        "spread": spread,
        "curves": curves,
        "lr": steps[:, 0],
        "server_lr": steps[:, 1],
        "participants": participants,
        "table_i": np.array([TABLE_I.get(a, (np.nan,) * 3) for a in ALGORITHMS]),
        **{  # [S, R] the baselines of the orderings, one per set-up
            f"{key}f3ast_{what}": values[ALGORITHMS.index(f"{name}F3AST")].copy()
            for key, name in (("", ""), ("code_", "code set-up: "))
            for what, values in (("error", 100 - average), ("std", spread))
        },
    }


def _baseline(name: str) -> int:
    """Row of the F3AST run that a CA-Fed configuration is compared with (same set-up)."""
    return ALGORITHMS.index("code set-up: F3AST" if name in CODE_PAIRS else "F3AST")


CAFED = (*CAFED_RUNS, "code set-up: CA-Fed, >=", "code set-up: CA-Fed, >")


def _cafed_runs(data) -> dict[str, int]:
    """Distinct CA-Fed runs (identical ones merged, names joined by " = ") -> row index."""
    runs = {
        name: np.stack([data[k][ALGORITHMS.index(name)] for k in ("average", "spread")])
        for name in CAFED
    }
    return {merged: ALGORITHMS.index(merged.split(" = ")[0]) for merged in distinct_runs(runs)}


def _at_grid_edge(data, s) -> list[str]:
    """The algorithms of the paper's set-up whose tuned pair sits on an edge of the grid."""
    lrs, server = np.array(s["lr_grid"]), np.array(s["server_lr_grid"])
    if lrs.size * server.size == 1:
        return []
    return [
        name
        for i, name in enumerate(PAPER_ALGORITHMS)
        if data["lr"][i] in (lrs.min(), lrs.max())
        or data["server_lr"][i] in (server.min(), server.max())
    ]


def setup(data, s, *, code: bool) -> SetUp:
    """The set-up table of the paper's rows (``code=False``) or of the code's row."""
    edge = _at_grid_edge(data, s)
    grid = f"{len(s['lr_grid'])}x{len(s['server_lr_grid'])} points of §V-A's grid"
    tuned = "no tuning (tiny size)" if len(s["lr_grid"]) * len(s["server_lr_grid"]) == 1 else (
        f"{grid}, each algorithm on a separate tuning draw"
        + (f"; optimum at grid edge for {', '.join(edge)}" if edge else "")
    )  # fmt: skip
    draws = f"{s['data_seeds']} data draws x {s['replicates']} run seeds"
    short = s["rounds"] != 150
    aspects = [
        Aspect(
            "data",
            "App. F: 2 groups with ids Bernoulli(1/2), x ~ N(0, I_d), 150 samples per client",
            "24 clients, 2 clusters (first half group 0), d = 10, 50 train / 150 test, hetero 0.2",
            "the code's generator, 50 / 150, hetero 0.2; groups "
            + ("the first half (code)" if code else "Bernoulli(1/2) (App. F)"),
            False,
            "the same generator; the text states no split and no d",
        ),
        Aspect(
            "availability",
            "§V-A: pi = 1/2 +- g; half of each class correlated (lambda = nu), the rest "
            "lambda ~ N(0, eps^2)",
            "client types [[0, 1/2, 0], [1/4, 1/4, 0]]: more-available clients all shifting, "
            "less-available half stable, half shifting",
            "the code's population" if code else "§V-A's (g = 0.4, nu = 0.9, eps = 0.01)",
            False,
            "each row runs its column's population (the code's types in expected proportions)",
        ),
        Aspect(
            "model",
            "linear classifier, ridge 1e-2",
            "LinearLayer(10, 1, bias=True), BCE, weight decay 1e-2",
            "logistic regression, ridge 1e-2" + (", bias feature" if code else ", no bias"),
            False,
            "the client weight decay 1e-2 is the ridge's gradient, term for term",
        ),
        Aspect(
            "local training",
            "E = 2 local SGD steps (2), batch size not stated",
            "local_steps = 2 epochs (fit_epochs), batch 32",
            "2 epochs of batches of 32" if code else "E = 2 steps, batch 32",
            False,
            "each row follows its column",
        ),
        Aspect(
            "optimiser",
            "SGD (2)-(3); no momentum or decay stated",
            "torch SGD, momentum 0.9, weight decay 1e-2 at clients (kept across rounds) and server",
            "momentum 0.9 at clients (kept) and server, server weight decay 1e-2"
            if code
            else "plain SGD (2)-(3)",
            False,
            "each row follows its column",
        ),
        Aspect(
            "step sizes",
            "grid search on §V-A's 5x5 grid",
            "Unbiased 0.03/0.03, CA-Fed 0.01/0.3, AdaFed 0.001/1.0, F3AST 0.03/0.03",
            "the code's pairs" if code else tuned,
            bool(edge) and not code,
            "optimum at grid edge: the grid does not hold the optimum, the methods run untuned"
            if edge and not code
            else "as in the column",
        ),
        Aspect(
            "CA-Fed options",
            "tau = 0, beta = 0.2; F* and the test's >= or > left open",
            "smoothness 0.2, tolerance 0, exact losses, F* from LogisticRegression(C=1)",
            "the code variant, smoothness 0.2, F* the minima of the ridge objective"
            if code
            else "beta = 0.2, both readings of F* and of the test",
            False,
            "F* without the ridge term shifts each client's gap by a small constant"
            if code
            else "every reading is a row",
        ),
        Aspect(
            "baselines given",
            "oracle pi (Unbiased, AdaFed, F3AST), oracle pi and lambda (CA-Fed)",
            "oracle; F3AST 12 clients, smoothing 0.001; AdaFed full participation",
            "the same",
            False,
            "identical",
        ),
        Aspect(
            "rounds, metric",
            "150 rounds (Fig. 3); time-average test accuracy and its std",
            "150 rounds",
            f"{s['rounds']} rounds; time-average test accuracy of the server model, "
            "second-half std",
            short,
            "fewer rounds than the paper" if short else "as in the column",
        ),
        Aspect(
            "seeds",
            "three runs of one data set",
            "seed 42",
            draws,
            False,
            "more draws only narrow the interval",
        ),  # fmt: skip
    ]
    name = "the code's row" if code else "the paper's rows"
    return SetUp(f"CA-Fed Table I, {name}", "code" if code else "paper", tuple(aspects))


def judge(data, s):
    scale = (
        f"N={s['num_clients']}, T={s['rounds']}, {s['data_seeds']} data draws x "
        f"{s['replicates']} runs"
    )
    paper_error = 100 - TABLE_I["CA-Fed"][1], 100 - TABLE_I["F3AST"][1]
    paper_std = TABLE_I["CA-Fed"][2], TABLE_I["F3AST"][2]
    specs = []
    for name, i in _cafed_runs(data).items():
        code = name.split(" = ")[0] in CODE_PAIRS
        key = "code_" if code else ""
        differs = setup(data, s, code=code).open_differences()
        specs += [
            FindingSpec(
                f"{name}: time-average test error (%) < F3AST's (Table I, 3 runs: "
                f"{paper_error[0]:.2f} < {paper_error[1]:.2f}; here {scale})",
                REFERENCE, 100 - data["average"][i], data[f"{key}f3ast_error"], differs=differs,
            ),
            FindingSpec(
                f"{name}: second-half accuracy std (%) < F3AST's (Table I, 3 runs: "
                f"{paper_std[0]:.2f} < {paper_std[1]:.2f}; here {scale})",
                REFERENCE, data["spread"][i], data[f"{key}f3ast_std"], differs=differs,
            ),
        ]  # fmt: skip
    return compare_findings(specs)


def plot(data, s, fig):
    ax1, ax2, ax3 = plots.panels(fig, 3)
    t = np.arange(data["curves"].shape[1])
    running = np.cumsum(data["curves"], axis=1) / (t + 1)  # [A, T+1] time average up to t
    cafed = _cafed_runs(data)  # label -> row
    for k, (label, i) in enumerate(cafed.items()):
        gap = running[i] - running[_baseline(label.split(" = ")[0])]
        ax1.plot(t, gap, **plots.series(k, points=t.size), label=_short(label))
    ax1.axhline(0.0, **plots.REFERENCE, label="F3AST (same set-up)")
    ax1.axhline(TABLE_I_GAP, **{**plots.REFERENCE, "linestyle": ":"},
                label=f"Table I gap (+{TABLE_I_GAP:.2f})")  # fmt: skip
    ax1.set(
        xlabel="round $t$",
        ylabel="time-average accuracy up to $t$,\nminus F3AST's (percentage points)",
        title="CA-Fed minus F3AST over the rounds\n(mean over data draws and runs)",
    )
    plots.legend(ax1)
    for k, (label, i) in enumerate(cafed.items()):
        f3ast = data["average"][_baseline(label.split(" = ")[0])]  # [S, R]
        diff = finding_difference(data["average"][i], f3ast)
        y = np.full(diff.per_draw.size, k, dtype=float)
        ax2.plot(diff.per_draw, y + 0.15, **plots.series(1, line=False),
                 label="one data draw" if k == 0 else None)  # fmt: skip
        ax2.errorbar(diff.difference, k - 0.15,
                     xerr=[[diff.difference - diff.low], [diff.high - diff.difference]],
                     **plots.series(0, line=False),
                     label="mean, 95% CI over draws" if k == 0 else None)  # fmt: skip
    ax2.axvline(0.0, **plots.REFERENCE, label="F3AST (same set-up)")
    ax2.axvline(TABLE_I_GAP, **{**plots.REFERENCE, "linestyle": ":"},
                label=f"Table I gap (+{TABLE_I_GAP:.2f})")  # fmt: skip
    ax2.set_yticks(range(len(cafed)), [_short(n) for n in cafed], fontsize=7)
    ax2.invert_yaxis()
    ax2.set(
        xlabel="time-average accuracy minus F3AST's\n(percentage points)",
        title="CA-Fed minus F3AST per configuration",
    )
    plots.legend(ax2)
    runs = {
        **{n: ALGORITHMS.index(n) for n in ("Unbiased", "F3AST", "AdaFed")},
        **{n: ALGORITHMS.index(n) for n in CODE_PAIRS if "CA-Fed" not in n},
        **cafed,
    }
    x = np.arange(len(runs))
    ci, yerr = plots.confidence_bars([data["average"][i].mean(axis=1) for i in runs.values()])
    ax3.errorbar(x, ci[:, 0], yerr=yerr, **plots.series(0, line=False),
                 label="measured (mean, 95% CI over draws)")  # fmt: skip
    table = [TABLE_I["CA-Fed" if "CA-Fed" in n else n.split(": ")[-1]][1] for n in runs]
    ax3.plot(x, table, **plots.series(1, line=False, filled=False), markersize=9,
             label="paper, Table I (CA-Fed: one value)")  # fmt: skip
    ax3.set_xticks(x, [_short(n) for n in runs], rotation=40, ha="right", fontsize=7)
    ax3.set(ylabel="time-average test accuracy (%)", title="Measured vs paper's Table I")
    plots.legend(ax3)
    merged = [n for n in cafed if " = " in n]
    return (
        "Left: time-average accuracy of each CA-Fed configuration minus F3AST's in the same "
        "set-up (the paper's or the code's), up to round t. Middle: per data draw (points) "
        "and over the draws (mean and 95% CI) the same difference at the last round; the "
        "dotted line is Table I's gap. Right: measured time-average accuracies against Table "
        "I (hollow; Table I has one CA-Fed value, drawn at each configuration)."
        + (f" Identical runs drawn once: {'; '.join(merged)}." if merged else "")
    )


def _short(name: str) -> str:
    """A configuration's label for an axis: merged names shortened to the first, marked."""
    first, *same = name.split(" = ")
    return first.replace("CA-Fed paper, ", "paper: ").replace("code set-up: ", "code: ") + (
        " (= >)" if same else ""
    )


def notes(data, s):
    lines = []
    for i, name in enumerate(ALGORITHMS):
        algorithm = name.split(": ")[-1]
        paper = TABLE_I.get("CA-Fed" if "CA-Fed" in name else algorithm)
        ours = (
            f"maximum {data['maximum'][i].mean():.2f}, time-average "
            f"{data['average'][i].mean():.2f}, second-half std {data['spread'][i].mean():.2f}"
        )
        theirs = "not in Table I" if paper is None else "/".join(f"{v:.2f}" for v in paper)
        pair = "the code's" if name in CODE_PAIRS else "tuned"
        lines.append(
            f"{name} ({pair} eta={data['lr'][i]:.3g}, eta_s={data['server_lr'][i]:.3g}; "
            f"{data['participants'][i]:.2f} training clients per round): {ours} (paper, "
            f"3 runs: {theirs})"
        )
    lines.append(
        "Sensitivity of the ordering to the paper's open choices and to the code's set-up "
        "(time-average accuracy minus F3AST's in the same set-up, percentage points, mean "
        "and 95% CI over the data draws; training clients per round):"
    )
    for name, i in _cafed_runs(data).items():
        f3ast = data["average"][_baseline(name.split(" = ")[0])]
        d = finding_difference(data["average"][i], f3ast)
        lines.append(
            f"  {name}: {d.difference:+.2f} [{d.low:+.2f}, {d.high:+.2f}], detectable "
            f"{d.detectable:.2f}; {data['participants'][i]:.2f} clients per round"
        )
    lines.append(f"Table I's own CA-Fed - F3AST gap is {TABLE_I_GAP:.2f} points (§V-B says 1.24).")
    if edge := _at_grid_edge(data, s):
        lines.append(
            "Optimum at grid edge (the paper's grid ends there too; the rows say so as an "
            f"open set-up difference): {', '.join(edge)}."
        )
    return lines


register(
    Check(
        "cafed-appf",
        "CA-Fed App. F synthetic experiment vs Table I (a finding across data draws)",
        "Rodio et al. (CA-Fed), App. F set-up, Table I (synthetic) and §V-B",
        settings,
        compute,
        judge,
        plot,
        bounds=("f3ast_error", "f3ast_std", "code_f3ast_error", "code_f3ast_std"),
        notes=notes,
        setups=lambda data, s: [setup(data, s, code=False), setup(data, s, code=True)],
        cost=43,
    )
)
