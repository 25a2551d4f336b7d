"""The process that holds a managed model server: everything the server starts ends with it, and with tau.

`python -m tau_emotion.plugins.serve_supervisor PARENT_PID COMMAND...` (only the standard library, so
it starts in milliseconds). It makes itself a child subreaper (PR_SET_CHILD_SUBREAPER), so a launcher
that backgrounds the server and exits, or a child that calls `setsid`, stays its descendant; it asks
the kernel for SIGTERM when tau dies (PR_SET_PDEATHSIG: a SIGKILL of tau included). On SIGTERM (tau's
`stop`, or tau's death) it sends SIGTERM to every descendant, SIGKILL after the grace period, reaps
them and exits. While running it exits by itself only when the command and every descendant are gone
(with the command's exit code), so `tau` sees a server that could not start as an exit.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
#: seconds descendants get between SIGTERM and SIGKILL
GRACE = 8.0


def prctl(option: int, value: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(option, value, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option}) failed")


def descendants(root: int, zombies: bool = False) -> list[int]:
    """Every process below `root` (by parent pid, from /proc); zombies (ended, not yet reaped) only when asked."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="latin-1") as handle:
                fields = handle.read().rpartition(")")[2].split()
        except OSError:
            continue
        if fields and (zombies or fields[0] != "Z"):
            children.setdefault(int(fields[1]), []).append(int(name))
    found, stack = [], [root]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def reap() -> dict[int, int]:
    """pid -> exit code of every child that ended (orphans reparented to us included)."""
    ended = {}
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return ended
        if pid == 0:
            return ended
        ended[pid] = os.waitstatus_to_exitcode(status)


def end_all(me: int) -> None:
    for sig, wait in ((signal.SIGTERM, GRACE), (signal.SIGKILL, 5.0)):
        for pid in descendants(me):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            reap()
            if not descendants(me, zombies=True):  # every one ended and reaped
                return
            time.sleep(0.05)


def main() -> int:
    parent, command = int(sys.argv[1]), sys.argv[2:]
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is tau's to handle; tau stops us
    if os.getppid() != parent:  # tau died before the death signal was armed
        return 1
    try:
        child = os.posix_spawnp(command[0], command, os.environ)
    except OSError as exc:
        print(f"cannot start {command[0]}: {exc.strerror or exc}", flush=True)
        return 127
    me, code = os.getpid(), None
    while not stopping:
        ended = reap()
        if child in ended:
            code = ended[child]
        if code is not None and not descendants(me, zombies=True):
            return code
        if os.getppid() != parent:
            break
        time.sleep(0.1)
    end_all(me)
    return code or 0


if __name__ == "__main__":
    sys.exit(main())
