"""``fedtheory pep``: exact worst case of an FL method under a participation pattern
(performance estimation; Drori & Teboulle 2014, Taylor, Hendrickx & Glineur 2017), its
certificate, the replayed instance and a bound's ratio."""

from __future__ import annotations

import argparse
import sys

SHARED = ("fedavg", "mifa")
"""The simulator's own methods; the papers' methods and statements (their ``command``) are
read from :mod:`fedtheory.pep.registry` when the command runs, with their own options."""
CLASSES = ("strongly-convex", "quadratic", "nonconvex")


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
    from fedtheory.sim import MIFA, FedAvg

    training = {"local_steps": args.local_steps, "lr": args.lr}
    algorithm = {
        "fedavg": lambda: FedAvg(_aggregator(args.weights, args.clients), **training),
        "mifa": lambda: MIFA(**training),
    }.get(args.method, lambda: _commands()[args.method].build(args))()
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


def _commands() -> dict:
    """The papers' methods and statements by their name in ``fedtheory pep`` (records' order)."""
    from fedtheory.pep import registry

    found = [*registry.methods().values(), *registry.statements().values()]
    return {entry.command: entry for entry in found if entry.command}


def _own_options(args) -> argparse.Namespace:
    """``args`` with the options of the paper's method or statement ``args.method`` parsed
    from what the shared parser left (``args.rest``); an unknown method or option is a
    ParameterError naming the valid ones."""
    from fedtheory.errors import ParameterError

    commands = _commands()
    if args.method not in (*SHARED, *commands):
        listed = ", ".join(
            f"{name} ({' '.join(f for flags, _ in entry.options for f in flags) or 'no options'})"
            for name, entry in commands.items()
        )
        raise ParameterError(
            f"The 'method' parameter of fedtheory pep must be fedavg, mifa or a registered "
            f"paper's method or statement: {listed}. Got {args.method!r} instead."
        )
    own = argparse.ArgumentParser(prog=f"fedtheory pep {args.method}", add_help=False)
    for flags, kwargs in commands[args.method].options if args.method in commands else ():
        own.add_argument(*flags, **kwargs)
    parsed, unknown = own.parse_known_args(args.rest)
    if unknown:
        allowed = [
            f for flags, _ in getattr(commands.get(args.method), "options", ()) for f in flags
        ]
        raise ParameterError(
            f"The options of fedtheory pep {args.method} must be the shared ones or "
            f"{allowed or 'none of its own'}. Got {unknown} instead."
        )
    return argparse.Namespace(**{**vars(args), **vars(parsed)})


def _pep(args) -> int:
    from fedtheory.errors import ParameterError

    try:
        from fedtheory.pep import worst_case
    except ImportError as err:
        print(f"fedtheory: {err}", file=sys.stderr)
        return 2
    try:
        args = _own_options(args)
        from fedtheory.pep.registry import Statement

        statement = _commands().get(args.method)
        if isinstance(statement, Statement):  # a paper's statement against its worst case
            result, bound, heading = statement.run(args)
            print(heading)
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
the command says so and names the missing bound. Besides fedavg and mifa, METHOD is a
registered paper's method (with its own options, and the left sides of its statements as
criteria) or one of its statements compared with its exact worst case, as the paper's PEP
modules name them (docs/pep.md lists the package's); an unknown METHOD, option or
criterion is refused with the valid ones. Exit status 1 if no value is printed (unbounded,
or the solver failed), 2 on bad input. Needs the extra fedtheory[pep]."""

EPILOG = """\
example: fedtheory pep fedavg --class quadratic --clients 2 -T 4 -E 2 \\
    --pattern blocks:2,1 --zeta2 1 --lr 0.2"""


def add_parsers(sub) -> None:
    import argparse

    p = sub.add_parser(
        "pep",
        help="exact worst case of FedAvg / MIFA / a paper's method under a participation "
        "pattern (performance estimation with PEPit; exit 1 if the solver fails)",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "method",
        help="fedavg (with --weights), mifa, or a registered paper's method or statement "
        "with its own options (the description lists the package's)",
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
        default="distance",
        help="what is maximised: distance ||x_T - x*||^2, gap F(x_T) - F*, min_gap "
        "min_{t<=T} F(x_t) - F*, min_grad_norm min_{t<=T} ||grad F(x_t)||^2 (default "
        "distance; min_grad_norm is the only one for --class nonconvex); for a paper's "
        "method also the left sides of its statements (named by its PEP module)",
    )
    p.add_argument(
        "--bound",
        type=float,
        default=None,
        help="a bound on the criterion: prints bound / exact worst case (default: none)",
    )
    p.set_defaults(func=_pep, rest=[])
