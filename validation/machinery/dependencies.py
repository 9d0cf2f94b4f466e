r"""The code a validation's ``compute`` runs, and its digest: the key of the stored data.

The runner reuses a validation's ``data.npz`` only if the code that computed it is
unchanged. That code is found statically:

1. the roots: the module that defines ``check.compute``, and the modules of the functions
   and objects ``compute`` holds (closure cells, defaults, ``functools.partial``
   arguments: a :func:`~fedtheory.validation.custom.theorem_check` holds the user's
   measurement);
2. every ``fedtheory`` module these import, transitively (``import`` statements anywhere
   in a module, inside functions too; ``from package import module`` names the module
   alone, not the package's ``__init__``; a package that loads its modules lazily
   (``import_module``, or the papers' modules of its layer through ``papers.on_register``:
   ``from fedtheory.sim import CaFed``) brings all of them, and so does a module of a
   package that loads the papers' modules of its layer from their records, such as
   ``pep/registry.py`` or ``errata/catalogue.py``; a loader that names a part of the
   records (``paper.errata``, ``export(paper, "errata", ...)``) brings every registered
   paper's modules of that part, wherever they live), leaving out :data:`NOT_COMPUTE`: the verdict
   rules, the plotting style, the report and the runner, which judge and draw but compute
   nothing;
3. each module counted by its syntax tree without docstrings (comments, blank lines and
   formatting never reach the tree), in the root module without the check's own
   ``judge``, ``plot`` and ``notes`` functions, plus the files it names in its package's
   folders (``ERRATA.md`` for the errata check).

So editing a verdict rule, a figure or a docstring re-judges and re-plots from the stored
data, and editing anything ``compute`` may run recomputes. A module without a source file
(a function typed in a notebook) counts by its compiled code.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import marshal
import pkgutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FunctionType
from typing import NamedTuple

from fedtheory.constraints import Instance, declare
from fedtheory.papers import PARTS, discover
from fedtheory.validation.machinery.registry import Check

NOT_COMPUTE = (
    "fedtheory.verdict",
    "fedtheory.validation.machinery.plots",
    "fedtheory.validation.machinery.report",
    "fedtheory.validation.machinery.runner",
    "fedtheory.validation.machinery.registry",
    "fedtheory.validation.machinery.dependencies",
)
"""Modules (and their submodules) that judge, draw or report: never part of a digest."""

_ROOT = "fedtheory"
_LOADS_LAZILY = ("import_module", "on_register")
"""Calls by which a module loads modules its imports do not name."""
_NAMES_A_PART = ("export", "modules")
"""Calls of :mod:`fedtheory.papers` that take a part of the records by name."""


def _constant(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


@declare(check=Instance(Check))
def compute_modules(check: Check) -> list[str]:
    """Names of the modules whose code ``check.compute`` may run (module docstring),
    sorted."""
    return _reachable(_roots(check.compute), _left_out)


@declare(check=Instance(Check))
def drawing_digest(check: Check) -> str:
    """SHA-256 of the code that may draw ``check``'s figure: the module of ``check.plot``,
    the figures' style (:mod:`fedtheory.validation.machinery.plots`) and the ``fedtheory`` modules
    they import, transitively, without docstrings. With the stored data and settings it
    keys the figure, which a rerun redraws only when one of them changed."""
    h = hashlib.sha256()
    roots = {check.plot.__module__, "fedtheory.validation.machinery.plots"}
    for name in _reachable(roots, lambda name: False):
        h.update(name.encode() + b"\0" + _module_digest(name).encode())
    return h.hexdigest()


def _reachable(roots: set[str], left_out: Callable[[str], bool]) -> list[str]:
    """The modules ``roots`` import, transitively, with the roots, sorted; ``left_out``
    ones are not followed."""
    seen: set[str] = set()
    pending = [name for name in roots if not left_out(name)]
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        pending += [m for m in _imports(name) if m not in seen and not left_out(m)]
    return sorted(seen)


@declare(check=Instance(Check))
def compute_digest(check: Check) -> str:
    """SHA-256 of the code ``check.compute`` may run (:func:`compute_modules`), without
    docstrings and without the check's ``judge``, ``plot`` and ``notes``."""
    own = check.compute.__module__
    skipped = tuple(
        fn.__name__
        for fn in (check.judge, check.plot, check.notes)
        if isinstance(fn, FunctionType) and fn.__module__ == own and fn.__qualname__ == fn.__name__
    )
    h = hashlib.sha256()
    for name in compute_modules(check):
        h.update(name.encode() + b"\0")
        h.update(_module_digest(name, skipped if name == own else ()).encode())
    for fn in _functions(check.compute):  # code without a file (a notebook)
        if _source(fn.__module__) is None:
            h.update(marshal.dumps(fn.__code__))
    return h.hexdigest()


def _left_out(name: str) -> bool:
    return any(name == m or name.startswith(m + ".") for m in NOT_COMPUTE)


def _functions(fn: Callable, depth: int = 3) -> Iterator[FunctionType]:
    """``fn`` and the functions it holds (closure cells, defaults, partial arguments)."""
    if isinstance(fn, functools.partial):
        held = [fn.func, *fn.args, *fn.keywords.values()]
    elif isinstance(fn, FunctionType):
        yield fn
        cells = [c.cell_contents for c in fn.__closure__ or () if _filled(c)]
        held = [*cells, *(fn.__defaults__ or ()), *(fn.__kwdefaults__ or {}).values()]
    else:
        return
    if depth > 0:
        for value in held:
            yield from _functions(value, depth - 1)


