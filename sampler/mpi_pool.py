"""The same run over MPI ranks (docs/mpi.md): rank 0 runs the sampler; every iteration it hands each rank a block
of the iteration's chains and gathers the end points back.

Why the results do not depend on the number of ranks: chain ``j`` reads only row ``j`` of the start points, step
sizes and RNG states (``sampler.rng``) and writes only row ``j`` of the outputs, and every rank runs the same
machine code (the kernel loaded from the on-disk cache, ``sampler.hmc_cache``). So running rows ``lo:hi`` on
another rank and copying them back gives the bytes a single process computes. Everything else (the live set,
evidence, the numpy generator, checkpoints, output) stays on rank 0, and :class:`RootPool` presents the same
``advance``/``evaluate`` call signatures as the local kernel, so ``sampler.nested.step`` does not know.

When MPI is used: when the launcher says there is more than one rank (``PMI_SIZE`` from MPICH's hydra and Slurm's
PMI/PMI2, ``OMPI_COMM_WORLD_SIZE`` from Open MPI, ``MV2_COMM_WORLD_SIZE`` from MVAPICH), or when
``NESTGRAD_MPI=1``; ``NESTGRAD_MPI=0`` turns it off. A plain run never imports mpi4py.

Protocol (rank 0 -> others, in order): a command tuple (``_command``: its size in a polled ``Ibcast``, then the
pickled tuple in another) —
``("ready",)`` once the chain kernel is built (workers load it from the cache only then, so a cold cache is
compiled once, not once per rank),
``("advance", logl_star, ctrl, geometry)``, ``("evaluate", n)``, ``("neighbours", n, d, k)``, ``("stats",)`` and
``("stop", results)`` — then, for the work commands, one ``Scatterv`` of the per-chain rows packed as bytes
(``Bcast`` of the whitened points for the clustering's kNN rows, which go out in whole blocks), an ``Igather`` of
every rank's success flag and one ``Gatherv`` of the packed results (numpy buffers, no pickle). A worker's Python
error is caught and sent to rank 0 point to point; rank 0 raises :class:`RankError` naming the rank. A rank killed
by a signal makes the launcher end the whole job (MPICH, Open MPI and Slurm do); rank 0's last checkpoint stays
intact and ``--resume`` continues it with any number of ranks. How rows are shared among the ranks and packed into
messages: ``sampler.mpi_rows``.
"""

import atexit
import os
import pickle
import signal
import socket
import time

import numpy as np

from nestgrad.likelihoods.backends.placement import launcher_count, local_rank, local_size  # noqa: F401 (API)

from . import geometry as geo
from .mpi_rows import blocks, pack_rows, packed_width, row_offsets, unpack_rows, whole_blocks

SIZE_VARIABLES = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MV2_COMM_WORLD_SIZE")

_POOL = None
# Waiting for other ranks: poll for SPIN_SECONDS, then nap between polls. A blocking MPI call spins at 100% CPU
# (MPICH, Open MPI), which on a shared or oversubscribed node takes the core from the ranks still computing; napping
# from the start made every wait end up to a nap late, on both sides of each message. Most waits (rank 0 for the
# slowest block, a rank for its next command) last well under SPIN_SECONDS; measured at nlive 2000 on 2 ranks,
# 0.2 ms naps after 200 polls gave 1.50x the single process, polling only 1.65x.
SPIN_SECONDS, NAP_SECONDS = 0.004, 0.00005


_ERROR_TAG = 77  # a failing rank's error message to rank 0


class RankError(RuntimeError):
    """A rank other than 0 failed while running its chains; the message names the rank, host and process."""


class RootStopped(Exception):
    """Rank 0 ended (an error, a failed gradient check, a finished run found on disk) before this rank's run
    began: nothing to do here."""


def launched_size() -> int:
    """The number of ranks the launcher announced in the environment (1 when there is none)."""
    return launcher_count(SIZE_VARIABLES, 1)


def wanted() -> bool:
    """Whether this process should join an MPI run (module docstring), decided without importing mpi4py."""
    switch = os.environ.get("NESTGRAD_MPI", "").strip().lower()
    if switch in ("0", "false", "no", "off"):
        return False
    return switch in ("1", "true", "yes", "on") or launched_size() > 1


def default_threads_per_rank() -> int:
    """Host threads for one rank's chains: NUMBA_NUM_THREADS when set, else this node's usable cores shared out
    among its ranks (all cores per rank would oversubscribe the node R-fold)."""
    if os.environ.get("NUMBA_NUM_THREADS"):
        return max(1, int(os.environ["NUMBA_NUM_THREADS"]))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, cores // local_size())


