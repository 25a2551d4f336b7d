"""Every file `tau` writes for a user survives a kill mid-write and a file-size limit: the earlier file stays
byte-identical and the error is one line naming the file and the cause (issue 35 item 1).

Each writer runs as a real `tau` process twice over an earlier output: once SIGKILLed in the middle of
writing (a child that kills itself after half of the first large write to the output's temporary file;
the old `open("w")` writers never write through one, so they overwrote the file and fail here), once
under a file-size limit (`ulimit -f` in bash, or `RLIMIT_FSIZE` set once the database is read, for outputs
smaller than the 40 KiB SQLite itself needs).
"""

from __future__ import annotations

import hashlib
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

#: a `tau` process whose first large write into a temporary output file stops halfway with SIGKILL
DIE_MID_WRITE = """
import os, signal, sys
_fdopen = os.fdopen
class Dying:
    def __init__(self, f):
        self.f = f
    def write(self, data):
        if len(data) > 64:
            self.f.write(data[: len(data) // 2]); self.f.flush(); os.kill(os.getpid(), signal.SIGKILL)
        return self.f.write(data)
    def __getattr__(self, name):
        return getattr(self.f, name)
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        self.f.close()
def fdopen(fd, *args, **kwargs):
    f = _fdopen(fd, *args, **kwargs)
    return Dying(f) if os.readlink(f"/proc/self/fd/{fd}").endswith(".tmp") else f
os.fdopen = fdopen
from tau_emotion.core.cli import main
sys.argv[0] = "tau"
main()
"""
#: a `tau` process that may write at most 200 bytes per file once MODULE.ATTR (the step before the output is
#: written: the run or the gate's reading is done) has returned; for outputs smaller than SQLite's own files
LIMIT_AFTER = """
import importlib, resource
module = importlib.import_module("{module}")
_step = module.{attr}
def step(*args, **kwargs):
    out = _step(*args, **kwargs)
    resource.setrlimit(resource.RLIMIT_FSIZE, (200, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
    return out
module.{attr} = step
from tau_emotion.core.cli import main
main()
"""
#: a `tau new-pack` that dies once the templates are written, before the database is generated
DIE_IN_NEW_PACK = """
import os, runpy, signal, sys
runpy.run_path = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)
from tau_emotion.core.cli import main
main()
"""
MAIN = "from tau_emotion.core.cli import main; main()"


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def tau(cwd: Path, *args: str, code: str = MAIN, limit_kib: int | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TAU_DB": str(cwd / "runs.db"), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.pop("TAU_PLUGINS", None)
    command = [sys.executable, "-c", code, *args]
    if limit_kib is not None:
        command = ["bash", "-c", f'ulimit -f {limit_kib}; exec "$@"', "bash", *command]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two stored runs of the mock domain with the emotion plugin (their summaries are ~50 KB)."""
    where = tmp_path_factory.mktemp("outputs")
    for agent in ("oracle", "asker"):
        done = tau(where, "run", "--plugins", "mock,emotion", "--agent", agent, "--trials", "20")
        assert done.returncode == 0, done.stderr
    with sqlite3.connect(where / "runs.db") as db:
        names = [r[0] for r in db.execute("SELECT run_id FROM runs ORDER BY created")]
    return where, names


def _one_line(err: str, path: str, why: str) -> None:
    lines = [line for line in err.splitlines() if line.startswith("Error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert f"cannot write {path}" in lines[0] and why in lines[0] and "unchanged" in lines[0], err


def _check_writer(where: Path, target: str, first: list[str], again: list[str], limit_kib: int = 44,
                  limit_after: tuple[str, str] | None = None) -> None:
    """`first` writes `target`; `again` (a different output) killed mid-write and under `ulimit -f` leaves it."""
    made = tau(where, *first)
    assert made.returncode == 0, made.stderr
    before = digest(where / target)
    killed = tau(where, *again, code=DIE_MID_WRITE)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert digest(where / target) == before
    def temporaries() -> set[str]:
        return {p.name for p in where.iterdir() if p.name.startswith(f".{target}.")}

    left_by_the_kill = temporaries()  # a SIGKILL leaves its temporary file behind (nothing runs after it)
    limited = tau(where, *again, limit_kib=limit_kib) if limit_after is None else \
        tau(where, *again, code=LIMIT_AFTER.format(module=limit_after[0], attr=limit_after[1]))
    assert limited.returncode == 1
    _one_line(limited.stderr, target, "file-size limit")
    assert digest(where / target) == before
    assert temporaries() == left_by_the_kill  # an error cleans up its own temporary file
    rewritten = tau(where, *again)  # and the same command, unhindered, does write a different file
    assert rewritten.returncode == 0, rewritten.stderr
    assert digest(where / target) != before


@pytest.mark.slow
def test_summary_json(runs):
    where, (a, b) = runs
    _check_writer(where, "summary.json", ["run", "--resume", a, "--summary-json", "summary.json"],
                  ["run", "--resume", b, "--summary-json", "summary.json"],
                  limit_after=("tau_emotion.core.cli", "execute_run"))  # the run's own database writes come first


def test_export(runs):
    where, (a, b) = runs
    _check_writer(where, "trials.jsonl", ["export", a, "--out", "trials.jsonl"], ["export", b, "--out", "trials.jsonl"])


@pytest.mark.slow
def test_report(runs):
    where, (a, b) = runs
    _check_writer(where, "report.html", ["report", a, "--out", "report.html"], ["report", b, "--out", "report.html"])


@pytest.mark.slow
def test_gate_junit(runs):
    where, (a, b) = runs
    made = tau(where, "gate", a, b, "--junit", "gate.xml")
    assert made.returncode == 0, made.stderr
    before = digest(where / "gate.xml")
    killed = tau(where, "gate", b, a, "--junit", "gate.xml", code=DIE_MID_WRITE)
    assert killed.returncode == -signal.SIGKILL and digest(where / "gate.xml") == before
    limited = tau(where, "gate", b, a, "--junit", "gate.xml", code=LIMIT_AFTER.format(module="tau_emotion.plugins.report.compare", attr="junit"))
    assert limited.returncode == 1
    _one_line(limited.stderr, "gate.xml", "file-size limit")
    assert digest(where / "gate.xml") == before


@pytest.mark.slow
def test_export_sft_keeps_rows_and_card_together(runs):
    where, (a, b) = runs
    made = tau(where, "export-sft", a, "--out", "sft")
    assert made.returncode == 0, made.stderr
    files = ["train.jsonl", "validation.jsonl", "README.md"]
    before = {name: digest(where / "sft" / name) for name in files}
    killed = tau(where, "export-sft", a, b, "--out", "sft", "--seed", "3", code=DIE_MID_WRITE)
    assert killed.returncode == -signal.SIGKILL
    assert {name: digest(where / "sft" / name) for name in files} == before
    limited = tau(where, "export-sft", a, b, "--out", "sft", "--seed", "3", limit_kib=44)
    assert limited.returncode == 1
    lines = [line for line in limited.stderr.splitlines() if line.startswith("Error:")]
    assert len(lines) == 1 and "cannot write sft/" in lines[0] and "file-size limit" in lines[0], limited.stderr
    assert {name: digest(where / "sft" / name) for name in files} == before
    rows = sum(len((where / "sft" / n).read_text().splitlines()) for n in files[:2])
    assert f"| train | {len((where / 'sft' / 'train.jsonl').read_text().splitlines())} |" in \
        (where / "sft" / "README.md").read_text() and rows == 80  # the card counts the rows beside it


@pytest.mark.slow
def test_tracer_build_out(runs):
    where, _ = runs
    _check_writer(where, "tasks.json", ["tracer", "build", "bank", "--n", "3", "--seed", "1", "--out", "tasks.json"],
                  ["tracer", "build", "bank", "--n", "3", "--seed", "2", "--out", "tasks.json"], limit_kib=8)


def test_new_pack_is_never_half_written(tmp_path):
    killed = tau(tmp_path, "new-pack", "acme", "--dir", "packs", code=DIE_IN_NEW_PACK)
    assert killed.returncode == -signal.SIGKILL
    assert not (tmp_path / "packs" / "acme").exists()  # only a hidden temporary folder, never a half pack
    limited = tau(tmp_path, "new-pack", "acme", "--dir", "packs", limit_kib=4)
    assert limited.returncode == 1
    lines = [line for line in limited.stderr.splitlines() if line.startswith("Error:")]
    assert len(lines) == 1 and "cannot write packs/acme" in lines[0] and "file-size limit" in lines[0], limited.stderr
    assert not (tmp_path / "packs" / "acme").exists()
    made = tau(tmp_path, "new-pack", "acme", "--dir", "packs")
    assert made.returncode == 0, made.stderr
    assert (tmp_path / "packs" / "acme" / "tau_emotion_acme" / "data" / "db.json").is_file()
    assert [p.name for p in (tmp_path / "packs").iterdir() if not p.name.startswith(".")] == ["acme"]


def test_messages_name_the_cause(tmp_path):
    """A missing folder and permission read as such (the errno in words), in one line."""
    import errno

    from tau_emotion.core.outputs import OutputError, cause, write_output

    with pytest.raises(OutputError, match="its folder does not exist; nothing was written"):
        write_output(tmp_path / "missing" / "x.txt", "new")
    assert cause(OSError(errno.ENOSPC, "No space left on device")) == "the disk is full"
    assert cause(OSError(errno.EFBIG, "File too large")).startswith("the file is larger than")
    target = tmp_path / "out.txt"
    target.write_text("earlier")
    os.chmod(tmp_path, 0o500)
    try:
        if os.access(tmp_path, os.W_OK):  # root ignores permissions
            pytest.skip("running as root: a read-only folder is still writable")
        with pytest.raises(OutputError, match="cannot write .*out.txt: permission denied; the earlier file is unchanged"):
            write_output(target, "new")
    finally:
        os.chmod(tmp_path, 0o700)
    assert target.read_text() == "earlier"


# ----------------------------------------------------------------------------- probes beyond the issue's


def test_an_output_to_dev_stdout_or_a_fifo_is_written_in_place(tmp_path):
    """A temporary file renamed over `/dev/stdout` would, as root, replace the device link itself."""
    code = "from tau_emotion.core.outputs import write_output; write_output('/dev/stdout', 'hello through stdout\\n')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == "hello through stdout\n", done.stderr
    assert os.path.islink("/dev/stdout") or not os.path.exists("/dev/stdout")
    import threading

    from tau_emotion.core.outputs import write_output

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    write_output(fifo, ["one ", "two"])
    reader.join(10)
    assert got == [b"one two"] and fifo.is_fifo()


def test_a_symlinked_output_replaces_the_file_it_names_and_keeps_the_link(tmp_path):
    from tau_emotion.core.outputs import write_output

    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    write_output(link, "new")
    assert link.is_symlink() and real.read_text() == "new"


def test_a_full_disk_under_the_results_database_reads_as_a_full_disk(tmp_path, monkeypatch):
    """SQLite says "disk I/O error" when the disk fills: it read as "it cannot be opened (a folder, a missing or
    unwritable directory?)"."""
    import shutil
    from collections import namedtuple

    from tau_emotion.plugins.sqlite_store import database_error

    path = tmp_path / "runs.db"
    line = str(database_error(path, sqlite3.OperationalError("database or disk is full")))
    assert "the disk holding it is full" in line and "cannot be opened" not in line
    line = str(database_error(path, sqlite3.OperationalError("disk I/O error")))
    assert "a read or write of it failed (a full disk, a file-size limit" in line and "cannot be opened" not in line
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda p: usage(10 << 30, 10 << 30, 4096))
    line = str(database_error(path, sqlite3.OperationalError("disk I/O error")))
    assert "the disk holding it is full" in line
    line = str(database_error(path, sqlite3.OperationalError("unable to open database file")))
    assert "cannot be opened" in line
