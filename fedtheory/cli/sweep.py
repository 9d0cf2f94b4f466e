"""``fedtheory sweep CONFIG.toml``: a theorem or a validation's measured quantity over a
grid (:mod:`fedtheory.sweep.targets`), written as a table, a per-point summary and a
heatmap or line plot of measured / bound."""

from __future__ import annotations

import io
import sys
from pathlib import Path

from fedtheory.cli.validate import add_executor_arguments


class _Progress:
    """A tqdm bar on stderr; once: what the store held (damaged files, temporaries) and the
    Dask dashboard's address."""

    def __init__(self) -> None:
        self.bar = None

    def __call__(self, p) -> None:
        from tqdm import tqdm

        if self.bar is None:
            for note in p.notes:
                print(note, file=sys.stderr)
            if p.dashboard is not None:
                print(f"{p.where}; dashboard: {p.dashboard}", file=sys.stderr, flush=True)
            if p.reused:
                print(f"{p.reused} of {p.total} tasks reused from an earlier run", file=sys.stderr)
            self.bar = tqdm(total=p.total, initial=p.done, unit="task", file=sys.stderr)
        self.bar.update(p.done - self.bar.n)
        if p.done == p.total:
            self.close()

    def close(self) -> None:
        """End the bar's line (also when the run stops early)."""
        if self.bar is not None:
            self.bar.close()


def _validation_targets():
    """The sweep targets of the validation suite (importing it registers them)."""
    import fedtheory.validation  # noqa: F401
    from fedtheory.sweep.targets import registered

    return registered()


def _sweep(args) -> int:
    from fedtheory.errors import ParameterError
    from fedtheory.sweep.targets import load_config

    try:  # before the heavy imports: a bad or oversized configuration is refused at once
        config = load_config(args.config, targets=_validation_targets)
    except (OSError, ValueError, ParameterError) as error:  # TOMLDecodeError is a ValueError
        print(f"fedtheory: {args.config}: {error}", file=sys.stderr)
        return 2
    from fedtheory.io import atomic_write_bytes
    from fedtheory.sweep import run_sweep
    from fedtheory.sweep.summary import plot_summary, summarise

    out = Path(args.out) if args.out else config.out
    progress = _Progress()
    try:
        table = run_sweep(
            config.fn,
            config.design,
            fixed=config.fixed,
            out=out / "table.csv",
            workers=args.workers,
            scheduler=args.scheduler,
            progress=progress,
        )
    finally:
        progress.close()
    names = config.design.names
    summary = summarise(
        table, names, measured=config.measured, bound=config.bound, inside=config.inside
    )
    atomic_write_bytes(out / "summary.csv", summary.to_csv(index=False).encode())
    written = [out / "table.csv", out / "summary.csv"]
    if len(names) <= 2:
        fig = plot_summary(summary, *names, labels=config.labels, title=config.title)
        for suffix in ("png", "svg"):
            buf = io.BytesIO()
            fig.savefig(buf, format=suffix, dpi=120)
            atomic_write_bytes(out / f"figure.{suffix}", buf.getvalue())
            written.append(out / f"figure.{suffix}")
    else:
        print(f"no figure: {len(names)} swept settings (1 or 2 are drawn)", file=sys.stderr)
    print("wrote " + ", ".join(map(str, written)))
    return 0


def add_parsers(sub) -> None:
    s = sub.add_parser(
        "sweep", help="a theorem or a validation's measured quantity over a grid (TOML)"
    )
    s.add_argument("config", help="TOML file: see fedtheory.sweep.targets")
    s.add_argument("--out", help="output folder (default: the configuration's 'out')")
    add_executor_arguments(s, "points")
    s.set_defaults(func=_sweep)
