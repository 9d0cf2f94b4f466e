"""Layers point down: every import in ``fedtheory/`` and ``validation/`` (function-level
imports included) goes to the importing module's layer or a lower one, with the layers read
from the table of docs/ARCHITECTURE.md; the theorem layer loads no heavy library."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {"fedtheory": ROOT / "fedtheory", "fedtheory.validation": ROOT / "validation"}
DEPRECATED = {"fedtheory/bounds/errata.py": "fedtheory.validation"}
"""Deprecated forwarding modules (removed in 0.3.0, CHANGELOG.md) and the one module each
forwards to: the only imports allowed to go up."""


def layers() -> dict[str, int]:
    """``unit -> layer`` from the "Layers" table of docs/ARCHITECTURE.md."""
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    out = {}
    for level, units in re.findall(r"^\| (\d+) [^|]+\| ([^|]+) \|$", section, flags=re.M):
        for unit in re.findall(r"`(\w+)`", re.sub(r"\([^)]*\)", "", units)):
            out.setdefault(unit, int(level))
    return out


def unit(module: str) -> str | None:
    """The layer unit of a dotted module name (``fedtheory.sim.runner`` -> ``sim``)."""
    parts = module.split(".")
    if parts[0] != "fedtheory":
        return None
    return parts[1] if len(parts) > 1 else "fedtheory"


def modules():
    """``(dotted name, path)`` of every module of the two source trees."""
    for prefix, folder in PACKAGES.items():
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            name = ".".join((prefix, *parts)).removesuffix(".__init__")
            yield name, path


def imports(name: str, path: Path):
    """``(line, imported module)`` for every import statement of a module, anywhere in it."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}".rstrip(".")
            if base == "fedtheory":  # from fedtheory import rng: the unit is the name
                for alias in node.names:
                    yield node.lineno, f"fedtheory.{alias.name}"
            else:
                yield node.lineno, base


def test_every_unit_has_a_layer():
    known = layers()
    missing = sorted({unit(name) for name, _ in modules()} - set(known))
    assert not missing, f"add {missing} to the Layers table of docs/ARCHITECTURE.md"


def test_no_import_goes_up_a_layer():
    known = layers()
    upward = []
    for name, path in modules():
        own = known[unit(name)]
        for line, target in imports(name, path):
            other = unit(target)
            forward = DEPRECATED.get(str(path.relative_to(ROOT))) == target
            if other is not None and other in known and known[other] > own and not forward:
                upward.append(f"{path.relative_to(ROOT)}:{line} ({unit(name)}, layer {own}) "
                              f"imports {target} ({other}, layer {known[other]})")  # fmt: skip
    assert not upward, "imports from a lower layer to a higher one:\n" + "\n".join(upward)


def test_the_walk_sees_function_level_and_relative_imports(tmp_path):
    path = tmp_path / "mod.py"
    path.write_text("def f():\n    from fedtheory.validation import CHECKS\nfrom . import x\n")
    found = [target for _, target in imports("fedtheory.sim.mod", path)]
    assert sorted(found) == ["fedtheory.sim", "fedtheory.validation"]


def test_a_deprecated_path_forwards_with_a_warning():
    from fedtheory.bounds import errata as old
    from fedtheory.validation import errata

    with pytest.warns(DeprecationWarning, match="fedtheory.validation.errata.ERRATA"):
        assert old.ERRATA is errata.ERRATA


@pytest.mark.parametrize("module", ["fedtheory.bounds"])
def test_the_theorem_layer_loads_only_numpy_scipy_sympy(module):
    allowed = {"numpy", "scipy", "sympy", "mpmath", "fedtheory"}  # mpmath: sympy's arithmetic
    code = (
        f"import sys; before = set(sys.modules); import {module}; "
        "new = set(sys.modules) - before; "
        "third = {m.split('.')[0] for m in new} - set(sys.stdlib_module_names); "
        "ours = sorted(m for m in new if m.startswith(('fedtheory.sim', "
        "'fedtheory.validation', 'fedtheory.problems', 'fedtheory.availability'))); "
        "print(sorted(third), ours)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    third, ours = out.stdout.strip().split("] [")
    loaded = set(re.findall(r"'([^']+)'", third))
    assert loaded <= allowed, f"{module} loaded {sorted(loaded - allowed)}"
    assert ours == "]", f"{module} loaded {ours}"


def module_graph(sources: dict[str, Path]) -> dict[str, set[str]]:
    """``module -> modules it imports`` among ``sources`` (dotted name -> path), function-level
    imports included. ``from package import name`` goes to the submodule ``name``, else to
    the module the package's ``__init__`` takes ``name`` from, else to the ``__init__``."""
    reexports = {}  # package -> {name: module its __init__ imports it from}
    for name, path in sources.items():
        if path.name == "__init__.py":
            reexports[name] = {}
            for node in ast.parse(path.read_text(encoding="utf-8")).body:
                if isinstance(node, ast.ImportFrom) and not node.level and node.module in sources:
                    for alias in node.names:
                        reexports[name][alias.asname or alias.name] = node.module
    graph = {name: set() for name in sources}
    for name, path in sources.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                for alias in node.names:
                    sub = f"{node.module}.{alias.name}"
                    owner = reexports.get(node.module, {}).get(alias.name, node.module)
                    targets.append(sub if sub in sources else owner)
            graph[name] |= {t for t in targets if t in sources and t != name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_two_modules_import_each_other():
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    found = circles(module_graph(dict(modules())))
    assert not found, "modules that import each other in a circle:\n" + "\n".join(
        " <-> ".join(c) for c in found
    )


def test_a_planted_circle_is_found(tmp_path):
    (tmp_path / "a.py").write_text("def f():\n    from fedtheory.b import g\n")
    (tmp_path / "b.py").write_text("from fedtheory.a import f\n")
    (tmp_path / "c.py").write_text("from fedtheory.a import f\n")
    sources = {f"fedtheory.{n}": tmp_path / f"{n}.py" for n in "abc"}
    assert circles(module_graph(sources)) == [["fedtheory.a", "fedtheory.b"]]
    (tmp_path / "b.py").write_text("x = 1\n")
    assert circles(module_graph(sources)) == []
