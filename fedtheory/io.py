"""File output that loses nothing and trusts nothing it did not check.

* Atomic writes: a result file is either complete or absent, never half-written; the
  temporary files a killed process leaves behind (``.<name>.<random>.tmp``) are removed by
  :func:`remove_temporaries` on the next run.
* Checked data files: :func:`save_npz` stores a SHA-256 checksum of every array (name,
  dtype, shape and bytes) next to them, and :func:`load_npz` refuses a file that is
  truncated, empty, garbage, bit-flipped or edited with :class:`DamagedFileError` (never a
  ``BadZipFile``/``EOFError``/``KeyError`` from the zip reader).
* One run per output folder: :func:`folder_lock` holds an exclusive lock (``flock`` on
  ``<folder>/.lock``, released by the operating system when its process ends, even killed)
  and a second run is refused with :class:`FolderLockedError` naming the holder.
* Files are created with mode ``0o666`` filtered by the process umask, like ``open(path,
  "w")`` would (``0o644`` under the usual umask 022), so that a report written on a shared
  filesystem is readable by the others whom the user's umask lets read it.
* A user's Python file (``fedtheory validate --module``, ``fedtheory tightness --module``)
  is imported by :func:`import_file` with its folder on ``sys.path``, so that it can import
  its sibling files.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import os
import secrets
import socket
import sys
import time
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from fedtheory.constraints import Either, Instance, Location, MappingOf, Text, declare
from fedtheory.errors import FedTheoryError

CHECKSUM_KEY = "__checksum__"
"""Name of the array holding the checksum in a file written by :func:`save_npz`."""

_TMP_SUFFIX = ".tmp"


class DamagedFileError(FedTheoryError):
    """A data file cannot be trusted: unreadable, without checksum, or its arrays do not
    match their checksum."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path, self.reason = Path(path), reason
        super().__init__(f"{path} is damaged or was edited: {reason}.")

    def __reduce__(self):
        return (type(self), (self.path, self.reason))


class FolderLockedError(FedTheoryError):
    """Another run holds the lock of an output folder (see :func:`folder_lock`)."""

    def __init__(self, folder: Path, holder: str) -> None:
        self.folder, self.holder = Path(folder), holder
        super().__init__(
            f"{folder} is in use by another fedtheory run ({holder}); wait for it to finish "
            "or choose another output folder."
        )

    def __reduce__(self):
        return (type(self), (self.folder, self.holder))


LOCK_NAME = ".lock"
"""The lock file of an output folder (kept: removing it would let two runs lock two files)."""


def _try_lock(fd: int) -> bool:
    """Take an exclusive, non-blocking lock on the open file ``fd``; ``False`` if held."""
    if sys.platform == "win32":  # pragma: no cover - Windows
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


@contextmanager
@declare(folder=Location(folder=True))
def folder_lock(folder: Path) -> Iterator[Path]:
    """Hold the lock of ``folder`` (created if needed) while the block runs.

    The lock file records the holder (process id, host, command, start time) for the
    message a second run gets; the operating system releases the lock when the holder
    exits, however it exits, so a killed run never leaves the folder locked.

    Raises
    ------
    FolderLockedError
        If another process holds the lock.
    """
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOCK_NAME
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        if not _try_lock(fd):
            try:
                holder = json.loads(path.read_text(encoding="utf-8"))
                who = (
                    f"process {holder['pid']} on {holder['host']}, "
                    f"'{holder['command']}', since {holder['since']}"
                )
            except (OSError, ValueError, KeyError, TypeError):
                who = "holder unknown"
            raise FolderLockedError(folder, who)
        record = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "command": " ".join(sys.argv) or sys.executable,
            "since": time.strftime("%Y-%m-%d %H:%M:%S"),
        }
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, json.dumps(record).encode())
        yield path
    finally:
        os.close(fd)  # releases the lock


@declare(path=Location(writable=True), data=Instance(bytes))
def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder + rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.{secrets.token_hex(8)}{_TMP_SUFFIX}"
    # os.open applies the umask to 0o666 (tempfile.mkstemp would force 0o600)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@declare(path=Either(Instance(Path), Text()), name=Text(), owner=Text())
def writable_file(path: Path, name: str, owner: str) -> Path:
    """``path`` once a file can be written there, checked before any work: not a folder, its
    folder created if missing and a probe file written and removed in it; else a
    :class:`~fedtheory.errors.ParameterError` naming ``name`` of ``owner``."""
    from fedtheory.errors import ParameterError

    def refuse(why: str):
        return ParameterError(
            f"The '{name}' parameter of {owner} must be a file path where a file can be "
            f"written. Got '{path}' ({why}) instead."
        )

    path = Path(path)  # any path: the checks below name the user's parameter
    if path.is_dir():
        raise refuse("a folder")
    above = next(p for p in path.parents if p.exists() or p == p.parent)
    if above.exists() and not above.is_dir():
        raise refuse(f"'{above}' is a file, not a folder")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        probe = path.parent / f".{secrets.token_hex(8)}{_TMP_SUFFIX}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as err:
        raise refuse(f"{type(err).__name__}: {err.strerror or err}") from None
    return path


