"""One BLAS thread while sampling.

Between chain launches the sampler does small dense linear algebra (the live points' covariance and Cholesky
factor every iteration, a kNN distance matrix every few). OpenBLAS's default of one thread per core makes each of
these calls wait for its worker threads, which compete with the chain threads and with anything else the machine
runs: on the 2-core development machine under load, ``np.cov`` of 500 x 20 points took 35 ms instead of 0.4 ms,
and a run of the ill-conditioned 20-D Gaussian (nlive 500) took 38-41 s instead of 21-28 s, with the same bits.
The limit is set with threadpoolctl around the run, so it holds whatever imported numpy first, and is lifted
after it.
"""

import contextlib


def one_blas_thread():
    """A context manager limiting BLAS libraries to one thread (a no-op without threadpoolctl)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # an optional speed-up: sampling is correct without it
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")
