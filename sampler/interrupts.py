"""Ctrl-C while a run compiles or sets up, before :class:`sampler.checkpoint.SignalGuard` takes over.

Python turns SIGINT into ``KeyboardInterrupt`` wherever the interpreter happens to be; when that is a destructor
(llvmlite frees its objects in ``__del__`` throughout a numba compile) the exception is printed as "Exception
ignored" and dropped, and the run went on as if no key was pressed (an outsider's 1 in 6 tries).
:class:`InterruptLatch` remembers the signal, so that leaving the block raises what was swallowed.
"""

import signal
import threading


class InterruptLatch:
    """Context manager: SIGINT raises ``KeyboardInterrupt`` as usual and is also remembered; if the exception was
    swallowed on its way (by a destructor), leaving the block raises it again. Inactive outside the main thread."""

    def __init__(self):
        self.enabled = threading.current_thread() is threading.main_thread()
        self.received = False
        self._previous = None

    def _handler(self, signum, frame):
        self.received = True
        raise KeyboardInterrupt

    def __enter__(self):
        if self.enabled and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            self._previous = signal.signal(signal.SIGINT, self._handler)
        return self

    def __exit__(self, exc_type, exc, tb):
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
            self._previous = None
        if self.received and exc_type is None:
            raise KeyboardInterrupt
        return False
