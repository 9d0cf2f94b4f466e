"""The installed package: what `pip install .` puts into an environment, and what
`pip uninstall` would leave behind after fedtheory's compiled kernels have run."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """``pip install --no-deps --target`` of this repository (a wheel built by pip)."""
    target = tmp_path_factory.mktemp("site")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--disable-pip-version-check",
            "--no-compile",
            "--target",
            str(target),
            str(REPO),
        ],
        check=True,
    )
    return target


def test_every_package_folder_is_listed_in_pyproject():
    try:
        import tomllib
    except ImportError:  # Python 3.10: tomli, a dependency there
        import tomli as tomllib

    listed = set(
        tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    folders = {
        ".".join(p.parent.relative_to(REPO).parts)
        for p in (REPO / "fedtheory").rglob("__init__.py")
    } | {  # validation/ is mapped into the package
        ".".join(("fedtheory", *p.parent.relative_to(REPO).parts))
        for p in (REPO / "validation").rglob("__init__.py")
    }
    assert listed == folders


def test_installed_package_imports_every_layer(installed, tmp_path):
    code = (
        "import fedtheory.validation, fedtheory.tightness, fedtheory.sweep, fedtheory.testing, "
        "fedtheory.cli; print(fedtheory.validation.__file__)"
    )
    env = {**os.environ, "PYTHONPATH": str(installed)}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().startswith(str(installed))


def test_install_has_fedtheory_validation_license_and_no_top_level_validation(installed):
    assert (installed / "fedtheory" / "validation" / "__init__.py").is_file()
    assert (installed / "fedtheory" / "validation" / "ERRATA.md").is_file()
    assert not (installed / "validation").exists()
    (dist,) = installed.glob("fedtheory-*.dist-info")
    assert list(dist.rglob("LICENSE")), "LICENSE is not shipped"
    metadata = (dist / "METADATA").read_text()
    assert "License-Expression: MIT" in metadata and "Classifier: " in metadata


def test_install_ships_its_type_hints(installed):
    assert (installed / "fedtheory" / "py.typed").is_file()  # PEP 561


def test_kernels_cache_outside_the_package_so_uninstall_leaves_nothing(installed, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(PYTHONPATH=str(installed), XDG_CACHE_HOME=str(tmp_path / "cache"))
    code = (
        "import fedtheory.availability as a, fedtheory.problems.fused, fedtheory.compiled; "
        "a.TwoStateMarkov([0.5], 0.5).sample(3); print(a.__file__)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().startswith(str(installed))  # the installed copy ran
    assert list((tmp_path / "cache").rglob("*.nbi")), "no kernel was cached in the user cache"
    (dist,) = installed.glob("fedtheory-*.dist-info")
    with open(dist / "RECORD", newline="") as f:  # what `pip uninstall` removes
        for row in csv.reader(f):
            (installed / row[0]).unlink(missing_ok=True)
    left = [
        p for p in (installed / "fedtheory").rglob("*") if p.is_file() and p.suffix != ".pyc"
    ]  # pip also removes the bytecode of the files it installed
    assert left == [], f"files pip uninstall would leave behind: {left[:5]}"
