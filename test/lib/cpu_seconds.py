#!/usr/bin/env python3
"""cpu_seconds.py FILE CMD [ARG...]: run CMD and write to FILE the CPU
seconds (user + system) that CMD and all its descendants used.

The test runner wraps each job in it, so that its report shows which jobs
keep a core busy and which mostly wait (for a scheduler's minute, a
standby, a restart).  A server started by pg_ctl is orphaned by it and
would be reaped by init, its CPU time lost to us: as a child subreaper
(prctl PR_SET_CHILD_SUBREAPER) this process inherits and reaps such
orphans, so that RUSAGE_CHILDREN counts them (and, through each
postmaster, its backends).  After CMD's end it waits at most
ORPHAN_WAIT seconds for orphans still running (a server shutting down):
a process a test leaked must not hang the runner.  Exits with CMD's
status.
"""
import ctypes
import os
import resource
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
ORPHAN_WAIT = 30


def main():
    out, cmd = sys.argv[1], sys.argv[2:]
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: only CMD's own children are counted
    child = subprocess.Popen(cmd)
    status = None
    deadline = None
    # CMD's end, then the orphans that came to us, until none is left.
    while True:
        try:
            pid, wstatus = os.waitpid(-1, 0 if status is None else os.WNOHANG)
        except ChildProcessError:
            break
        except KeyboardInterrupt:
            continue
        if pid == 0:
            if time.monotonic() > deadline:
                break
            time.sleep(0.1)
            continue
        if pid == child.pid:
            status = os.waitstatus_to_exitcode(wstatus)
            if status < 0:
                status = 128 - status
            deadline = time.monotonic() + ORPHAN_WAIT
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(out, "w") as f:
        f.write("%d\n" % round(usage.ru_utime + usage.ru_stime))
    sys.exit(status)


if __name__ == "__main__":
    main()
