r"""The authors' code as the referee of CA-Fed's Table I (``cafed-appf``): run by hand,
never by the test suite.

Runs the code of Rodio et al. (github.com/arodio/CA-Fed), from *your own checkout*, on the
synthetic experiment of ``paper_experiments/synthetic/full_experiment.sh`` (its data flags,
its tuned pairs and samplers: CA-Fed ``markov`` 0.01/0.3 with smoothing 0.2 and tolerance 0,
F3AST ``fast`` 0.03/0.03 with 12 clients per round), for every data seed and run seed asked,
and prints CA-Fed minus F3AST for the statistics ``cafed-appf`` judges, beside fedtheory's
code row:

* the time-average test accuracy as the code computes it (the running mean over the rounds
  ``run_experiment.py`` logs: 0, then after rounds 2, 5, ..., 38 and 10, 20, ..., 150,
  ``utils/plots.py``'s ``smooth_results`` with ``discount_coeff=1``), read from the code's
  own log calls;
* the time-average test accuracy over every round 0..T (the global model evaluated after
  each round on every client's test split, weighted as the code weights clients, without
  drawing from torch's random generator so the run is the code's own);
* the standard deviation of the test accuracy over the second half of the rounds.

Usage (from the repository root, with the project's environment; torch, numpy, sklearn and
tqdm are needed; torchvision, tensorboard and PIL are replaced by stand-ins when missing,
as the synthetic path uses none of them)::

    python -m benchmarks.peers.cafed /path/to/CA-Fed --data-seeds 42 --run-seeds 0 1 2 3

Runs can be split: each part with ``--out part.json``, then ``--runs part1.json part2.json
... --record validation/papers/cafed/authors_code.json`` with all the seeds summarises them
(and runs the ones no part holds); the record keeps the command and the parts' commands.

One deviation from the script as written: ``full_experiment.sh`` passes
``--experiment synthetic``, which ``utils/utils.py`` refuses (``NotImplementedError``:
"synthetic is not available!"); the runs use ``synthetic_clustered``, the name of the data
set the script generates. Data seed ``s`` generates the data (``data/main.py --seed s``);
run seed ``r`` is ``run_experiment.py --seed r`` (torch's initialisation, availability,
sampling, batches). Differences are judged as fedtheory judges a finding: one data seed,
paired over the run seeds; several, over the data seeds (the per-seed mean over runs).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

import numpy as np

DATA_FLAGS = [  # full_experiment.sh, data/main.py
    "--dataset", "synthetic_clustered", "--n_tasks", "24", "--n_clusters", "2",
    "--dimension", "10", "--n_train_samples", "50", "--n_test_samples", "150",
    "--hetero_param", "0.2", "--availability_parameters", "0.4", "0.4",
    "--stability_parameters", "0.9", "0.9", "--deterministic_split",
]  # fmt: skip
SAMPLERS = {  # full_experiment.sh: sampler -> its own flags and (local lr, server lr)
    "markov": (["--smoothness_param", "0.2", "--tolerance_param", "0.0"], ("0.01", "0.3")),
    "fast": (
        ["--smoothness_param", "0.001", "--fast_n_clients_per_round", "12"],
        ("0.03", "0.03"),
    ),  # fmt: skip
}
COMMON = [
    "--experiment", "synthetic_clustered", "--objective_type", "weighted",
    "--aggregator_type", "centralized", "--local_steps", "2", "--local_optimizer", "sgd",
    "--server_optimizer", "sgd", "--train_bz", "32", "--test_bz", "1024", "--device", "cpu",
    "--log_freq", "10", "--verbose", "0",
]  # fmt: skip


def _stand_ins() -> None:
    """Modules the synthetic path imports but never uses, where missing; and a
    ``SummaryWriter`` that keeps the scalars in memory (the code's logs, read back here)."""

    class Unavailable:
        def __init__(self, *args, **kwargs):
            raise RuntimeError("not available in the peer run (synthetic data only)")

    def module(name: str, **attrs) -> types.ModuleType:
        m = types.ModuleType(name)
        m.__dict__.update(attrs)
        sys.modules[name] = m
        return m

    try:
        import torchvision  # noqa: F401
    except ImportError:
        tv = module("torchvision")
        tv.datasets = module("torchvision.datasets", CIFAR10=Unavailable, MNIST=Unavailable)
        tv.transforms = module("torchvision.transforms", Compose=Unavailable,
                               ToTensor=Unavailable, Normalize=Unavailable)  # fmt: skip
        tv.models = module("torchvision.models")
    try:
        import PIL  # noqa: F401
    except ImportError:
        module("PIL", Image=Unavailable)

    class Scalars:
        """``SummaryWriter(log_dir)``: ``add_scalar`` kept per log folder."""

        logs: dict[str, dict[str, list[tuple[int, float]]]] = {}

        def __init__(self, log_dir=""):
            self.tags = Scalars.logs.setdefault(str(log_dir), {})

        def add_scalar(self, tag, value, step):
            self.tags.setdefault(tag, []).append((int(step), float(value)))

        def flush(self):
            pass

    module("torch.utils.tensorboard", SummaryWriter=Scalars)


def _multinomial_logistic_regression():
    """The code's ``LogisticRegression(multi_class='multinomial', max_iter=1000)``
    (``get_local_optimums``), where the installed scikit-learn no longer takes
    ``multi_class`` (removed in 1.8): on two classes the multinomial model's two weight
    vectors are opposite at the optimum, its L2 penalty :math:`\frac12(\\|w_0\\|^2+\\|w_1\\|^2)`
    is :math:`\frac14\\|\beta\\|^2` of the binary model's :math:`\beta=w_1-w_0`, so it is the
    binary model with ``C`` doubled (the intercept unpenalised in both, lbfgs)."""
    import inspect

    from sklearn.linear_model import LogisticRegression

    if "multi_class" in inspect.signature(LogisticRegression).parameters:
        return LogisticRegression

    def build(multi_class="auto", C=1.0, **kwargs):
        if multi_class != "multinomial":
            return LogisticRegression(C=C, **kwargs)
        return _Multinomial(C=C, **kwargs)

    class _Multinomial(LogisticRegression):
        def fit(self, X, y, sample_weight=None):
            if np.unique(y).size == 2:
                self.C = 2 * self.C
            return super().fit(X, y, sample_weight)

    return build


def generate(checkout: Path, seed: int, out: Path) -> Path:
    """The data of ``data/main.py`` with ``full_experiment.sh``'s flags at ``seed``, run in a
    subprocess from ``data/`` (its ``utils`` is not the repository's); returns ``cfg.json``."""
    code = (
        "import runpy, sys; sys.path.insert(0, '.'); "
        f"sys.path.insert(0, {str(Path(__file__).parent)!r}); "
        "import cafed as peer; peer._stand_ins(); "
        f"sys.argv = ['main.py'] + {DATA_FLAGS!r} + ['--save_dir', {str(out)!r}, "
        f"'--seed', '{seed}']; runpy.run_path('main.py', run_name='__main__')"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=checkout / "data",
                          capture_output=True, text=True)  # fmt: skip
    if done.returncode:
        raise RuntimeError(f"the authors' data generation failed (seed {seed}):\n{done.stderr}")
    return out / "cfg.json"


def run(checkout: Path, cfg: Path, sampler: str, seed: int, rounds: int, logs: Path) -> dict:
    """One run of the authors' code: ``run_experiment.py``'s loop with its own objects, the
    code's log calls at the code's rounds, and the test accuracy of every round [T+1] (%)."""
    import torch

    _stand_ins()
    sys.path.insert(0, str(checkout))
    import run_experiment as code  # the authors' module (its main is not run)
    import utils.utils as code_utils
    from utils.args import parse_args

    code_utils.LogisticRegression = _multinomial_logistic_regression()

    flags, (lr, server_lr) = SAMPLERS[sampler]
    args = parse_args(COMMON + flags + [
        "--cfg_file_path", str(cfg), "--clients_sampler", sampler, "--n_rounds", str(rounds),
        "--local_lr", lr, "--server_lr", server_lr, "--logs_dir", str(logs / sampler),
        "--seed", str(seed),
    ])  # fmt: skip
    torch.manual_seed(args.seed)  # as run_experiment.py's main
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        aggregator, sampler_ = code.build_experiment(args_=args, seed_=args.seed)

    tests = [  # every client's test split as tensors, in the code's weighting
        (aggregator.clients_weights_dict[i],
         torch.as_tensor(c.test_loader.dataset.data, dtype=torch.float32),
         torch.as_tensor(c.test_loader.dataset.targets, dtype=torch.float32).unsqueeze(1))
        for i, c in aggregator.clients_dict.items()
    ]  # fmt: skip

    def accuracy() -> float:  # the global model on every test split, no RNG drawn
        trainer = aggregator.global_trainer
        with torch.no_grad():
            return 100 * sum(w * float(trainer.metric(trainer.model(x), y)) for w, x, y in tests)

    every = [accuracy()]
    aggregator.write_logs()
    for ii in range(rounds):
        active = sampler_.get_active_clients()
        loss_dict = aggregator.gather_loss_dict() if sampler == "markov" else None
        ids, weights = sampler_.sample(active_clients=active, loss_dict=loss_dict)
        aggregator.mix(ids, weights)
        every.append(accuracy())
        if (ii < 40 and ii % 3 == 1) or ii % args.log_freq == args.log_freq - 1:
            aggregator.write_logs()
    logged = sys.modules["torch.utils.tensorboard"].SummaryWriter.logs
    steps, values = zip(*logged[str(logs / sampler / "global")]["Test/Metric"], strict=True)
    sys.path.remove(str(checkout))
    return {"steps": list(steps), "logged": [100 * v for v in values], "every": every}


def statistics(result: dict, rounds: int) -> dict[str, float]:
    """The statistics ``cafed-appf`` judges, in %."""
    every = np.asarray(result["every"])
    return {
        "logged-round average": float(np.mean(result["logged"])),
        "all-rounds average": float(every.mean()),
        "second-half std": float(every[rounds // 2 :].std()),
    }


def _worker(checkout: Path, cfg: Path, sampler: str, seed: int, rounds: int) -> dict:
    """One run in a fresh process (the authors' modules hold no state across runs then)."""
    code = (
        "import json, sys; from pathlib import Path; "
        f"sys.path.insert(0, {str(Path(__file__).parent)!r}); import cafed as peer; "
        f"r = peer.run(Path({str(checkout)!r}), Path({str(cfg)!r}), {sampler!r}, {seed}, "
        f"{rounds}, Path({str(cfg.parent)!r}) / 'logs{seed}'); print(json.dumps(r))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"the authors' code failed ({sampler}, seed {seed}):\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


STATISTICS = {  # record key -> the statistic of a run
    "accuracy": "logged-round average",
    "every-round accuracy": "all-rounds average",
    "std": "second-half std",
}


def summarise(runs: dict, data_seeds, run_seeds, rounds: int) -> dict:
    """CA-Fed (markov) minus F3AST (fast) per statistic, ``(mean, low, high)`` (95%): one data
    seed, paired over the run seeds; several, over the data seeds (each seed's mean over
    its runs), as fedtheory judges a finding. Checks that the code logged the rounds
    ``cafed-appf`` averages over (:func:`~fedtheory.validation.papers.cafed.appf.logged_rounds`)."""
    from fedtheory.validation.papers.cafed.appf import logged_rounds
    from fedtheory.verdict import finding_difference

    out = {}
    for key, stat in STATISTICS.items():
        x, y = (
            np.array([[statistics(runs[f"{m}/{s}/{r}"], rounds)[stat] for r in run_seeds]
                      for s in data_seeds])
            for m in ("markov", "fast")
        )  # fmt: skip  # [S, R]
        d = finding_difference(x.T, y.T) if len(data_seeds) == 1 else finding_difference(x, y)
        out[key] = [d.difference, d.low, d.high]
        out[f"{key} (CA-Fed, F3AST)"] = [float(x.mean()), float(y.mean())]
    for name, result in runs.items():
        if list(result["steps"]) != logged_rounds(rounds).tolist():
            raise RuntimeError(f"{name}: the code logged other rounds than logged_rounds")
    out["over"] = (
        f"paired over {len(run_seeds)} run seeds" if len(data_seeds) == 1
        else f"over {len(data_seeds)} data seeds"
    )  # fmt: skip
    return out


def _command(argv: list[str], checkout: str) -> str:
    """The command line that was run, the checkout's path written as ``CA-Fed``."""
    import shlex

    return "python -m benchmarks.peers.cafed " + shlex.join(
        "CA-Fed" if arg == checkout else arg for arg in argv
    )


def _stored(paths: list[Path]) -> tuple[str, str, dict, list[str]]:
    """The commit, start dates, runs and commands of earlier ``--out`` files, merged (one
    commit of the code; a run stored twice must be the same numbers)."""
    commits, dates, runs, commands = set(), [], {}, []
    for path in paths:
        stored = json.loads(path.read_text())
        commits.add(stored["commit"])
        dates.append(stored["date"])
        commands += [stored["command"]] if "command" in stored else []
        for key, result in stored["runs"].items():
            if runs.setdefault(key, result) != result:
                raise RuntimeError(f"{key} is stored twice with other numbers ({path})")
    if len(commits) != 1:
        raise RuntimeError(f"the runs files come from other commits: {sorted(commits)}")
    return commits.pop(), ", ".join(sorted(set(dates))), runs, commands


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", type=Path, help="your checkout of arodio/CA-Fed")
    parser.add_argument("--data-seeds", type=int, nargs="+", default=[42])
    parser.add_argument("--run-seeds", type=int, nargs="+", default=[0, 1, 2, 3])
    parser.add_argument("--rounds", type=int, default=150)
    parser.add_argument("--out", type=Path, help="write every run's numbers to this JSON")
    parser.add_argument("--runs", type=Path, nargs="+",
                        help="the runs of earlier --out files (merged; the runs they lack "
                        "are run)")  # fmt: skip
    parser.add_argument("--record", type=Path,
                        help="write the summary under 'cafed-appf' in this JSON (e.g. "
                        "validation/papers/cafed/authors_code.json, which cafed-appf "
                        "reads)")  # fmt: skip
    argv = sys.argv[1:] if argv is None else list(argv)
    a = parser.parse_args(argv)
    if len(a.run_seeds) < 2 and len(a.data_seeds) < 2:
        parser.error("--run-seeds needs at least 2 seeds with one data seed (a paired interval)")
    command = _command(argv, a.checkout.as_posix())
    checkout = a.checkout.resolve()
    head = ["git", "-C", str(checkout), "rev-parse", "HEAD"]
    commit = subprocess.run(head, capture_output=True, text=True).stdout.strip() or "unknown"
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    runs, commands = {}, []
    if a.runs:  # earlier runs' numbers
        stored, dates, runs, commands = _stored(a.runs)
        if commit not in (stored, "unknown"):
            raise RuntimeError(f"the runs are of {stored}, the checkout is at {commit}")
        commit, started = stored, dates
    print(f"arodio/CA-Fed at {commit}, {started}; data seeds {a.data_seeds}, run seeds "
          f"{a.run_seeds}, {a.rounds} rounds")  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        for s in a.data_seeds:
            cfg = None
            for r in a.run_seeds:
                for sampler in SAMPLERS:
                    key = f"{sampler}/{s}/{r}"
                    if key not in runs:
                        cfg = cfg or generate(checkout, s, Path(tmp) / f"data{s}")
                        runs[key] = _worker(checkout, cfg, sampler, r, a.rounds)
                    every = np.asarray(runs[key]["every"])
                    if not np.allclose(every[runs[key]["steps"]], runs[key]["logged"],
                                       atol=1e-9):  # fmt: skip
                        raise RuntimeError("the code's logged accuracy is not the evaluation's")
                    print(f"  data seed {s}, run seed {r}, {sampler}: " + ", ".join(
                        f"{k} {v:.2f}" for k, v in statistics(runs[key], a.rounds).items()),
                        flush=True)  # fmt: skip
    if a.out:
        a.out.write_text(json.dumps(
            {"commit": commit, "date": started, "command": command, "runs": runs}))  # fmt: skip
    chosen = {f"{m}/{s}/{r}": runs[f"{m}/{s}/{r}"]
              for m in SAMPLERS for s in a.data_seeds for r in a.run_seeds}  # fmt: skip
    summary = summarise(chosen, a.data_seeds, a.run_seeds, a.rounds)
    print(f"CA-Fed (markov) minus F3AST (fast), percentage points, mean [95% CI], "
          f"{summary['over']}:")  # fmt: skip
    for key, stat in STATISTICS.items():
        d, (x, y) = summary[key], summary[f"{key} (CA-Fed, F3AST)"]
        print(f"  {stat}: {d[0]:+.2f} [{d[1]:+.2f}, {d[2]:+.2f}] (CA-Fed {x:.2f}, F3AST {y:.2f})")
    if a.record:
        records = json.loads(a.record.read_text()) if a.record.is_file() else {}
        records["cafed-appf"] = {
            "commit": commit, "date": started, "command": command,
            **({"runs by": commands} if commands else {}),
            "data seeds": a.data_seeds, "run seeds": a.run_seeds, "rounds": a.rounds, **summary,
        }  # fmt: skip
        a.record.write_text(json.dumps(records, indent=1) + "\n")


if __name__ == "__main__":
    main()
