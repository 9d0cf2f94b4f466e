"""``fedtheory pep``: exact worst case of an FL method under a participation pattern
(performance estimation; Drori & Teboulle 2014, Taylor, Hendrickx & Glineur 2017), its
certificate, the replayed instance and a bound's ratio."""

from __future__ import annotations

import sys

METHODS = ("fedavg", "mifa", "fedlaavg", "fedawe", "fedlaavg-theorem4")
CLASSES = ("strongly-convex", "quadratic", "nonconvex")
CRITERIA = ("distance", "gap", "min_gap", "min_grad_norm", "fedawe_zbar", "fedawe_xbar",
            "fedawe_consensus_x", "fedawe_consensus_z")  # fmt: skip


def _floats(text: str, what: str) -> list[float]:
    from fedtheory.errors import ParameterError

    try:
        return [float(v) for v in text.split(",")]
    except ValueError:
        raise ParameterError(
            f"The '{what}' option of fedtheory pep must list numbers separated by commas. "
            f"Got {text!r} instead."
        ) from None


def _participation(text: str, rounds: int, clients: int):
    """``full``, ``alternating``, ``blocks:2,1``, ``bernoulli:0.5,0.8`` (all masks enumerated)
    or ``mask:10,01,11`` (one row of 0/1 per round)."""
    import numpy as np

    from fedtheory.errors import ParameterError
    from fedtheory.pep import Participation

    kind, _, rest = text.partition(":")
    if kind == "full":
        return Participation.full(rounds, clients)
    if kind == "alternating":
        return Participation.alternating(rounds, clients)
    if kind == "blocks":
        return Participation.alternating(rounds, clients, blocks=[int(b) for b in rest.split(",")])
    if kind == "bernoulli":
        return Participation.bernoulli(rounds, _floats(rest, "--pattern"))
    if kind == "mask":
        rows = [[c == "1" for c in row] for row in rest.split(",")]
        return Participation.fixed(np.array(rows))
    raise ParameterError(
        "The '--pattern' option of fedtheory pep must be full, alternating, blocks:T1,T2,..., "
        f"bernoulli:P1,P2,... or mask:ROW,ROW,... Got {text!r} instead."
    )


def _aggregator(text: str, clients: int):
    """``uniform`` (over participants), ``all`` (1/N), ``fedau:P1,...`` (1/(N p_i)),
    ``q:Q1,...`` (CA-Fed's fixed weights)."""
    import numpy as np

    from fedtheory.errors import ParameterError
    from fedtheory.sim import AverageAll, AverageParticipating, FixedWeights, unbiased_weights

    kind, _, rest = text.partition(":")
    if kind == "uniform":
        return AverageParticipating()
    if kind == "all":
        return AverageAll()
    if kind == "fedau":
        return unbiased_weights(np.full(clients, 1.0 / clients), _floats(rest, "--weights"))
    if kind == "q":
        return FixedWeights(_floats(rest, "--weights"), name="q")
    raise ParameterError(
        "The '--weights' option of fedtheory pep must be uniform, all, fedau:P1,... or "
        f"q:Q1,... Got {text!r} instead."
    )


def _setting(args):
    from fedtheory.pep import (
        AtOptimum,
        Dissimilarity,
        Initial,
        Quadratic,
        SmoothNonconvex,
        SmoothStronglyConvex,
    )
    from fedtheory.sim import MIFA, FedAvg, FedAWE, FedLaAvg

    training = {"local_steps": args.local_steps, "lr": args.lr}
    algorithm = {
        "fedavg": lambda: FedAvg(_aggregator(args.weights, args.clients), **training),
        "mifa": lambda: MIFA(**training),
        "fedlaavg": lambda: FedLaAvg(clients_per_round=args.per_round, **training),
        "fedawe": lambda: FedAWE(server_lr=args.server_lr, **training),
    }[args.method]()
    fclass = {
        "strongly-convex": lambda: SmoothStronglyConvex(args.mu, args.L),
        "quadratic": lambda: Quadratic(args.mu, args.L),
        "nonconvex": lambda: SmoothNonconvex(args.L),
    }[args.fclass]()
    het = None
    if args.beta2 is not None:
        het = Dissimilarity(args.beta2, args.zeta2 if args.zeta2 is not None else 0.0)
    elif args.zeta2 is not None:
        het = AtOptimum(args.zeta2)
    kind = "gap" if args.fclass == "nonconvex" else args.initial_kind
    part = _participation(args.pattern, args.rounds, args.clients)
    return algorithm, fclass, part, Initial(args.initial, kind), het


def _participation_text(part) -> str:
    """``2 clients, 6 rounds, one mask`` or ``..., 16 masks (exact expectation)``."""
    K, T, N = part.masks.shape
    masks = "one mask" if K == 1 else f"{K} masks (expectation over them, exact)"
    return f"{N} client{'s' * (N > 1)}, {T} round{'s' * (T > 1)}, {masks}"