def _filled(cell) -> bool:
    try:
        cell.cell_contents  # noqa: B018 -- an empty cell raises
    except ValueError:
        return False
    return True


def _roots(compute: Callable) -> set[str]:
    """The modules of ``compute`` and of the functions and objects it holds."""
    roots = {fn.__module__ for fn in _functions(compute)}
    for fn in _functions(compute):
        for cell in fn.__closure__ or ():
            if _filled(cell) and not callable(cell.cell_contents):
                roots.add(type(cell.cell_contents).__module__)
    return {name for name in roots if name in sys.modules and _source(name) is not None}


@functools.cache
def _source(name: str) -> Path | None:
    """The source file of module ``name`` (``None`` without one, or without a module: code
    run by ``exec`` or a doctest has ``__module__`` None)."""
    if not name:
        return None
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.find_spec(name)
        origin = spec.origin if spec is not None else None
    else:
        origin = getattr(module, "__file__", None)
    return Path(origin) if origin and origin.endswith(".py") else None


class _Module(NamedTuple):
    """What the digest needs of one module, from one parse and one walk."""

    imports: tuple[tuple[str, int, tuple[str, ...]], ...]  # module, level (-1: import), names
    lazy: bool  # calls import_module (a lazy package)
    strings: frozenset[str]  # string constants (names of files beside it)
    body: tuple[tuple[str, str], ...]  # (top-level function name or "", ast.dump) in order
    parts: frozenset[str]  # the parts of the papers' records it names (paper.errata, "pep")


_DOCUMENTED = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


@functools.cache
def _parsed(name: str) -> _Module | None:
    path = _source(name)
    if path is None:
        return None
    tree = ast.parse(path.read_bytes(), filename=str(path))
    imports, strings, lazy, parts = [], set(), False, set()
    for node in ast.walk(tree):
        if isinstance(node, _DOCUMENTED) and ast.get_docstring(node, clean=False) is not None:
            node.body = node.body[1:] or [ast.Pass()]  # docstrings are not code
        if isinstance(node, ast.Import):
            imports += [(alias.name, -1, ()) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = tuple(alias.name for alias in node.names)
            imports.append((node.module or "", node.level, names))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            strings.add(node.value)
        elif isinstance(node, ast.Call | ast.Name | ast.Attribute):  # called or passed on
            func = node.func if isinstance(node, ast.Call) else node
            called = getattr(func, "id", getattr(func, "attr", ""))
            lazy |= called in _LOADS_LAZILY
            parts |= {getattr(node, "attr", "")} & set(PARTS)
            if called in _NAMES_A_PART:  # export(paper, "errata", ...), modules("pep")
                parts |= {a.value for a in getattr(node, "args", ()) if _constant(a)} & set(PARTS)
    body = tuple(
        (node.name if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) else "",
         ast.dump(node))
        for node in tree.body
    )  # fmt: skip
    return _Module(tuple(imports), lazy, frozenset(strings), body, frozenset(parts))


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


@functools.cache
def _imports(name: str) -> tuple[str, ...]:
    """The ``fedtheory`` modules that module ``name`` imports (module docstring, 2)."""
    parsed = _parsed(name)
    if parsed is None:
        return ()
    init = _source(name).name == "__init__.py"
    package = name if init else name.rpartition(".")[0]
    found: set[str] = set()
    for module, level, names in parsed.imports:
        if level == -1:
            found.add(module)
            continue
        if level:
            parent = package.rsplit(".", level - 1)[0] if level > 1 else package
            module = f"{parent}.{module}" if module else parent
        if not _ours(module):
            continue
        subs = [f"{module}.{n}" for n in names]
        modules = [m for m in subs if _is_module(m)]
        found.update(modules)
        if len(modules) < len(subs):  # names defined by the package itself
            found.add(module)
    if parsed.lazy and (init or "fedtheory.papers" in found):  # all of the package's modules
        found.update(
            f"{package}.{m.name}" for m in pkgutil.iter_modules([str(_source(name).parent)])
        )
        records = discover().values()
        found.update(m for paper in records for part in parsed.parts for m in getattr(paper, part))
    return tuple(sorted(m for m in found if _ours(m)))


def _ours(name: str) -> bool:
    return name == _ROOT or name.startswith(_ROOT + ".")


@functools.cache
def _module_digest(name: str, skipped: tuple[str, ...] = ()) -> str:
    """SHA-256 of module ``name``'s code (module docstring, 3)."""
    parsed = _parsed(name)
    if parsed is None:
        return ""
    h = hashlib.sha256()
    for function, dump in parsed.body:
        if not function or function not in skipped:
            h.update(dump.encode())
    for path in _named_files(_source(name).parent, parsed.strings):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def _named_files(folder: Path, names: frozenset[str]) -> list[Path]:
    """Files (not Python sources) named in ``names`` in ``folder`` and the package folders
    above it (``validation/errata/check.py`` reads ``validation/ERRATA.md``)."""
    found = []
    while True:
        found += sorted(p for p in folder.iterdir() if p.name in names and p.suffix != ".py")
        if not (folder.parent / "__init__.py").is_file():
            return [p for p in found if p.is_file()]
        folder = folder.parent


def clear_cache() -> None:
    """Forget the sources read (after editing files in a running process)."""
    for cached in (_source, _parsed, _imports, _module_digest):
        cached.cache_clear()
