"""Atomic writes: complete files only, created with the user's umask."""

from __future__ import annotations

import os
import stat

import pytest

from fedtheory.io import atomic_write_text


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_atomic_write_follows_the_umask(tmp_path, umask, mode):
    previous = os.umask(umask)
    try:
        atomic_write_text(tmp_path / "sub" / "a.txt", "x")
        atomic_write_text(tmp_path / "sub" / "a.txt", "y")  # replacing keeps the rule
    finally:
        os.umask(previous)
    path = tmp_path / "sub" / "a.txt"
    assert path.read_text() == "y" and stat.S_IMODE(path.stat().st_mode) == mode
    assert [p.name for p in path.parent.iterdir()] == ["a.txt"]  # no temporary left
