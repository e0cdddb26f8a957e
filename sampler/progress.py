"""Progress display: a tqdm bar on a terminal, silence otherwise (logs and CI stay clean)."""

import sys
import time

# Points (dead and final live) from which a run says on the terminal what it does after its last iteration: at
# 3.9M points in 30-D the evidence, errors and ESS took 10-20 s and the run folder 25-30 s with nothing shown.
LARGE_RUN = 1_000_000


class Progress:
    """Shows iteration, logL*, logZ, remaining dlogz and evaluations per second when enabled and stderr is a
    TTY. ``update`` is cheap when disabled, and the display is refreshed at most ten times a second."""

    def __init__(self, enabled: bool, dlogz: float, stream=None):
        stream = stream if stream is not None else sys.stderr
        self.enabled = bool(enabled) and hasattr(stream, "isatty") and stream.isatty()
        self.dlogz = dlogz
        self._stream = stream
        self._bar = None
        self._last = 0.0
        self._start = time.perf_counter()
        if self.enabled:
            try:
                from tqdm import tqdm
            except ImportError:  # tqdm is a dependency, but a missing bar must not stop a run
                self.enabled = False
                return
            self._bar = tqdm(total=None, unit="it", file=stream, dynamic_ncols=True, leave=True)

    def start_clock(self) -> None:
        """Evaluations per second count from now (after compiling)."""
        self._start = time.perf_counter()

    def message(self, text: str) -> None:
        """A line above the bar (e.g. "compiling ..." before the first iteration); nothing when disabled."""
        if self._bar is not None:
            self._bar.write(f"nestgrad: {text} ...", file=self._stream)
            self._bar.refresh()

    def stage(self, text: str) -> None:
        """A line saying what a long stage after the iterations does (the bar is closed by then); nothing when
        disabled."""
        if self.enabled:
            self._stream.write(f"nestgrad: {text} ...\n")
            self._stream.flush()

    def update(self, niter: int, logl_star: float, logz: float, logz_remain: float, nlike: int,
               nnan: int = 0) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self._last < 0.1:
            return
        self._last = now
        rate = nlike / max(now - self._start, 1e-9)
        self._bar.n = niter
        self._bar.set_postfix_str(f"logL*={logl_star:.4g} logZ={logz:.4g} "
                                  f"dlogz={logz_remain:.3g}>{self.dlogz:g} {rate:.3g} evals/s"
                                  + (f" NaN={100 * nnan / max(nlike, 1):.2g}%" if nnan else ""), refresh=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
