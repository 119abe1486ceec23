"""A small launcher: ``python -m hetnet.distributed.run --nproc N script.py args...``.

Starts N copies of the script with torchrun's environment (RANK, WORLD_SIZE, LOCAL_RANK,
LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT, TORCHELASTIC_*), on one host or as node
--node-rank of --nnodes hosts (each host runs the launcher; --master-addr is rank 0's host). On one
host a free MASTER_PORT is picked unless given. SIGINT/SIGTERM/SIGHUP are forwarded to every
child (each runs in its own process group, so its own children get them too); children still
running --grace seconds later are killed. When a child fails,
the others are terminated (SIGTERM, then SIGKILL after --grace seconds) and the launcher exits with
the failing rank's code (128 + signal for a child killed by a signal; 128 + signal as well when the
launcher itself was signalled; 124 after --timeout).
"""
import argparse
import os
import signal
import socket
import subprocess
import sys
import time
import uuid


def free_port(host="127.0.0.1"):
    """A TCP port nothing listens on now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def child_environments(nproc, nnodes=1, node_rank=0, master_addr="127.0.0.1", master_port=None, base=None,
                       run_id=None):
    """The environment of each local rank (torchrun's variables)."""
    base = dict(os.environ if base is None else base)
    if master_port is None:
        master_port = free_port()
    run_id = run_id or uuid.uuid4().hex[:12]
    envs = []
    for local_rank in range(nproc):
        env = dict(base)
        env.update({"RANK": str(node_rank * nproc + local_rank), "WORLD_SIZE": str(nnodes * nproc),
                    "LOCAL_RANK": str(local_rank), "LOCAL_WORLD_SIZE": str(nproc), "GROUP_RANK": str(node_rank),
                    "ROLE_RANK": str(node_rank * nproc + local_rank), "ROLE_WORLD_SIZE": str(nnodes * nproc),
                    "MASTER_ADDR": master_addr, "MASTER_PORT": str(master_port),
                    "TORCHELASTIC_RESTART_COUNT": "0", "TORCHELASTIC_MAX_RESTARTS": "0",
                    "TORCHELASTIC_RUN_ID": run_id})
        envs.append(env)
    return envs


def _exit_code(returncode):
    return 128 - returncode if returncode < 0 else returncode


def _signal_group(proc, sig):
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _stop_all(procs, grace):
    for p in procs:
        if p.poll() is None:
            _signal_group(p, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(p.poll() is None for p in procs):
        time.sleep(0.05)
    for p in procs:
        if p.poll() is None:
            _signal_group(p, signal.SIGKILL)
    for p in procs:
        p.wait()


def launch(command, nproc, nnodes=1, node_rank=0, master_addr="127.0.0.1", master_port=None, timeout=None,
           grace=5.0, log=sys.stderr):
    """Runs `command` (argv list) nproc times; returns the launcher's exit code."""
    envs = child_environments(nproc, nnodes, node_rank, master_addr, master_port)
    procs = []
    received = []

    def forward(signum, frame):
        received.append((signum, time.monotonic()))
        for p in procs:
            if p.poll() is None:
                _signal_group(p, signum)
    handled = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    previous = {s: signal.signal(s, forward) for s in handled}
    try:
        for env in envs:
            procs.append(subprocess.Popen(command, env=env, start_new_session=True))
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            codes = [p.poll() for p in procs]
            failed = [(rank, c) for rank, c in enumerate(codes) if c not in (None, 0)]
            if failed:
                rank, code = failed[0]
                print("hetnet.distributed.run: local rank {} (RANK {}) exited with {}; stopping the others".format(
                    rank, envs[rank]["RANK"], code), file=log)
                _stop_all(procs, grace)
                return _exit_code(code)
            if all(c is not None for c in codes):  # all succeeded; a forwarded signal still counts
                return 128 + received[0][0] if received else 0
            if received and time.monotonic() - received[0][1] > grace:  # a child ignores the signal
                _stop_all(procs, grace)
                return 128 + received[0][0]
            if deadline is not None and time.monotonic() > deadline:
                print("hetnet.distributed.run: --timeout {} s passed; stopping every rank".format(timeout), file=log)
                _stop_all(procs, grace)
                return 124
            time.sleep(0.05)
    finally:
        _stop_all(procs, grace)
        for s, handler in previous.items():
            signal.signal(s, handler)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m hetnet.distributed.run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--nproc", "--nproc-per-node", "--nproc_per_node", dest="nproc", type=int, default=1,
                        help="processes on this host (default 1)")
    parser.add_argument("--nnodes", type=int, default=1, help="hosts (default 1)")
    parser.add_argument("--node-rank", "--node_rank", dest="node_rank", type=int, default=0)
    parser.add_argument("--master-addr", "--master_addr", dest="master_addr", default=None,
                        help="rank 0's host (default 127.0.0.1 on one host; required with --nnodes > 1)")
    parser.add_argument("--master-port", "--master_port", dest="master_port", type=int, default=None,
                        help="the store port (default: a free port on one host, 29500 across hosts)")
    parser.add_argument("--timeout", type=float, default=None, help="seconds before every rank is stopped")
    parser.add_argument("--grace", type=float, default=5.0, help="seconds between SIGTERM and SIGKILL")
    parser.add_argument("-m", "--module", action="store_true", help="run the script argument as a module")
    parser.add_argument("script")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    a = parser.parse_args(argv)
    if a.nproc < 1 or a.nnodes < 1 or not 0 <= a.node_rank < a.nnodes:
        parser.error("need --nproc >= 1, --nnodes >= 1 and 0 <= --node-rank < --nnodes")
    if a.nnodes > 1 and a.master_addr is None:
        parser.error("--nnodes > 1 needs --master-addr (rank 0's host, reachable from every host)")
    master_port = a.master_port
    if master_port is None and a.nnodes > 1:
        master_port = 29500
    command = [sys.executable] + (["-m", a.script] if a.module else [a.script]) + a.args
    return launch(command, a.nproc, a.nnodes, a.node_rank, a.master_addr or "127.0.0.1", master_port, a.timeout,
                  a.grace)


if __name__ == "__main__":
    sys.exit(main())
