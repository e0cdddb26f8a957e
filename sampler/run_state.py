"""``RunRecord``: what a run has accumulated besides the live state — dead points, counters, running evidence
and per-iteration diagnostics — with an exact round trip through checkpoint arrays."""

import numpy as np

# Per-iteration scalar diagnostics, in the order they are stored.
SCALAR_KEYS = ("logl_star", "step_size", "n_steps", "outside_fraction", "reflections", "acceptance",
               "rho_coord", "rho_logl", "jumps_tried", "jumps_accepted", "nclusters", "nlike", "ngrad", "nnan", "nlive", "logz",
               "logz_remain")
_INT_KEYS = {"n_steps", "jumps_tried", "jumps_accepted", "nclusters", "nlike", "ngrad", "nnan", "nlive"}
DEAD_FIELDS = ("u", "theta", "logl", "birth", "thread", "uid", "parent", "label")
MERGE_EVERY = 64  # appended chunks merged into one block, so a long run keeps a few blocks, not one per iteration


class ChunkedRows:
    """Arrays of equal length kept as the chunks of rows they were appended in: appending copies nothing (every
    ``MERGE_EVERY`` chunks are merged into one block, so each row is copied at most once more), and a checkpoint
    streams the blocks into the file (``checkpoint.Stacked``) without joining them. Joining every dead point at
    each checkpoint cost 13.6 s of a 30-D run at nlive 1e5 (3.9M dead points, 4 checkpoints); one growing buffer
    instead cost as much again in its regrowth copies."""

    def __init__(self):
        self.blocks, self.tail, self.size = [], [], 0

    def append(self, chunk):
        """Add the rows of ``chunk`` (arrays of equal length), kept as they are: the caller must not change them."""
        self.tail.append(tuple(chunk))
        self.size += chunk[0].shape[0]
        if len(self.tail) >= MERGE_EVERY:
            self.blocks.append(_joined(self.tail))
            self.tail = []

    def parts(self, field) -> list:
        """The chunks of array ``field`` (an index into the chunk tuples), in order."""
        return [chunk[field] for chunk in self.blocks + self.tail]

    def arrays(self):
        """Each array whole (one copy; kept as the only block, so asking again copies nothing)."""
        if len(self.blocks) + len(self.tail) > 1:
            self.blocks, self.tail = [_joined(self.blocks + self.tail)], []
        return (self.blocks + self.tail)[0]


def _joined(chunks):
    return tuple(np.concatenate([c[i] for c in chunks]) for i in range(len(chunks[0])))


class RunRecord:
    def __init__(self, ndim, k):
        self.ndim, self.k = ndim, k
        self.dead = ChunkedRows()  # the DEAD_FIELDS of the dead points, in death order
        self.diag = {key: [] for key in SCALAR_KEYS}
        self.reflections_per_chain = []
        self.niter = self.nlike = self.ngrad = 0
        self.wall_time = 0.0
        self.running_logz, self.running_log_x = -np.inf, 0.0
        self.log_volume_offset = 0.0
        self.initial_draws = 0
        self.initial_nan = 0

    @classmethod
    def start(cls, ndim, k, initial_draws, log_volume_offset, initial_nan=0):
        rec = cls(ndim, k)
        rec.nlike = rec.initial_draws = int(initial_draws)
        rec.initial_nan = int(initial_nan)
        rec.log_volume_offset = float(log_volume_offset)
        return rec

    def add(self, info, logz, logz_remain):
        self.dead.append(tuple(getattr(info, f"dead_{f}") for f in DEAD_FIELDS))
        self.niter += 1
        self.nlike += info.nlike
        self.ngrad += info.ngrad
        values = (info.logl_star, info.step_size, info.n_steps, info.outside_fraction,
                  float(np.mean(info.reflections)), info.acceptance, info.rho_coord, info.rho_logl, info.jumps_tried,
                  info.jumps_accepted, info.nclusters, info.nlike, info.ngrad, info.nnan, info.nlive_before, logz,
                  logz_remain)
        for key, value in zip(SCALAR_KEYS, values):
            self.diag[key].append(value)
        self.reflections_per_chain.append(info.reflections)

    def last_remain(self):
        return self.diag["logz_remain"][-1] if self.diag["logz_remain"] else float("inf")

    @property
    def nnan(self) -> int:
        """Non-finite likelihood values seen: initial draws plus chains."""
        return int(self.initial_nan + sum(self.diag["nnan"]))

    def _no_dead(self):
        d = self.ndim
        return (np.empty((0, d)), np.empty((0, d)), np.empty(0), np.empty(0)) + tuple(
            np.empty(0, np.int64) for _ in DEAD_FIELDS[4:])

    def dead_arrays(self):
        """The DEAD_FIELDS (u, theta, logl, birth, thread, uid, parent, label) of the dead points in death order."""
        return self.dead.arrays() if self.dead.size else self._no_dead()

    def diagnostics(self) -> dict:
        out = {key: np.asarray(self.diag[key], dtype=np.int64 if key in _INT_KEYS else np.float64)
               for key in SCALAR_KEYS}
        out["reflections_per_chain"] = (np.asarray(self.reflections_per_chain, dtype=np.int64)
                                        if self.reflections_per_chain else np.empty((0, self.k), np.int64))
        return out

    # --- checkpoint round trip -------------------------------------------------------------------------------

    def dead_parts(self, field) -> list:
        """The chunks of one of the DEAD_FIELDS (by name), in death order, without joining them."""
        i = DEAD_FIELDS.index(field)
        return self.dead.parts(i) if self.dead.size else [self._no_dead()[i]]

    def arrays(self) -> dict:
        """The checkpoint's arrays of the record; the dead points' as :class:`~sampler.checkpoint.Stacked` chunks."""
        from .checkpoint import Stacked

        out = {f"dead_{f}": Stacked(tuple(self.dead_parts(f))) for f in DEAD_FIELDS}
        out.update({f"diag_{k}": v for k, v in self.diagnostics().items()})
        return out

    def scalars(self) -> dict:
        return {"ndim": self.ndim, "k": self.k, "niter": self.niter, "nlike": self.nlike, "ngrad": self.ngrad,
                "wall_time": self.wall_time, "running_logz": repr(self.running_logz),
                "running_log_x": repr(self.running_log_x), "log_volume_offset": repr(self.log_volume_offset),
                "initial_draws": self.initial_draws, "initial_nan": self.initial_nan}

    @classmethod
    def from_saved(cls, arrays, scalars):
        rec = cls(int(scalars["ndim"]), int(scalars["k"]))
        rec.niter, rec.nlike, rec.ngrad = int(scalars["niter"]), int(scalars["nlike"]), int(scalars["ngrad"])
        rec.wall_time = float(scalars["wall_time"])
        # Floats travel as repr strings so that -inf and every bit of the running sums come back exactly.
        rec.running_logz = float(scalars["running_logz"])
        rec.running_log_x = float(scalars["running_log_x"])
        rec.log_volume_offset = float(scalars["log_volume_offset"])
        rec.initial_draws = int(scalars["initial_draws"])
        rec.initial_nan = int(scalars.get("initial_nan", 0))
        if arrays["dead_logl"].size:
            rec.dead.append(tuple(np.asarray(arrays[f"dead_{f}"]) for f in DEAD_FIELDS))
        for key in SCALAR_KEYS:
            rec.diag[key] = list(arrays[f"diag_{key}"])
        rec.reflections_per_chain = list(arrays["diag_reflections_per_chain"])
        return rec