def world():
    """The process's :class:`RootPool` or :class:`WorkerPool` when running over more than one rank, else None."""
    global _POOL
    if _POOL is None and wanted():
        try:
            from mpi4py import MPI
        except ImportError as error:
            raise RankError(f"launched under MPI ({_launch_description()}) but mpi4py cannot be imported "
                            f"({error}); install it with: pip install 'nestgrad[mpi]' (or unset NESTGRAD_MPI)"
                            ) from None
        comm = MPI.COMM_WORLD
        if comm.Get_size() > 1:
            _POOL = RootPool(comm) if comm.Get_rank() == 0 else WorkerPool(comm)
        else:
            _POOL = False
    return _POOL or None


def _launch_description() -> str:
    found = [f"{name}={os.environ[name]}" for name in SIZE_VARIABLES + ("NESTGRAD_MPI",) if name in os.environ]
    return ", ".join(found) or "no launcher variables"


class _Pool:
    def __init__(self, comm):
        self.comm = comm
        self.rank, self.size = comm.Get_rank(), comm.Get_size()
        self.busy = 0.0      # seconds running chains or likelihood evaluations
        self.waiting = 0.0   # seconds blocked waiting for other ranks
        self.chains = 0      # chains run on this rank
        self.started = None  # when this rank's part of the run began
        self._pending = None  # rank 0: the last command's message, still being sent

    def _wait(self, request):
        """Complete a non-blocking request, polling then napping (see SPIN_SECONDS); the seconds count as
        waiting."""
        start = time.perf_counter()
        while not request.Test():
            if time.perf_counter() - start > SPIN_SECONDS:
                time.sleep(NAP_SECONDS)
        self.waiting += time.perf_counter() - start

    def loaded(self):
        """Every rank, once it has its chain kernel: wait (politely) until all have it."""
        self._wait(self.comm.Ibarrier())

    def _command(self, message=None):
        """Rank 0's command to every rank: its pickled size in a one-number ``Ibcast`` that the others wait for
        politely, then the pickled message in a second ``Ibcast``. Rank 0 does not wait for the second (a blocking
        send of the ~15 kB geometry waited for the receivers' next poll, 0.26 ms per iteration): it completes
        during rank 0's next MPI calls and is finished before the next command."""
        if self.rank == 0:
            payload = np.frombuffer(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL), np.uint8)
            self.finish_command()
            self._wait(self.comm.Ibcast(np.array([payload.size], np.int64), root=0))
            self._pending = (self.comm.Ibcast(payload, root=0), payload)
            return message
        size = np.empty(1, np.int64)
        self._wait(self.comm.Ibcast(size, root=0))
        payload = np.empty(int(size[0]), np.uint8)
        self._wait(self.comm.Ibcast(payload, root=0))
        return pickle.loads(payload)

    def finish_command(self):
        """Rank 0: complete the last command's message (see :meth:`_command`)."""
        if self._pending is not None:
            self._pending[0].Wait()
            self._pending = None

    def _statuses(self, error):
        """Every rank's error (None when it succeeded) on rank 0, after all of them finished their block: a flag
        from every rank, and the error itself, point to point, only from a rank that failed (no collective of
        pickled objects on every iteration)."""
        flag = np.array([error is not None], np.int64)
        flags = np.empty(self.size, np.int64) if self.rank == 0 else None
        self._wait(self.comm.Igather(flag, flags, root=0))  # rank 0 waits here for the slowest rank
        if self.rank != 0:
            if error is not None:
                self.comm.send(error, dest=0, tag=_ERROR_TAG)
            return None
        return [None] + [self.comm.recv(source=r, tag=_ERROR_TAG) if flags[r] else None
                         for r in range(1, self.size)]

    def _counts(self, nrows):
        counts = blocks(nrows, self.size)
        return counts, row_offsets(counts)

    def _scatter_rows(self, full, local, counts, offsets):
        """Rows of ``full`` (rank 0) into ``local`` (the other ranks); rank 0 keeps its own rows in place."""
        from mpi4py import MPI

        if self.rank == 0:
            width = int(np.prod(full.shape[1:], dtype=np.int64))
            self.comm.Scatterv([full, (counts * width, offsets * width)], MPI.IN_PLACE, root=0)
        else:
            self.comm.Scatterv(None, local, root=0)

    def _gather_rows(self, local, full, counts, offsets):
        """``local`` rows of every rank into ``full`` on rank 0 (whose own rows are already in place)."""
        from mpi4py import MPI

        if self.rank == 0:
            width = int(np.prod(full.shape[1:], dtype=np.int64))
            self.comm.Gatherv(MPI.IN_PLACE, [full, (counts * width, offsets * width)], root=0)
        else:
            self.comm.Gatherv(local, None, root=0)

    def _identity(self):
        return {"rank": self.rank, "host": socket.gethostname(), "pid": os.getpid()}