def _setting_lines(result) -> list[str]:
    """The setting, one item a line, the participation in words."""
    setting = dict(result.setting)
    if "participation" in (result.inputs or {}):
        setting["participation"] = _participation_text(result.inputs["participation"])
    if setting.get("heterogeneity") == "None":
        setting["heterogeneity"] = "none"
    return ["setting:", *(f"  {k}: {v}" for k, v in setting.items())]


def _no_value(result, args) -> str:
    """Why no value is printed. Without a heterogeneity bound the clients' functions may
    differ without limit, and so may the worst case: the solvers then find a ray, fail, or
    return a solution too large for its checks; the missing bound is named."""
    unbounded = args is not None and args.zeta2 is None and args.beta2 is None
    if unbounded and args.clients > 1:
        return (
            f"PEP unbounded: with {args.clients} clients and no heterogeneity bound, the "
            "clients' functions may differ without limit and so may the worst case (no "
            "solver finds a finite value). Name the missing bound: --zeta2 Z "
            "(||grad f_i(x*)||^2 <= Z), or --beta2 B --zeta2 Z "
            "(sum_i a_i ||grad f_i - grad F||^2 <= B ||grad F||^2 + Z) (no value reported)"
        )
    return f"PEP {result.status}: {result.message} (no value reported)"


def _report(result, bound: float | None, replayed: bool, args=None) -> int:
    from fedtheory.pep.certificate import certified

    print("\n".join(_setting_lines(result)))
    print(f"SDP: Gram matrix {result.gram_dim}x{result.gram_dim}, {result.constraints} constraints")
    if not result.ok:
        print(_no_value(result, args))
        return 1
    c = result.certificate
    tol = c.tolerance
    relaxed = (
        " (a condition imposed at evaluated points only: upper bound)" if result.relaxed else ""
    )
    print(f"exact worst case: {certified(result.value, tol)} (to {tol:.1g}){relaxed}")
    print(
        f"certificate: verified ({result.solver}, solver tolerance {result.tolerance:g}); "
        f"|primal - dual| {abs(c.gap):.1g}, largest check error {c.error:.1g}, tr G "
        f"{c.scale:.3g}: the value is certain to {tol:.1g}"
    )
    if replayed:
        from fedtheory.pep.replay import replay

        r = replay(result)
        how = "interpolating functions" if r.fit_residual is None else "explicit quadratics"
        within = "within" if r.difference <= tol else "NOT within"
        print(
            f"replayed in the simulator ({how}): {certified(r.value, tol)} (|difference| "
            f"{r.difference:.1g}, {within} the certificate's tolerance)"
        )
    if bound is not None:
        ratio = bound / result.value if result.value > 0 else float("inf")
        shown = certified(ratio, ratio * tol / result.value) if result.value > 0 else "inf"
        shown = f"{float(shown):.6g}" if result.value > 0 else shown
        print(f"bound {bound:.10g}; bound / exact worst case = {shown}")
    return 0


def _pep(args) -> int:
    from fedtheory.errors import ParameterError

    try:
        from fedtheory.pep import worst_case
    except ImportError as err:
        print(f"fedtheory: {err}", file=sys.stderr)
        return 2
    try:
        if args.method == "fedlaavg-theorem4":
            from fedtheory.pep.catalogue import fedlaavg_theorem4

            result, bound = fedlaavg_theorem4(t1=args.t1, t2=args.t2, T=args.rounds, x0=args.x0)
            print(
                "FedLaAvg on Example 1 (Yan et al. 2020, arXiv Theorem 1; journal App. G "
                "Theorem 4): min_{t<=T} F(x_t) - F*, which is min_t ||x_t - x*||^2 here "
                "(F the mean of f_i = ||x - e_i||^2), over ||e1 - e2|| <= 1, "
                "||x0 - x*|| <= |x0 - 1/2|, gamma = 1/(2 sqrt T)"
            )
            return _report(result, bound, True)
        algorithm, fclass, part, initial, het = _setting(args)
        result = worst_case(
            algorithm, fclass, part, initial=initial, heterogeneity=het, criterion=args.criterion
        )
        replayed = result.ok and args.fclass != "nonconvex"
        return _report(result, args.bound, replayed, args)
    except ParameterError as err:
        print(f"fedtheory: {err}", file=sys.stderr)
        return 2


DESCRIPTION = """\
Exact worst case of an FL method by performance estimation (PEP; Drori & Teboulle 2014,
Taylor, Hendrickx & Glineur 2017, solved with PEPit): the largest value of the criterion
over every set of client functions of the class, every initial point within the initial
bound and the heterogeneity condition, under a participation pattern (a fixed mask or all
masks of a Bernoulli pattern, the expectation exact). Prints the setting, the SDP's size,
the value with its solver certificate, the worst-case instance replayed in the simulator
(convex classes) and, with --bound, the bound's ratio to the exact worst case.
Values are printed with the digits their certificate supports (the tolerance in brackets).
Without --zeta2 (no heterogeneity bound) the worst case over several clients is unbounded:
the command says so and names the missing bound. fedawe is FedAWE (Xiang et al. 2024) with
--server-lr and the left sides of its statements as criteria (fedawe_zbar, fedawe_xbar,
fedawe_consensus_x, fedawe_consensus_z). fedlaavg-theorem4 compares FedLaAvg's Theorem 4
(Yan et al. 2020) on Example 1 with its exact worst case. Exit status 1 if no value is
printed (unbounded, or the solver failed), 2 on bad input. Needs the extra fedtheory[pep]."""

