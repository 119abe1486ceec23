"""hetnet.distributed: the process's place in a job (env), the rendezvous dict that
data_parallel_model takes, a launcher (``python -m hetnet.distributed.run``) and a synchronized
batch-norm net pass. See docs/distributed.md.

Importing this package starts no thread and opens no socket (fork-safe): the store is created by
``rendezvous()``, in the workspace of the caller.
"""
import os

from hetnet.distributed.env import DistributedEnv, get_env  # noqa: F401
from hetnet.distributed.sync_bn import sync_batch_norm  # noqa: F401

DEFAULT_STORE_BLOB = "store_handler"


def rendezvous(rank=None, world_size=None, master_addr=None, master_port=None, engine="GLOO", transport=None,
               interface=None, timeout_ms=30000, prefix=None, kv_handler=DEFAULT_STORE_BLOB, environ=None):
    """The ``rendezvous`` dict for data_parallel_model.Parallelize, from the arguments and the launcher's
    environment (hetnet.distributed.env), with a TCP store on MASTER_ADDR:MASTER_PORT (rank 0 serves
    it) in blob `kv_handler` of the current workspace. None for a world of one process (no store).

    The store exists while the workspace holds the blob; rank 0 must stay up until every rank has
    finished its rendezvous (CreateCommonWorld), as with any TCP store."""
    from hetnet import core, workspace
    env = get_env(rank, world_size, None, master_addr, master_port, environ)
    if env.world_size == 1:
        return None
    # The common world chooses its interface by the route to MASTER_ADDR (C++ reads the environment),
    # which must be the store's address.
    os.environ["MASTER_ADDR"] = env.master_addr
    os.environ["MASTER_PORT"] = str(env.master_port)
    kwargs = {"prefix": prefix} if prefix else {}
    workspace.RunOperatorOnce(core.CreateOperator(
        "TCPStoreHandlerCreate", [], [kv_handler], host=env.master_addr, port=env.master_port,
        is_server=int(env.rank == 0), timeout_ms=int(timeout_ms), **kwargs))
    result = {"kv_handler": kv_handler, "shard_id": env.rank, "num_shards": env.world_size, "engine": engine,
              "exit_nets": None}
    if transport is not None:
        result["transport"] = transport
    if interface is not None:
        result["interface"] = interface
    return result


def create_common_world(rendezvous, blob="common_world", name=None, timeout_ms=30000):
    """Runs CreateCommonWorld over rendezvous['kv_handler'] (a dict from rendezvous()) in the current
    workspace and returns the blob name, e.g. for sync_batch_norm(net, comm_world=..., world_size=...).
    Every rank must call it with the same blob and name (the name prefixes the store's keys)."""
    from hetnet import core, workspace
    kwargs = {k: rendezvous[k] for k in ("transport", "interface", "mpi_rendezvous") if k in rendezvous}
    workspace.RunOperatorOnce(core.CreateOperator(
        "CreateCommonWorld", [rendezvous["kv_handler"]] if rendezvous.get("kv_handler") else [], [blob],
        name=name or blob + "_op", size=rendezvous["num_shards"], rank=rendezvous["shard_id"],
        engine=rendezvous.get("engine", "GLOO"), timeout_ms=int(timeout_ms), **kwargs))
    return blob
