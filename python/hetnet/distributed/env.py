"""Where this process sits in a distributed job: rank, world size, local rank and the rendezvous
address, from explicit arguments, else the first launcher environment found:

  RANK / WORLD_SIZE / LOCAL_RANK / LOCAL_WORLD_SIZE   torchrun, Kubeflow PyTorchJob, hetnet.distributed.run
  OMPI_COMM_WORLD_RANK / _SIZE / _LOCAL_RANK / _LOCAL_SIZE   Open MPI's mpirun (as a launcher only)
  PMI_RANK / PMI_SIZE (MPI_LOCALRANKID)               MPICH / Intel MPI (hydra)
  SLURM_PROCID / SLURM_NTASKS / SLURM_LOCALID         srun
  JOB_COMPLETION_INDEX (+ WORLD_SIZE)                 Kubernetes Indexed Job

MASTER_ADDR / MASTER_PORT give the store (rank 0 serves it); without them a single-process world
uses 127.0.0.1 and any launcher that spans hosts is an error that says what to set.
"""
import collections
import os

from hetnet._errors import InvalidArgumentError

DEFAULT_MASTER_PORT = 29500

DistributedEnv = collections.namedtuple(
    "DistributedEnv", ["rank", "world_size", "local_rank", "local_world_size", "master_addr", "master_port",
                       "source"])

# (source, rank variable, size variable, local rank variable, local size variable)
_LAUNCHERS = (
    ("torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"),
    ("openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
     "OMPI_COMM_WORLD_LOCAL_SIZE"),
    ("pmi", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"),
    ("slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"),
    ("k8s-indexed-job", "JOB_COMPLETION_INDEX", "WORLD_SIZE", None, None),
)


def _int(environ, name, source):
    value = environ.get(name)
    if value is None or value == "":
        return None
    try:
        return int(value.split("(")[0].split(",")[0])  # SLURM_NTASKS_PER_NODE may read "2(x3)"
    except ValueError:
        raise InvalidArgumentError("{}: environment variable {}={!r} is not an integer".format(source, name, value))


def _from_launcher(environ):
    for source, rank_var, size_var, local_var, local_size_var in _LAUNCHERS:
        rank = _int(environ, rank_var, source)
        if rank is None:
            continue
        size = _int(environ, size_var, source)
        if size is None:
            raise InvalidArgumentError("{}: {} is set but {} is not; set {} to the number of processes".format(
                source, rank_var, size_var, size_var))
        local_rank = _int(environ, local_var, source) if local_var else None
        local_size = _int(environ, local_size_var, source) if local_size_var else None
        return source, rank, size, local_rank, local_size
    return None


def get_env(rank=None, world_size=None, local_rank=None, master_addr=None, master_port=None, environ=None):
    """The DistributedEnv of this process; explicit arguments win over the environment."""
    environ = os.environ if environ is None else environ
    found = _from_launcher(environ)
    source = "arguments"
    if found is not None:
        launcher, env_rank, env_size, env_local, env_local_size = found
        if rank is None or world_size is None:
            source = launcher
        rank = env_rank if rank is None else rank
        world_size = env_size if world_size is None else world_size
        local_rank = env_local if local_rank is None else local_rank
    else:
        env_local_size = None
    if rank is None and world_size is None:
        rank, world_size, source = 0, 1, "default"
    if rank is None or world_size is None:
        raise InvalidArgumentError("rank and world_size must be given together (got rank={}, world_size={})".format(
            rank, world_size))
    rank, world_size = int(rank), int(world_size)
    if world_size < 1 or not 0 <= rank < world_size:
        raise InvalidArgumentError("rank {} is not in [0, world_size {}) ({})".format(rank, world_size, source))
    local_rank = 0 if local_rank is None else int(local_rank)
    local_world_size = env_local_size if env_local_size is not None else (world_size if source == "default" else None)
    if master_addr is None:
        master_addr = environ.get("MASTER_ADDR") or None
    if master_port is None:
        master_port = _int(environ, "MASTER_PORT", "MASTER_PORT")
    if master_addr is None:
        if world_size > 1 and source not in ("arguments",):
            raise InvalidArgumentError(
                "{} gives rank {} of {} but MASTER_ADDR is not set: set MASTER_ADDR (and MASTER_PORT) to the "
                "address of rank 0, which serves the rendezvous store".format(source, rank, world_size))
        master_addr = "127.0.0.1"
    if master_port is None:
        master_port = DEFAULT_MASTER_PORT
    return DistributedEnv(rank, world_size, local_rank, local_world_size, master_addr, int(master_port), source)
