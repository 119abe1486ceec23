"""hetnet.distributed.run (the launcher) and hetnet.distributed.env (rank/size/address from the
environment of torchrun, Open MPI, PMI, SLURM and Kubernetes Indexed Jobs). Real child processes,
every run bounded in time."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import hetnet
from hetnet.distributed.env import DEFAULT_MASTER_PORT, get_env

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(hetnet.__file__)))


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([PACKAGE_ROOT] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    return env


def _script(tmp_path, body):
    path = tmp_path / "child.py"
    path.write_text(textwrap.dedent(body))
    return str(path)


def _launch(args, timeout=30, **kwargs):
    return subprocess.run([sys.executable, "-m", "hetnet.distributed.run"] + args, env=_env(), timeout=timeout,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)


def test_sets_torchrun_environment_for_every_rank(tmp_path):
    script = _script(tmp_path, """
        import os, sys
        keys = ["RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", "MASTER_ADDR", "MASTER_PORT",
                "TORCHELASTIC_RUN_ID"]
        with open(os.path.join(sys.argv[1], "rank" + os.environ["RANK"]), "w") as f:
            f.write(" ".join(os.environ[k] for k in keys) + " " + " ".join(sys.argv[2:]))
        """)
    proc = _launch(["--nproc", "3", script, str(tmp_path), "--flag", "x"])
    assert proc.returncode == 0, proc.stderr
    lines = [(tmp_path / "rank{}".format(r)).read_text().split() for r in range(3)]
    for r, fields in enumerate(lines):
        assert fields[:6] == [str(r), "3", str(r), "3", "0", "127.0.0.1"]
        assert fields[-2:] == ["--flag", "x"]
    ports = set(fields[6] for fields in lines)
    run_ids = set(fields[7] for fields in lines)
    assert len(ports) == 1 and len(run_ids) == 1 and 0 < int(ports.pop()) < 65536


def test_a_failing_rank_stops_the_others_and_gives_its_exit_code(tmp_path):
    script = _script(tmp_path, """
        import os, sys, time
        if os.environ["RANK"] == "1":
            time.sleep(0.5)
            sys.exit(7)
        time.sleep(60)  # the launcher must stop this one
        """)
    start = time.monotonic()
    proc = _launch(["--nproc", "3", "--grace", "1", script])
    assert proc.returncode == 7
    assert time.monotonic() - start < 20
    assert b"RANK 1" in proc.stderr and b"exited with 7" in proc.stderr


def test_a_rank_killed_by_a_signal_and_the_timeout(tmp_path):
    killed = _script(tmp_path, """
        import os, signal, time
        if os.environ["RANK"] == "0":
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(60)
        """)
    assert _launch(["--nproc", "2", "--grace", "1", killed]).returncode == 128 + signal.SIGKILL
    slow = tmp_path / "slow.py"
    slow.write_text("import time\ntime.sleep(60)\n")
    start = time.monotonic()
    proc = _launch(["--nproc", "2", "--timeout", "1", "--grace", "1", str(slow)])
    assert proc.returncode == 124 and time.monotonic() - start < 20


def test_forwards_sigterm_to_the_children(tmp_path):
    script = _script(tmp_path, """
        import os, signal, sys, time
        def handler(signum, frame):
            open(os.path.join(sys.argv[1], "got" + os.environ["RANK"]), "w").write(str(signum))
            sys.exit(0)
        signal.signal(signal.SIGTERM, handler)
        open(os.path.join(sys.argv[1], "ready" + os.environ["RANK"]), "w").close()
        time.sleep(60)
        """)
    proc = subprocess.Popen([sys.executable, "-m", "hetnet.distributed.run", "--nproc", "2", script, str(tmp_path)],
                            env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 20
        while not all((tmp_path / "ready{}".format(r)).exists() for r in range(2)):
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    for r in range(2):
        assert (tmp_path / "got{}".format(r)).read_text() == str(int(signal.SIGTERM))
    assert proc.returncode == 128 + signal.SIGTERM


def test_children_that_ignore_a_forwarded_signal_are_killed_after_the_grace(tmp_path):
    script = _script(tmp_path, """
        import os, signal, sys, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        open(os.path.join(sys.argv[1], "ready" + os.environ["RANK"]), "w").close()
        time.sleep(60)
        """)
    proc = subprocess.Popen([sys.executable, "-m", "hetnet.distributed.run", "--nproc", "2", "--grace", "1", script,
                             str(tmp_path)], env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 20
        while not all((tmp_path / "ready{}".format(r)).exists() for r in range(2)):
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)
        start = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)
        assert time.monotonic() - start < 10
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + signal.SIGTERM


def test_rejects_a_multi_host_run_without_master_addr():
    proc = _launch(["--nproc", "1", "--nnodes", "2", "x.py"])
    assert proc.returncode == 2 and b"--master-addr" in proc.stderr


@pytest.mark.parametrize("environ,expected", [
    ({"RANK": "3", "WORLD_SIZE": "4", "LOCAL_RANK": "1", "MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "1234"},
     (3, 4, 1, "10.0.0.1", 1234, "torchrun")),
    ({"OMPI_COMM_WORLD_RANK": "2", "OMPI_COMM_WORLD_SIZE": "8", "OMPI_COMM_WORLD_LOCAL_RANK": "0",
      "MASTER_ADDR": "h0"}, (2, 8, 0, "h0", DEFAULT_MASTER_PORT, "openmpi")),
    ({"PMI_RANK": "1", "PMI_SIZE": "2", "MASTER_ADDR": "h0"}, (1, 2, 0, "h0", DEFAULT_MASTER_PORT, "pmi")),
    ({"SLURM_PROCID": "5", "SLURM_NTASKS": "6", "SLURM_LOCALID": "1", "MASTER_ADDR": "n1", "MASTER_PORT": "7"},
     (5, 6, 1, "n1", 7, "slurm")),
    ({"JOB_COMPLETION_INDEX": "2", "WORLD_SIZE": "3", "MASTER_ADDR": "job-0.svc"},
     (2, 3, 0, "job-0.svc", DEFAULT_MASTER_PORT, "k8s-indexed-job")),
    ({}, (0, 1, 0, "127.0.0.1", DEFAULT_MASTER_PORT, "default")),
])
def test_env_from_each_launcher(environ, expected):
    e = get_env(environ=environ)
    assert (e.rank, e.world_size, e.local_rank, e.master_addr, e.master_port, e.source) == expected


def test_env_precedence_and_errors():
    both = {"RANK": "1", "WORLD_SIZE": "2", "OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "5",
            "MASTER_ADDR": "a"}
    assert get_env(environ=both)[:2] == (1, 2)  # torchrun's variables first
    assert get_env(rank=0, world_size=3, master_addr="b", environ=both)[:2] == (0, 3)  # then explicit args win
    with pytest.raises(hetnet.InvalidArgumentError, match="MASTER_ADDR"):
        get_env(environ={"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2"})
    with pytest.raises(hetnet.InvalidArgumentError, match="WORLD_SIZE"):
        get_env(environ={"JOB_COMPLETION_INDEX": "0"})
    with pytest.raises(hetnet.InvalidArgumentError, match="not in"):
        get_env(environ={"RANK": "4", "WORLD_SIZE": "4", "MASTER_ADDR": "a"})
    with pytest.raises(hetnet.InvalidArgumentError, match="not an integer"):
        get_env(environ={"RANK": "x", "WORLD_SIZE": "4"})


def test_import_starts_no_thread():
    code = ("import threading, hetnet.distributed, caffe2.python.data_parallel_model; "
            "assert threading.active_count() == 1, threading.enumerate()")
    proc = subprocess.run([sys.executable, "-c", code], env=_env(), timeout=30, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE)
    assert proc.returncode == 0, proc.stderr


def test_hetnet_run_is_the_same_launcher(tmp_path):
    """`python -m hetnet.run` (the spec's short name) launches like hetnet.distributed.run."""
    script = _script(tmp_path, """
        import os, sys
        open(os.path.join(sys.argv[1], "rank" + os.environ["RANK"]), "w").write(os.environ["WORLD_SIZE"])
        """)
    proc = subprocess.run([sys.executable, "-m", "hetnet.run", "--nproc", "2", script, str(tmp_path)], env=_env(),
                          timeout=30, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.returncode == 0, proc.stderr
    assert [(tmp_path / "rank{}".format(r)).read_text() for r in range(2)] == ["2", "2"]
