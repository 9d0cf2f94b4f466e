r"""Where a sweep's results live: one small file per finished task (for resuming), and the
table (CSV or Parquet), each written atomically.

A finished task is saved under a key that hashes its point, replicate, seed and fixed
settings together with the code fingerprint (the ``fedtheory`` and ``fedtheory.validation``
sources, the source file of the swept function) and the library versions: a rerun after an
interruption reuses exactly the tasks computed by the same code with the same libraries,
and a code change or an upgrade is never answered with stale numbers.

Nothing is trusted unchecked: each task's file carries the SHA-256 of its key and its
content, and :func:`load_part` refuses a file that is unreadable, truncated, empty, not
UTF-8 JSON, edited or bit-flipped with :class:`~fedtheory.io.DamagedFileError` naming the
file; the runner then recomputes that task, so a table is only ever built from verified
files and fresh results.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import io
import json
import marshal
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path

from fedtheory.constraints import DefinedFunction, InstanceOf, Location, declare
from fedtheory.errors import ParameterError
from fedtheory.io import DamagedFileError, atomic_write_bytes, atomic_write_text
from fedtheory.sweep.design import Task, canonical

__all__ = ["code_digest", "function_digest", "read_table", "write_table"]

FORMATS = (".csv", ".parquet")
FUNCTION = DefinedFunction()
"""A swept function: defined with def or lambda, so that its source can be hashed (pass
constants through ``fixed=``, not ``functools.partial``)."""
TABLE = InstanceOf("pandas:DataFrame")


@cache
def code_digest() -> str:
    """SHA-256 of every file of the ``fedtheory`` package and of ``fedtheory.validation``
    (installed from the repository's ``validation/`` folder)."""
    roots = []
    for package in ("fedtheory", "fedtheory.validation"):
        roots += importlib.util.find_spec(package).submodule_search_locations
    h = hashlib.sha256()
    for root in dict.fromkeys(Path(r).resolve() for r in roots):
        for path in sorted(root.rglob("*")):
            if path.suffix in (".py", ".md") and "__pycache__" not in path.parts:
                h.update(str(path.relative_to(root)).encode())
                h.update(path.read_bytes())
    return h.hexdigest()


@declare(fn=FUNCTION)
def function_digest(fn: Callable) -> str:
    """SHA-256 of the swept function's qualified name and of its module's source (or of
    its own source where it has no file, as in a notebook, or of its compiled code where
    it has no source)."""
    h = hashlib.sha256(f"{fn.__module__}.{fn.__qualname__}".encode())
    try:
        h.update(Path(inspect.getsourcefile(fn)).read_bytes())
    except (TypeError, OSError):
        try:
            h.update(inspect.getsource(fn).encode())
        except OSError:  # no source at all (exec, python -c): the compiled code
            h.update(marshal.dumps(fn.__code__))
    return h.hexdigest()


def task_key(task: Task, fixed: Mapping, context: Mapping) -> str:
    """The resume key of ``task`` (see the module docstring); ``context`` holds the code
    fingerprint, the function's digest and the library versions."""
    blob = json.dumps(
        {
            "point": canonical(task.point),
            "replicate": task.replicate,
            "seed": task.seed,
            "fixed": json.dumps(dict(fixed), sort_keys=True),
            "context": dict(context),
        },
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:40]


def parts_folder(table: Path) -> Path:
    """The folder of per-task files next to the table ``table`` (``<table>.parts``)."""
    return table.with_name(table.name + ".parts")


def part_checksum(key: str, record: Mapping) -> str:
    """SHA-256 (hex) of a task's key and of its record (canonical JSON, sorted keys)."""
    blob = json.dumps({"key": key, "record": record}, sort_keys=True, allow_nan=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def _rows_of(record: object) -> list[dict]:
    if not isinstance(record, dict) or not isinstance(record.get("result"), list):
        raise ValueError("no result rows")
    rows = record["result"]
    if not rows or not all(isinstance(r, dict) for r in rows):
        raise ValueError("no result rows")
    return rows


def load_part(folder: Path, key: str) -> list[dict] | None:
    """The saved result rows of task ``key``, or ``None`` if it was not finished.

    Raises
    ------
    DamagedFileError
        If the file cannot be read or parsed, has no checksum, or its content or name does
        not match its checksum (edited, bit-flipped, renamed)."""
    path = Path(folder) / f"{key}.json"
    if not path.exists():
        return None
    try:
        saved = json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise DamagedFileError(path, f"unreadable ({type(err).__name__}: {err})") from None
    if not isinstance(saved, dict) or not isinstance(saved.get("checksum"), str):
        raise DamagedFileError(path, "no checksum (written by an older fedtheory?)")
    record = {k: v for k, v in saved.items() if k != "checksum"}
    if saved["checksum"] != part_checksum(key, record):
        raise DamagedFileError(path, "its content does not match its checksum")
    try:
        return _rows_of(record)
    except ValueError as err:
        raise DamagedFileError(path, str(err)) from None


def save_part(folder: Path, key: str, task: Task, result: list[dict]) -> None:
    """Save a finished task's result rows with their :func:`part_checksum` (atomically:
    the file is complete or absent)."""
    record = {"point": task.point, "replicate": task.replicate, "seed": task.seed,
              "result": result}  # fmt: skip
    saved = {**record, "checksum": part_checksum(key, record)}
    atomic_write_text(Path(folder) / f"{key}.json", json.dumps(saved))


def _parquet_engine() -> None:
    if importlib.util.find_spec("pyarrow") is None:
        raise ImportError("Parquet tables need pyarrow: pip install pyarrow (or write .csv)")


@declare(table=TABLE, path=Location(suffixes=FORMATS, writable=True))
def write_table(table, path: str | Path) -> None:
    """Write a DataFrame atomically as CSV or Parquet (by the suffix of ``path``): the whole
    file is encoded in memory first, so a table that cannot be written leaves no file."""
    if path.is_dir():
        raise ParameterError(
            f"The 'path' parameter of write_table must be a file path, not a folder. Got "
            f"'{path}' (a folder) instead."
        )
    if path.suffix == ".parquet":
        _parquet_engine()
        buf = io.BytesIO()
        try:
            table.to_parquet(buf, index=False)
        except (TypeError, ValueError) as err:  # pyarrow's errors of a column's values
            raise ParameterError(
                f"The 'table' parameter of write_table must hold columns Parquet can store. "
                f"Got {type(err).__name__}: {err} instead."
            ) from None
        atomic_write_bytes(path, buf.getvalue())
    else:
        atomic_write_text(path, table.to_csv(index=False))


@declare(path=Location(suffixes=FORMATS, exists=True))
def read_table(path: str | Path):
    """Read a table written by :func:`write_table` (CSV floats parsed round-trip exactly)."""
    import pandas as pd

    if path.suffix == ".parquet":
        _parquet_engine()
    exact = {} if int(pd.__version__.split(".")[0]) >= 3 else {"float_precision": "round_trip"}
    try:  # a binary, truncated or edited file: refused naming it (never pandas' raw error)
        if path.suffix == ".parquet":
            return pd.read_parquet(path)
        return pd.read_csv(path, **exact)  # pandas >= 3 parses floats exactly by default
    except (UnicodeDecodeError, ValueError, OSError) as err:
        reason = " ".join(str(err).split())[:200]
        raise ParameterError(
            f"The 'path' parameter of read_table must name a table written by write_table. "
            f"Got '{path}' ({type(err).__name__}: {reason}) instead."
        ) from None
