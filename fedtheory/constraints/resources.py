"""Kinds of machine resources: a memory size in bytes or with a suffix (:class:`Bytes`),
a file or folder path checked before any work (:class:`Location`: exists, writable, not a
folder where a file is meant) and a torch device that is present (:class:`Device`)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from fedtheory.constraints.kind import Constraint, refuse
from fedtheory.constraints.scalars import Integer
from fedtheory.errors import ParameterError


class Bytes(Constraint):
    """A number of bytes: a positive integer or a string with a suffix ``K``, ``M``, ``G``
    or ``T`` (``"8G"``); returned as an int."""

    _SUFFIX = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}

    def __init__(self, *, none: bool = False):
        self.none = none

    def describe(self, args):
        return "a positive number of bytes, optionally with a suffix K, M, G or T (e.g. '8G')"

    def convert(self, value, args):
        if not isinstance(value, str):
            return Integer(1).convert(value, args)
        text = value.strip().upper().removesuffix("B")
        unit = text[-1:] if text[-1:] in self._SUFFIX else ""
        amount = float(text[: len(text) - len(unit)].strip())  # ValueError: refused
        ok = amount > 0 and amount * self._SUFFIX[unit] <= 2**62
        return int(amount * self._SUFFIX[unit]) if ok else None

    def hostile(self):
        return [*super().hostile(), ("zero", 0), ("negative", "-1G"), ("unit", "8X"),
                ("float", 1.5), ("nan", "nan")]  # fmt: skip

    def example(self, args):
        return "1G"


class Location(Constraint):
    """A file or folder path: a non-empty string or an ``os.PathLike``, returned as a
    :class:`pathlib.Path`; ``suffixes``: its allowed endings (``".json"``); ``exists``: a
    file that exists; ``folder=True``: a folder (existing or to create); ``folder="checked"``:
    a folder the callee checks itself (naming the cause), else a file path,
    never an existing folder nor a path under a file; ``writable=True``: a file this process
    can write (its nearest existing folder writable), checked before any work and without
    writing anything."""

    def __init__(self, *, suffixes: tuple[str, ...] = (), exists=False, folder=False,
                 writable=False, none=False):  # fmt: skip
        self.suffixes, self.exists, self.none = suffixes, exists, none
        self.folder, self.writable = folder, writable

    def describe(self, args):
        what = "an existing file" if self.exists else "a path"
        if self.folder:
            what = "a folder path (existing or to create)"
        elif self.writable:
            what = "a file path where a file can be written (not a folder)"
        elif not self.exists:
            what = "a file path (not a folder)"
        ends = f" ending in {' or '.join(self.suffixes)}" if self.suffixes else ""
        return f"{what}{ends} (a non-empty string or an os.PathLike)"

    def convert(self, value, args):
        if isinstance(value, str) and value and "\x00" not in value:
            path = Path(value)
        elif isinstance(value, os.PathLike):
            path = Path(value)
        else:
            return None
        if self.suffixes and path.suffix not in self.suffixes:
            return None
        if self.exists:
            return path if path.is_file() else None
        if self.folder == "checked":  # the callee checks the folder and names the cause
            return path
        above = next(p for p in (path, *path.parents) if p.exists() or p == p.parent)
        if self.folder:
            return path if above.is_dir() else None
        if path.is_dir() or (above != path and not above.is_dir()):
            return None  # a folder, or a path under a file
        if self.writable:
            folder = above if above != path else path.parent
            if (
                not os.access(folder, os.W_OK | os.X_OK)
                or path.exists()
                and not os.access(path, os.W_OK)
            ):
                return None
        return path

    def hostile(self):
        bad = [*super().hostile(), ("empty", ""), ("int", 1), ("bytes", b"x")]
        suffix = "".join(self.suffixes[:1])
        if self.suffixes:
            bad.append(("other suffix", f"x{self.suffixes[0]}.txt"))
        if self.exists:
            bad.append(("missing", str(Path(tempfile.mkdtemp()) / f"x{suffix}")))
        if self.folder == "checked":  # the callee refuses these itself (its own tests)
            return bad
        blocker = Path(tempfile.mkdtemp()) / "a-file"
        blocker.write_text("")
        bad.append(("under a file", str(blocker / f"x{suffix}")))
        if not self.folder:
            bad.append(("folder", Path(tempfile.mkdtemp(suffix=suffix))))
        return bad

    def example(self, args):
        return Path(tempfile.mkdtemp()) / f"example{''.join(self.suffixes[:1])}"


class Device(Constraint):
    """A torch device this machine has: ``None`` (the CPU), a name (``"cpu"``, ``"cuda"``,
    ``"cuda:1"``) or a ``torch.device``; returned as a ``torch.device``."""

    none = True

    def describe(self, args):
        return "None, a torch.device or a device name such as 'cpu' or 'cuda' that this machine has"

    def check(self, value, name, owner, args):
        import torch

        if value is None:
            return torch.device("cpu")
        try:
            dev = torch.device(value) if isinstance(value, (str, torch.device)) else None
        except RuntimeError:
            dev = None
        if dev is None:
            what = self.describe(args).removesuffix(" that this machine has")
            raise refuse(name, owner, what, value)
        if dev.type == "cuda":
            count = torch.cuda.device_count() if torch.cuda.is_available() else 0
            if dev.index is not None and dev.index >= count or count == 0:
                raise ParameterError(
                    f"The '{name}' parameter of {owner} must be a device this machine has "
                    f"({count} CUDA device(s) available). Got {value!r} instead."
                )
            index = torch.cuda.current_device() if dev.index is None else dev.index
            return torch.device("cuda", index)
        if dev.type != "cpu":
            raise ParameterError(
                f"The '{name}' parameter of {owner} must be 'cpu' or a CUDA device. Got "
                f"{value!r} instead."
            )
        return dev

    def hostile(self):
        return [("object", object()), ("unknown", "no-such-device"), ("number", 1.5)]

    def example(self, args):
        return None
