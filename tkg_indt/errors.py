"""Errors a user can act on: each names the file, the line (when there is one) and the fix."""
from __future__ import annotations


class TKGError(Exception):
    """Base class of every error the toolkit raises on purpose."""


class DataFormatError(TKGError, ValueError):
    """A data file is malformed. The message names the file, the line and the fix."""

    def __init__(self, path, problem: str, fix: str, line: int | None = None):
        self.path, self.line, self.problem, self.fix = str(path), line, problem, fix
        where = f"{path}, line {line}" if line is not None else f"{path}"
        super().__init__(f"{where}: {problem}. Fix: {fix}")


class UnknownNameError(TKGError, KeyError):
    """An unknown source, benchmark, model or variant name; lists the known ones."""

    def __init__(self, kind: str, name: str, known):
        self.kind, self.name, self.known = kind, name, sorted(known)
        super().__init__(f"unknown {kind} {name!r}; known: {', '.join(self.known)}")

    def __str__(self):  # KeyError would quote the whole message
        return self.args[0]


class MissingDataError(TKGError, FileNotFoundError):
    """Files of a source are not available locally and could not be downloaded."""


class ParameterError(TKGError, ValueError):
    """Inconsistent or out-of-range parameters, raised before any work is done."""
