"""Files written for a user (`--summary-json`, `export --out`, training exports, reports, JUnit files, built task
files, new packs): each is the earlier file or the new one, never half of one.

A plain `open("w")` truncates the earlier file first: a SIGKILL, a full disk or `ulimit -f` midway leaves a
fragment beside whatever else was written (a dataset card that still counts the rows that are gone). Here
every file goes to a temporary file in its own folder, is flushed to disk, and only then renamed over the
target (a rename within a folder is atomic); several files of one output are all written before the first
rename. An `OSError` is one line naming the file and the cause, and says that the earlier file is unchanged.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from tau_emotion.core.errors import TauError

#: what a file's content may be: text, bytes, or pieces of text written one after another (a large export)
Content = str | bytes | Iterable[str]


class OutputError(TauError):
    """A file for the user cannot be written; the earlier file (if any) is left as it was."""


_CAUSES = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is exhausted",
    errno.EFBIG: "the file is larger than this process may write (a file-size limit, ulimit -f)",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.EROFS: "the file system is read-only",
    errno.ENOENT: "its folder does not exist",
    errno.ENOTDIR: "a part of its path is not a folder",
    errno.EISDIR: "it is a folder",
    errno.EIO: "the disk reported an I/O error",
}


def cause(exc: OSError) -> str:
    """An `OSError` in words a person acts on: 'the disk is full', 'permission denied', ..."""
    return _CAUSES.get(exc.errno or 0) or (exc.strerror or str(exc) or type(exc).__name__)


def _fail(path: Path, existed: bool, exc: OSError) -> OutputError:
    kept = "the earlier file is unchanged" if existed else "nothing was written"
    return OutputError(f"cannot write {path}: {cause(exc)}; {kept}")


def _write_temporary(path: Path, content: Content) -> str:
    """The content in a new temporary file beside `path`, on disk; returns its name."""
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            if isinstance(content, bytes):
                out.write(content)
            elif isinstance(content, str):
                out.write(content.encode("utf-8"))
            else:
                for piece in content:
                    out.write(piece.encode("utf-8"))
            out.flush()
            os.fsync(out.fileno())
        if path.exists():
            os.chmod(temporary, stat.S_IMODE(path.stat().st_mode))
        else:  # mkstemp makes 0600; a new output gets the mode `open()` would give it
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(temporary, 0o666 & ~umask)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return temporary


def _write_stream(path: Path, content: Content) -> None:
    """Write into an existing file that is not a regular one (`/dev/stdout`, a FIFO): it cannot be renamed over
    (as root, replacing `/dev/stdout` would replace the device link itself), so it is written as it is."""
    with open(path, "wb") as out:
        for piece in [content] if isinstance(content, (str, bytes)) else content:
            out.write(piece if isinstance(piece, bytes) else piece.encode("utf-8"))


def write_outputs(files: Mapping[str | Path, Content]) -> None:
    """Write every file of one output, each atomically; all are complete on disk before the first rename.

    A symbolic link is followed (the file it names is replaced, the link stays); an existing target that is not
    a regular file (a device, a FIFO: `--out /dev/stdout`) is written in place."""
    written: list[tuple[str, Path]] = []
    current: Path | None = None
    try:
        for name, content in files.items():
            current = Path(name).expanduser()
            if current.exists() and not current.is_file() and not current.is_dir():  # stat follows links
                _write_stream(current, content)
                continue
            if current.is_symlink():
                current = current.resolve()
            written.append((_write_temporary(current, content), current))
        for temporary, target in written:
            current = target
            os.replace(temporary, target)
    except OSError as exc:
        assert current is not None
        raise _fail(current, current.exists(), exc) from None
    finally:
        for temporary, _ in written:
            Path(temporary).unlink(missing_ok=True)  # only those not renamed are still there


def write_output(path: str | Path, content: Content) -> None:
    """Write one file for the user atomically; an `OSError` is one line (`OutputError`)."""
    write_outputs({path: content})


@contextmanager
def new_folder(target: Path) -> Iterator[Path]:
    """A temporary folder beside `target` to fill; renamed to `target` when the block ends without error, so
    `target` is never there half made. `target` must not exist (the caller refuses an existing one)."""
    target = Path(target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    except OSError as exc:
        raise _fail(target, False, exc) from None
    try:
        yield temporary
        os.rename(temporary, target)
    except OSError as exc:
        raise _fail(target, False, exc) from None
    finally:
        shutil.rmtree(temporary, ignore_errors=True)