class RootPool(_Pool):
    """Rank 0: wraps the local chain kernel and batch evaluator so that each call is split over the ranks."""

    def __init__(self, comm):
        super().__init__(comm)
        self.released = False
        atexit.register(self.stop)  # workers must never wait forever, whatever way rank 0 ends

    def announce_ready(self):
        """Tell the workers the chain kernel is in the cache (each sampler once: they load it now), and wait until
        every rank has loaded it, so that a run's compile stage holds every rank's loading and its sampling none."""
        self._command(("ready",))
        self.loaded()

    def wrap(self, advance, evaluate):
        """``(advance, evaluate)`` with the local kernel's signatures, running over every rank."""

        def advance_all(u_start, logl_start, logl_star, step_sizes, ctrl, chain_rng, data, codes, args, *rest):
            geometry, work = rest[:geo.KERNEL_ARRAYS], rest[geo.KERNEL_ARRAYS:]
            counts, offsets = self._counts(u_start.shape[0])
            self._command(("advance", float(logl_star), ctrl, tuple(geometry)))
            self._scatter_rows(pack_rows((u_start, logl_start, step_sizes, chain_rng)), None, counts, offsets)
            mine = slice(0, int(counts[0]))
            start = time.perf_counter()
            try:
                if counts[0]:
                    advance(u_start[mine], logl_start[mine], logl_star, step_sizes[mine], ctrl, chain_rng[mine],
                            data, codes, args, *geometry, *(a[mine] for a in work))
            finally:  # the others are in the exchange already: complete it, whatever happened here
                self.busy += time.perf_counter() - start
                self.chains += int(counts[0])
                self._collect(counts, offsets, [chain_rng] + list(work[-5:]))

        def evaluate_all(thetas, data, theta_buf, scratch, out):
            counts, offsets = self._counts(thetas.shape[0])
            self._command(("evaluate", int(thetas.shape[0]), int(thetas.shape[1])))
            thetas = np.ascontiguousarray(thetas, dtype=np.float64)
            self._scatter_rows(thetas, None, counts, offsets)
            mine = slice(0, int(counts[0]))
            start = time.perf_counter()
            try:
                if counts[0]:
                    evaluate(thetas[mine], data, theta_buf[mine], scratch, out[mine])
            finally:
                self.busy += time.perf_counter() - start
                self._collect(counts, offsets, [out])

        return advance_all, evaluate_all

    def neighbours(self, distances, k):
        """``sampler.clustering.local_neighbours`` split over the ranks: whole blocks of ``BLOCK_ROWS`` rows each,
        so every block is the same product in any process and the labels are the single process's bits."""
        from .clustering import BLOCK_ROWS, local_neighbours

        n = distances.white.shape[0]
        if n <= BLOCK_ROWS:  # one block: the messages would cost more than the block
            return local_neighbours(distances, k)
        counts = whole_blocks(n, self.size, BLOCK_ROWS)
        offsets = row_offsets(counts)
        self._command(("neighbours", n, distances.white.shape[1], k))
        self.comm.Bcast(distances.white, root=0)
        self.comm.Bcast(distances.sq, root=0)
        nbrs, kth2 = np.empty((n, k), np.int64), np.empty(n)
        start = time.perf_counter()
        try:
            nbrs[:counts[0]], kth2[:counts[0]] = distances.neighbours(k, 0, int(counts[0]))
        finally:
            self.busy += time.perf_counter() - start
            self._collect(counts, offsets, [nbrs, kth2])
        return nbrs, kth2

    def _collect(self, counts, offsets, outputs):
        statuses = self._statuses(None)
        mine = int(counts[0])  # this rank's rows are in place; the others' arrive in one message
        packed = np.empty((outputs[0].shape[0], packed_width(outputs)), np.uint8)
        self._gather_rows(None, packed, counts, offsets)
        unpack_rows(packed[mine:], [a[mine:] for a in outputs])
        failed = [(r, s) for r, s in enumerate(statuses) if s is not None]
        if failed:
            rank, status = failed[0]
            raise RankError(f"MPI rank {rank} of {self.size} ({status['host']}, pid {status['pid']}) failed while "
                            f"running its share of the chains, likelihood calls or clustering: {status['error']}")

    def begin(self):
        """A run starts: the workers are serving it until :meth:`stop`."""
        self.started = time.perf_counter()
        self.busy = self.waiting = 0.0
        self.chains = 0
        self.released = False

    def statistics(self) -> dict:
        """Per-rank chains, busy and waiting seconds and idle fraction (waiting / this rank's wall time), and the
        rank count; collected from every rank."""
        self._command(("stats",))
        wall = time.perf_counter() - (self.started or time.perf_counter())
        rows = self.comm.gather(dict(self._identity(), chains=self.chains, busy=self.busy, waiting=self.waiting,
                                     wall=wall), root=0)
        idle = [min(max(r["waiting"] / r["wall"], 0.0), 1.0) if r["wall"] > 0 else 0.0 for r in rows]
        return {"ranks": self.size, "idle_fraction": idle, "busy_seconds": [r["busy"] for r in rows],
                "waiting_seconds": [r["waiting"] for r in rows], "wall_seconds": [r["wall"] for r in rows],
                "chains": [r["chains"] for r in rows], "hosts": [r["host"] for r in rows]}

    def stop(self, results=None):
        """Release the workers (they return ``results``, or None); safe to call more than once."""
        if self.released:
            return
        self.released = True
        try:
            self._command(("stop", results))
        except Exception:  # results that cannot be pickled: the workers return None instead
            self._command(("stop", None))
        self.finish_command()


