"""Errors for mistakes in what a user hands to :class:`likelihoods.Likelihood` (kernel references, data)."""


class LikelihoodError(ValueError):
    """A user mistake; the message names the place (``file:line:col``, a data key or an argument)."""


class DataError(LikelihoodError):
    """Data that does not fit the kernel. ``key`` is the data key (kernel argument name) concerned."""

    def __init__(self, key, message):
        self.key = key
        super().__init__(f"data key {key!r}: {message}")
