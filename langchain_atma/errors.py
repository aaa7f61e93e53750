"""Exception types raised by langchain-atma.

Every error the library raises on purpose derives from :class:`AtmaError`, so a
caller can catch the whole family with one ``except`` clause, or pick the
specific subclass it cares about.

Example:
    >>> from langchain_atma.errors import AtmaError, InvalidRecordError
    >>> issubclass(InvalidRecordError, AtmaError)
    True
"""

from __future__ import annotations

__all__ = [
    "AtmaError",
    "CommitError",
    "ConcurrentWriteError",
    "ConfigError",
    "HostUnavailableError",
    "InputFormatError",
    "InvalidMetadataError",
    "InvalidQueryError",
    "InvalidRecordError",
    "InvalidTimestampError",
    "InvalidVerdictError",
    "JudgeModelError",
    "NamespaceError",
    "RecordNotFoundError",
    "GateError",
    "BenchmarkFormatError",
]


class AtmaError(Exception):
    """Base class of every error raised by langchain-atma."""


class InvalidRecordError(AtmaError, ValueError):
    """A memory record is malformed (empty content, unknown status or link...)."""


class InvalidTimestampError(InvalidRecordError):
    """A timestamp could not be parsed or is not a valid point in time."""


class InvalidMetadataError(InvalidRecordError):
    """Host metadata holds a value the host store cannot keep (nested dict...)."""


class NamespaceError(AtmaError, ValueError):
    """A namespace is missing or malformed, or an operation tried to cross one."""


class RecordNotFoundError(AtmaError, KeyError):
    """A record id (or a link target) does not exist in the namespace."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable.
        return str(self.args[0]) if self.args else "record not found"


class CommitError(AtmaError):
    """A state commit was rejected before anything was written."""


class ConcurrentWriteError(CommitError):
    """Another writer got in the way of a commit; nothing was written.

    Raised when the rows a commit changes were rewritten by another writer
    between the commit's read and its write (a writer that does not share the
    lock, e.g. on another host), or when the writer lock was not free in time.
    Re-read the state and retry.
    """


class InvalidVerdictError(CommitError):
    """A judge verdict is malformed or names records outside the candidate set."""


class HostUnavailableError(AtmaError, ConnectionError):
    """The host store (e.g. a Chroma server) cannot be reached."""


class ConfigError(AtmaError, ValueError):
    """A configuration value (argument, environment variable, file) is invalid."""


class InvalidQueryError(AtmaError, ValueError):
    """A retrieval query or its parameters (k, view...) are invalid."""


class GateError(AtmaError):
    """The proposal gate cannot score a write (mismatched vector shapes)."""


class JudgeModelError(AtmaError):
    """The learned judge's model file is missing, corrupt or does not match its card.

    The message names the file and the command that rebuilds it (``atma judge train``).
    """


class BankNotFoundError(AtmaError, LookupError):
    """A read-only command named a bank, collection or namespace that does not exist.

    The message names what is missing and, for a namespace, the namespaces that exist.
    """


class InputFormatError(AtmaError, ValueError):
    """An input file (conversation, JSONL events) does not follow its format."""


class BenchmarkFormatError(InputFormatError):
    """A benchmark input file does not follow its documented format."""
