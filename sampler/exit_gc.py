"""No collection over every live object when the interpreter exits.

Python's finalisation ends with a full garbage collection that walks every object still alive. After a run that
is numba's compiled kernels and typing caches, the imported modules and the results: 0.10-0.25 s of a seed-problem
process on the 2-core machine (0.025 s once they are frozen), a sixth of its whole run. The process is ending,
so nothing alive then needs collecting (module teardown still frees, and finalises, what reference counting
releases); an ``atexit`` hook moves it all into the permanent generation (``gc.freeze``) first. It is registered
by the first run and by the command line, and changes nothing while the program runs.
"""

import atexit
import gc

_registered = False


def freeze_at_exit() -> None:
    """Register (once) the exit hook described above."""
    global _registered
    if not _registered:
        atexit.register(gc.freeze)
        _registered = True
