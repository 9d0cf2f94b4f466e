"""Toy averaging as a PEP and the Toy Lemma against its exact worst case (the analyses layer).

Over isotropic clients :math:`f_i=\\tfrac L2\\|x-c_i\\|^2` with a common minimiser, all
available, the exact worst case of :math:`\\|x_T-x^*\\|^2` from
:math:`\\|x_0-x^*\\|^2\\le\\Delta_0` is :math:`(1-\\eta L)^{2T}\\Delta_0`: the Toy Lemma's
bound, attained."""

from __future__ import annotations

import numpy as np

from fedtheory.pep import AtOptimum, Initial, Isotropic, Participation, worst_case
from fedtheory.pep.certificate import record, said
from fedtheory.pep.methods import available, rounds
from fedtheory.pep.registry import Method, Statement
from fedtheory.verdict import compare_upper_bound, consistency_check
from tests.toy_paper.algorithm import ToyAverage
from tests.toy_paper.statements import contraction

CLIENTS = 2


def _run(algorithm, fs, x0, mask):
    work = available(algorithm, mask)
    return rounds(algorithm, fs, x0, work, np.ones(work.shape) / work.shape[1])


def solve(*, L: float, eta: float, T: int, toy_gap0: float):
    """The PEP of toy averaging at these constants, and the Toy Lemma's bound."""
    bound = contraction.evaluate(L=L, eta=eta, T=T, toy_gap0=toy_gap0).total
    result = worst_case(
        ToyAverage(local_steps=1, lr=eta),
        Isotropic(L),
        Participation.full(int(T), CLIENTS),
        initial=Initial(toy_gap0),
        heterogeneity=AtOptimum(0.0),
    )
    return result, float(bound)


def _exact(family_key, instance):
    if family_key != "toy.contraction":
        return None
    return solve(**{k: instance[k] for k in ("L", "eta", "T", "toy_gap0")})[0]


def _settings(size):
    return {"toy_instances": [[1.0, 0.5, 3, 1.0], [2.0, 0.1, 2, 0.5]]}


def _compute(s):
    out = {"toy_exact": [], "toy_bound": []}
    for L, eta, T, gap0 in s["toy_instances"]:
        result, bound = solve(L=L, eta=eta, T=int(T), toy_gap0=gap0)
        out["toy_exact"].append(result.value)
        out["toy_bound"].append(bound)
        record(out, "toy", result)
    return out


def _judge(data, s):
    floor = data["toy_accuracy"]
    return [
        said(compare_upper_bound("toy: exact worst case <= the Toy Lemma's bound",
                                 "Toy paper, Lemma 1", data["toy_exact"], data["toy_bound"],
                                 floor=floor), data, "toy"),
        said(consistency_check(compare_upper_bound(
            "toy: the Toy Lemma's bound <= the exact worst case (attained)", "Toy paper, Lemma 1",
            data["toy_bound"], data["toy_exact"], floor=floor)), data, "toy"),
    ]  # fmt: skip


def _build(args):
    return ToyAverage(local_steps=args.local_steps, lr=args.lr)


METHODS = (Method(ToyAverage, _run, available, command="toy-average", build=_build),)
STATEMENTS = (
    Statement(
        "toy",
        "the Toy Lemma",
        _settings,
        _compute,
        _judge,
        bounds=("toy_bound", "toy_exact"),
        exact=_exact,
    ),
)