class WorkerPool(_Pool):
    """Ranks 1..R-1: wait for commands from rank 0 and run their block of rows."""

    def wait_ready(self):
        """Block until rank 0 has the chain kernel ready; :class:`RootStopped` when rank 0 ended instead."""
        command = self._receive()
        if command[0] != "ready":
            raise RootStopped("rank 0 ended before the run began")

    def _receive(self):
        return self._command()

    def serve(self, advance, evaluate, workspace, data, codes, args, dtype):
        """Run blocks until rank 0 says stop; returns what rank 0 sent with it (its Results, or None)."""
        # Rank 0 coordinates interruptions (it checkpoints at the next iteration boundary, then stops us).
        previous = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            return self._serve(advance, evaluate, workspace, data, codes, args, dtype)
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)

    def _serve(self, advance, evaluate, workspace, data, codes, args, dtype):
        self.started = time.perf_counter()
        self.busy = self.waiting = 0.0
        self.chains = 0
        k, d = workspace.u.shape
        counts, offsets = self._counts(k)
        n = int(counts[self.rank])
        u_start, step_sizes = np.empty((n, d)), np.empty(n)
        logl_start, chain_rng = np.empty(n), np.empty((n, 2), np.uint64)
        work = [a[:n] for a in workspace.arrays()]
        advance_width = packed_width((u_start, logl_start, step_sizes, chain_rng))
        while True:
            command = self._receive()
            kind = command[0]
            if kind == "stop":
                return command[1]
            if kind == "stats":
                wall = time.perf_counter() - self.started
                self.comm.gather(dict(self._identity(), chains=self.chains, busy=self.busy, waiting=self.waiting,
                                      wall=wall), root=0)
                continue
            if kind == "advance":
                _, logl_star, ctrl, geometry = command
                packed = np.empty((n, advance_width), np.uint8)
                self._scatter_rows(None, packed, counts, offsets)
                unpack_rows(packed, (u_start, logl_start, step_sizes, chain_rng))
                error = self._run(lambda: advance(u_start, logl_start, logl_star, step_sizes, ctrl, chain_rng,
                                                  data, codes, args, *geometry, *work) if n else None)
                self.chains += n
                self._reply(error, counts, offsets, [chain_rng] + work[-5:])
            elif kind == "neighbours":
                self._neighbours(*command[1:])
            elif kind == "evaluate":
                _, rows, width = command
                counts_e, offsets_e = self._counts(rows)
                m = int(counts_e[self.rank])
                thetas, out = np.empty((m, width)), np.empty(m)
                self._scatter_rows(None, thetas, counts_e, offsets_e)
                theta_buf = np.empty((m, width), dtype)
                error = self._run(lambda: evaluate(thetas, data, theta_buf, workspace.scratch[0], out) if m else None)
                self._reply(error, counts_e, offsets_e, [out])

    def _neighbours(self, n, d, k):
        """This rank's block of the kNN rows (``RootPool.neighbours``)."""
        from .clustering import BLOCK_ROWS, Distances

        white, sq = np.empty((n, d)), np.empty(n)
        self.comm.Bcast(white, root=0)
        self.comm.Bcast(sq, root=0)
        counts = whole_blocks(n, self.size, BLOCK_ROWS)
        offsets = row_offsets(counts)
        first, m = int(offsets[self.rank]), int(counts[self.rank])
        result = [np.empty((m, k), np.int64), np.empty(m)]

        def work():
            result[0][:], result[1][:] = Distances(white, sq).neighbours(k, first, first + m)

        error = self._run(work)
        self._reply(error, counts, offsets, result)

    def _run(self, work):
        start = time.perf_counter()
        try:
            work()
            error = None
        except Exception as exc:  # sent to rank 0, which stops the run naming this rank
            error = dict(self._identity(), error=f"{type(exc).__name__}: {exc}")
        self.busy += time.perf_counter() - start
        return error

    def _reply(self, error, counts, offsets, outputs):
        self._statuses(error)
        self._gather_rows(pack_rows(outputs), None, counts, offsets)