@declare(path=Location(writable=True), text=Instance(str))
def atomic_write_text(path: Path, text: str) -> None:
    """Text version of :func:`atomic_write_bytes` (UTF-8)."""
    atomic_write_bytes(path, text.encode("utf-8"))


@declare(folder=Location(folder=True), name=Instance(str))
def remove_temporaries(folder: Path, name: str = "") -> list[Path]:
    """Delete the temporary files :func:`atomic_write_bytes` left in ``folder`` (not its
    subfolders) when its process was killed -- only those of the file ``name`` if given;
    returns what was removed."""
    if not folder.is_dir():
        return []
    removed = []
    pattern = f".{name}.*{_TMP_SUFFIX}" if name else f".*{_TMP_SUFFIX}"
    for path in sorted(folder.glob(pattern)):
        if path.is_file():
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed


@declare(arrays=MappingOf(plural="arrays", names=True))
def checksum(arrays: dict[str, np.ndarray]) -> str:
    """SHA-256 (hex) of the arrays' names, dtypes, shapes and bytes, in name order."""
    h = hashlib.sha256()
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(f"{name}\0{a.dtype.str}\0{a.shape}\0".encode())
        h.update(a.tobytes())
    return h.hexdigest()


@declare(path=Location(writable=True), arrays=MappingOf(plural="arrays", names=True))
def save_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """Write ``arrays`` (no pickled objects) and their :func:`checksum` to one compressed
    ``.npz`` file, atomically."""
    arrays = {k: np.asarray(v) for k, v in arrays.items()}
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays, **{CHECKSUM_KEY: np.array(checksum(arrays))})
    atomic_write_bytes(path, buf.getvalue())


_UNREADABLE = (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, zlib.error)


@declare(path=Location())
def load_npz(path: Path) -> dict[str, np.ndarray]:
    """The arrays of a file written by :func:`save_npz`, after checking their checksum.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    DamagedFileError
        If it cannot be read, has no checksum or its arrays do not match it."""
    if not path.exists():
        raise FileNotFoundError(path)
    try:
        with open(path, "rb") as f:  # closed even when numpy fails half-way
            loaded = np.load(f, allow_pickle=False)
            if not isinstance(loaded, np.lib.npyio.NpzFile):
                raise DamagedFileError(path, "not an .npz archive")
            with loaded as z:
                arrays = {k: z[k] for k in z.files}
    except _UNREADABLE as err:
        raise DamagedFileError(path, f"unreadable ({type(err).__name__}: {err})") from None
    stored = arrays.pop(CHECKSUM_KEY, None)
    if stored is None:
        raise DamagedFileError(path, "no checksum (written by an older fedtheory?)")
    if str(stored) != checksum(arrays):
        raise DamagedFileError(path, "its arrays do not match their checksum")
    return arrays


@declare(path=Location(exists=True), name=Text(), owner=Text())
def read_text(path: Path, name: str, owner: str) -> str:
    """The UTF-8 text of the file ``path``; a file that is not UTF-8 text (binary, cut in a
    character) is refused with a :class:`~fedtheory.errors.ParameterError` naming ``name``
    of ``owner`` and the file."""
    from fedtheory.errors import ParameterError

    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise ParameterError(
            f"The '{name}' parameter of {owner} must name a UTF-8 text file. Got '{path}' "
            f"(byte {err.start} is not UTF-8) instead."
        ) from None


@declare(path=Location(exists=True), name=Text(), owner=Text())
def read_json(path: Path, name: str, owner: str) -> object:
    """The JSON value in the file ``path``; a binary, truncated or malformed file is refused
    with a :class:`~fedtheory.errors.ParameterError` naming ``name`` of ``owner``, the file
    and where its JSON stops (never a raw ``JSONDecodeError``)."""
    from fedtheory.errors import ParameterError

    text = read_text(path, name, owner)
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise ParameterError(
            f"The '{name}' parameter of {owner} must name a JSON file. Got '{path}' "
            f"({err.msg} at line {err.lineno}, column {err.colno}) instead."
        ) from None


@declare(path=Location(suffixes=(".py",), exists=True), owner=Text(), prefix=Text())
def import_file(path, owner: str, prefix: str):
    """Import the Python file ``path`` as a fresh module named ``prefix`` + a digest of its
    resolved path, with its folder first on ``sys.path`` during the import (so it can import
    its siblings); return the module. ``owner`` names the caller in the error message."""
    file = path
    try:  # a binary, truncated or mistyped file: refused naming it, before it runs
        compile(file.read_bytes(), str(file), "exec")
    except (SyntaxError, ValueError) as err:
        from fedtheory.errors import ParameterError

        where = f" line {err.lineno}" if getattr(err, "lineno", None) else ""
        raise ParameterError(
            f"The 'path' parameter of {owner} must be a Python file that compiles. Got "
            f"'{file}' ({type(err).__name__}{where}: {getattr(err, 'msg', err)}) instead."
        ) from None
    digest = hashlib.sha256(str(file.resolve()).encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(f"{prefix}{digest}", file)
    module = importlib.util.module_from_spec(spec)
    folder = str(file.resolve().parent)
    sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(folder)
    return module
