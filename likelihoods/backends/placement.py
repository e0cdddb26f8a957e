"""Where a process runs among the processes a launcher started on one node: its node-local rank and how many
ranks share the node (from the launcher's environment, without importing MPI), and the GPU it uses.

One GPU per rank: a rank uses device ``local_rank % (devices it can see)``, so ``mpirun -n 4`` on a node with
four GPUs puts one rank on each, and a launcher that already gives each rank one device (Slurm's
``--gpus-per-task=1``, a ``CUDA_VISIBLE_DEVICES`` per rank) leaves every rank on its device 0.
"""

import os

LOCAL_RANK_VARIABLES = ("MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_LOCAL_RANK",
                        "SLURM_LOCALID")
LOCAL_SIZE_VARIABLES = ("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE", "MV2_COMM_WORLD_LOCAL_SIZE")

_SELECTED = []  # the device this process chose, once chosen


def launcher_count(names, default: int) -> int:
    """The first of the environment variables ``names`` that holds a non-negative integer, else ``default``
    (launchers name the same number differently: MPICH's hydra, Open MPI, MVAPICH, Slurm)."""
    for name in names:
        value = os.environ.get(name, "")
        if value.isdigit():
            return int(value)
    return default


def local_rank() -> int:
    """This rank's index among the ranks on its node, 0 when no launcher says."""
    return launcher_count(LOCAL_RANK_VARIABLES, 0)


def local_size() -> int:
    """How many ranks share this node, 1 when no launcher says."""
    return max(1, launcher_count(LOCAL_SIZE_VARIABLES, 1))


def device_index(devices: int) -> int:
    """The device of this rank among ``devices`` visible ones."""
    return local_rank() % max(1, int(devices))


def select_device(cuda) -> int:
    """Make this rank's device current in ``numba.cuda`` before the process's first GPU allocation (called by
    every GPU code path; the first call chooses, later calls keep it). Returns the device index."""
    if not _SELECTED:
        index = device_index(len(cuda.gpus))
        if index:
            cuda.select_device(index)
        _SELECTED.append(index)
    return _SELECTED[0]