EPILOG = """\
example: fedtheory pep fedavg --class quadratic --clients 2 -T 4 -E 2 \\
    --pattern blocks:2,1 --zeta2 1 --lr 0.2"""


def add_parsers(sub) -> None:
    import argparse

    p = sub.add_parser(
        "pep",
        help="exact worst case of FedAvg / MIFA / FedLaAvg / FedAWE under a participation pattern "
        "(performance estimation with PEPit; exit 1 if the solver fails)",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "method",
        choices=METHODS,
        help="fedavg (with --weights), mifa, fedlaavg (with --per-round), fedawe (with "
        "--server-lr), or "
        "fedlaavg-theorem4: FedLaAvg Theorem 4 on Example 1 against its exact worst case "
        "(uses only -T, --t1, --t2, --x0)",
    )
    p.add_argument(
        "--class",
        dest="fclass",
        choices=CLASSES,
        default="strongly-convex",
        help="the clients' functions: strongly-convex (L-smooth, mu-strongly convex), "
        "quadratic (quadratics with Hessian between mu I and L I; the worst case is replayed "
        "as explicit quadratics), nonconvex (L-smooth; criterion min_grad_norm, initial kind gap) "
        "(default strongly-convex)",
    )
    p.add_argument("--mu", type=float, default=0.5, help="strong convexity mu (default 0.5)")
    p.add_argument("--L", type=float, default=1.0, help="smoothness L (default 1)")
    p.add_argument("--clients", type=int, default=2, help="number of clients N (default 2)")
    p.add_argument("--rounds", "-T", type=int, default=4, help="rounds T (default 4)")
    p.add_argument(
        "--local-steps", "-E", type=int, default=1, help="local steps E per round (default 1)"
    )
    p.add_argument("--lr", type=float, default=0.1, help="client step size (default 0.1)")
    p.add_argument(
        "--pattern",
        default="alternating",
        help="participation: full, alternating, blocks:T1,T2,... (client i alone for Ti "
        "rounds, in turn), bernoulli:P1,... (client i with probability Pi; all masks "
        "enumerated) or mask:ROW,ROW,... (one 0/1 row per round) (default alternating)",
    )
    p.add_argument(
        "--weights",
        default="uniform",
        help="FedAvg's aggregation: uniform (over participants), all (1/N), fedau:P1,... "
        "(1/(N p_i)) or q:Q1,... (fixed weights) (default uniform)",
    )
    p.add_argument(
        "--per-round", type=int, default=1, help="FedLaAvg's K: clients per round (default 1)"
    )
    p.add_argument(
        "--server-lr", type=float, default=1.0, help="FedAWE's server rate eta_g (default 1)"
    )
    p.add_argument(
        "--zeta2",
        type=float,
        default=None,
        help="heterogeneity at the optimum: ||grad f_i(x*)||^2 <= zeta2 (default: none)",
    )
    p.add_argument(
        "--beta2",
        type=float,
        default=None,
        help="with --zeta2: sum_i a_i ||grad f_i - grad F||^2 <= beta2 ||grad F||^2 + zeta2 "
        "(default: none)",
    )
    p.add_argument(
        "--initial",
        type=float,
        default=1.0,
        help="the initial bound: ||x0 - x*||^2 or F(x0) - F* at most this (default 1)",
    )
    p.add_argument(
        "--initial-kind",
        choices=("distance", "gap"),
        default="distance",
        help="what --initial bounds: distance ||x0 - x*||^2 or gap F(x0) - F* (default "
        "distance; gap for --class nonconvex)",
    )
    p.add_argument(
        "--criterion",
        choices=CRITERIA,
        default="distance",
        help="what is maximised: distance ||x_T - x*||^2, gap F(x_T) - F*, min_gap "
        "min_{t<=T} F(x_t) - F*, min_grad_norm min_{t<=T} ||grad F(x_t)||^2 (default "
        "distance; min_grad_norm is the only one for --class nonconvex); for fedawe also "
        "the left sides of its statements: fedawe_zbar (1/T) sum_t ||grad F(zbar^t)||^2 "
        "(Theorem 1), fedawe_xbar (Corollary 2), fedawe_consensus_x (Corollary 3), "
        "fedawe_consensus_z (Lemma 6)",
    )
    p.add_argument(
        "--bound",
        type=float,
        default=None,
        help="a bound on the criterion: prints bound / exact worst case (default: none)",
    )
    p.add_argument(
        "--t1", type=int, default=2, help="fedlaavg-theorem4: client 1's block t1 (default 2)"
    )
    p.add_argument(
        "--t2", type=int, default=1, help="fedlaavg-theorem4: client 2's block t2 (default 1)"
    )
    p.add_argument(
        "--x0",
        type=float,
        default=3.0,
        help="fedlaavg-theorem4: the initial point x0 (e1 = 0, e2 = 1) (default 3)",
    )
    p.set_defaults(func=_pep)
