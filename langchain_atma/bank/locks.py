"""Writer locks: one committer per namespace at a time, across threads and processes.

A commit reads the rows it changes, plans, then writes them. Two writers that
interleave those steps on the same rows lose an update (one link is
overwritten) and can leave two live states in one slot. :class:`WriterLock`
serialises them:

* inside one process, a re-entrant thread lock;
* across processes on **one host**, an advisory lock on a small file
  (``flock`` on POSIX, ``msvcrt.locking`` on win32) in a lock directory that
  every writer shares: ``ATMA_LOCK_DIR``, else ``<tempdir>/atma-locks``.

The lock file is named by a hash of the lock key (host scope + namespace), so
writers of different namespaces never wait for each other. The operating system
drops the file lock when its holder dies, so a crashed writer never blocks the
others. Waiting processes announce themselves (a shared lock on a ``.wait``
file next to the lock file), and a holder that would re-take the lock at once
first lets them in, so a back-to-back writer does not starve the others.
Processes on different hosts do not see each other's lock files: they
need an external lock, or a single writer.

Example:
    >>> import tempfile
    >>> from langchain_atma.bank.locks import WriterLock
    >>> lock = WriterLock.for_key("chroma+http://localhost:8000/m|u", tempfile.mkdtemp())
    >>> with lock:
    ...     with lock:  # re-entrant in the holding thread
    ...         pass
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
import threading
import time
import weakref
from pathlib import Path
from types import TracebackType

from langchain_atma.errors import ConcurrentWriteError, ConfigError

__all__ = ["DEFAULT_LOCK_TIMEOUT", "WriterLock", "default_lock_dir"]

DEFAULT_LOCK_TIMEOUT = 60.0
"""Seconds a writer waits for the lock before :class:`ConcurrentWriteError`."""

_POLL_MIN = 0.0005
_POLL_MAX = 0.005
_HANDOFF = 0.01
"""A holder that re-takes the lock right after releasing it, while another
process waits, first pauses this long, so back-to-back writers take turns."""
_RECENT = 0.05


def default_lock_dir() -> Path:
    """``ATMA_LOCK_DIR`` if set, else ``<tempdir>/atma-locks``."""
    env = os.environ.get("ATMA_LOCK_DIR")
    return Path(env) if env else Path(tempfile.gettempdir()) / "atma-locks"


if sys.platform == "win32":  # pragma: no cover - CI runs POSIX only
    import msvcrt

    def _try_lock(fd: int) -> bool:
        try:
            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
            return True
        except OSError:
            return False

    def _block_lock(fd: int) -> None:
        while not _try_lock(fd):
            time.sleep(_POLL_MAX)

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

    def _mark_waiting(fd: int) -> None:
        pass  # no shared locks: waiters are not announced (no hand-off)

    def _unmark_waiting(fd: int) -> None:
        pass

    def _others_waiting(fd: int) -> bool:
        return False

else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            return False

    def _block_lock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX)

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)

    def _mark_waiting(fd: int) -> None:
        # a shared lock on the ".wait" file says "someone waits for the lock"
        fcntl.flock(fd, fcntl.LOCK_SH)

    def _unmark_waiting(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)

    def _others_waiting(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False


class WriterLock:
    """A re-entrant writer lock: a thread lock, plus a file lock when ``path`` is set.

    Use :meth:`for_key` to get the process-wide instance of a key: every bank of
    this process that writes the same (host, namespace) shares it, so the thread
    lock orders them and the file descriptor is opened once.

    Args:
        path: lock file (created if missing); ``None`` for a thread-only lock.
    """

    _instances: weakref.WeakValueDictionary[str, WriterLock] = weakref.WeakValueDictionary()
    _registry_lock = threading.Lock()
    _all: weakref.WeakSet[WriterLock] = weakref.WeakSet()

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self._tlock = threading.RLock()
        self._depth = 0
        self._fd: int | None = None
        self._wait_fd: int | None = None
        self._last_release = -1.0
        WriterLock._all.add(self)

    @classmethod
    def for_key(cls, key: str, lock_dir: str | os.PathLike[str] | None = None) -> WriterLock:
        """The process-wide lock of ``key`` (a string naming host scope and namespace).

        Raises:
            ConfigError: when the lock directory cannot be created.
        """
        folder = Path(lock_dir) if lock_dir is not None else default_lock_dir()
        digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:40]
        path = folder / f"{digest}.lock"
        ident = str(path.absolute())
        with cls._registry_lock:
            lock = cls._instances.get(ident)
            if lock is None:
                _ensure_dir(folder)
                lock = cls(path)
                cls._instances[ident] = lock
            return lock

    # ------------------------------------------------------------------ acquire / release
    def acquire(self, timeout: float | None = DEFAULT_LOCK_TIMEOUT) -> None:
        """Take the lock (re-entrant); wait at most ``timeout`` seconds (None: forever).

        Raises:
            ConcurrentWriteError: the lock was not free within ``timeout``.
        """
        deadline = None if timeout is None else time.monotonic() + max(0.0, timeout)
        if not self._tlock.acquire(timeout=-1 if timeout is None else max(0.0, timeout)):
            raise ConcurrentWriteError(
                f"writer lock {self._name()} still held by another thread after {timeout} s"
            )
        try:
            if self._depth == 0 and self.path is not None:
                self._lock_file(deadline, timeout)
            self._depth += 1
        except BaseException:
            self._tlock.release()
            raise

    def release(self) -> None:
        """Release one level of the lock; the file lock goes with the last one."""
        if self._depth <= 0:
            raise RuntimeError("release of an unheld WriterLock")
        self._depth -= 1
        try:
            if self._depth == 0 and self._fd is not None:
                _unlock(self._fd)
                self._last_release = time.monotonic()
        finally:
            self._tlock.release()

    @property
    def held(self) -> bool:
        """Whether some thread of this process holds the lock."""
        return self._depth > 0

    def __enter__(self) -> WriterLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()

    # ------------------------------------------------------------------ internals
    def _name(self) -> str:
        return str(self.path) if self.path is not None else "(thread lock)"

    def _open(self, path: Path) -> int:
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            return os.open(path, flags, 0o666)
        except PermissionError:
            try:  # a lock file made by another user: a read-only fd can still flock
                return os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            except OSError as exc:
                raise ConfigError(
                    f"cannot open the writer lock file {path}: {exc}; "
                    "set ATMA_LOCK_DIR (or lock_dir=) to a directory every writer can use"
                ) from exc
        except OSError as exc:
            raise ConfigError(
                f"cannot open the writer lock file {path}: {exc}; "
                "set ATMA_LOCK_DIR (or lock_dir=) to a directory every writer can use"
            ) from exc

    def _lock_file(self, deadline: float | None, timeout: float | None) -> None:
        assert self.path is not None
        if self._fd is None or self._wait_fd is None:
            fd = self._open(self.path)
            try:
                wait_fd = self._open(self.path.with_suffix(".wait"))
            except BaseException:
                os.close(fd)
                raise
            self._fd, self._wait_fd = fd, wait_fd
        fd, wait_fd = self._fd, self._wait_fd
        if time.monotonic() - self._last_release < _RECENT and _others_waiting(wait_fd):
            time.sleep(_HANDOFF)  # we just had it and someone waits: their turn first
        if _try_lock(fd):
            return
        _mark_waiting(wait_fd)
        try:
            if deadline is None:
                _block_lock(fd)
                return
            pause = _POLL_MIN
            while True:
                if time.monotonic() >= deadline:
                    raise ConcurrentWriteError(
                        f"writer lock {self.path} still held by another process after "
                        f"{timeout} s; nothing was written (retry, or raise lock_timeout)"
                    )
                time.sleep(pause)
                pause = min(pause * 2, _POLL_MAX)
                if _try_lock(fd):
                    return
        finally:
            _unmark_waiting(wait_fd)

    def __del__(self) -> None:
        for fd in (getattr(self, "_fd", None), getattr(self, "_wait_fd", None)):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass

    def _after_fork_in_child(self) -> None:
        # The child must not share the parent's open file description (flock is
        # per description, so parent and child would not exclude each other), and
        # a thread lock copied while some parent thread held it would never open.
        for fd in (self._fd, self._wait_fd):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._fd = self._wait_fd = None
        self._last_release = -1.0
        self._depth = 0
        self._tlock = threading.RLock()


def _ensure_dir(folder: Path) -> None:
    if folder.is_dir():
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if folder == Path(tempfile.gettempdir()) / "atma-locks":
            try:
                # the default folder is shared by every user of the host, like /tmp
                folder.chmod(0o1777)
            except OSError:
                pass
    except OSError as exc:
        raise ConfigError(
            f"cannot create the writer lock directory {folder}: {exc}; "
            "set ATMA_LOCK_DIR (or lock_dir=) to a writable directory"
        ) from exc


def _reset_after_fork() -> None:
    WriterLock._registry_lock = threading.Lock()
    for lock in list(WriterLock._all):
        lock._after_fork_in_child()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)
