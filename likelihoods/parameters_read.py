"""Which parameters a kernel can read, so that a parameter it never reads is named before sampling (its
posterior would silently be its prior).

Constant reads (``theta[2]``) are known from the source alone. Reads through a loop variable (``theta[j]`` in
``for j in range(x.shape[1])``) are known once the data's shapes are: the index takes the values ``const + coef *
j`` over the loop's range, which over-approximates what is read (a guarded read counts as read), so a parameter
outside every such set is certainly never read. Where an index depends on data values or theta is used whole
(passed to a function not followed, reduced, unpacked, used as a number), nothing is claimed.
"""
from .index_forms import size_value


def parameters_read(use, nparams, shapes=None, values=None):
    """The set of theta indices (0..nparams-1) the kernel may read, or None when that cannot be told.
    ``shapes``, ``values``: ``bounds.data_sizes`` of the data (theta's shape included)."""
    name = use.args[0]
    theta = use.uses[name]
    if not use.complete or theta.opaque or theta.reduced or theta.unpack is not None or theta.scalar_at is not None:
        return None
    read = {k % nparams for k in theta.const_reads if -nparams <= k < nparams}
    if not theta.dynamic:
        return read
    if shapes is None:
        return None
    values = values or {}
    for access in use.accesses:
        if access.array != name:
            continue
        if len(access.forms) != 1 or access.forms[0] is None:
            return None  # an index from data values or arithmetic not understood
        form = access.forms[0]
        const = size_value(form.const, shapes, values)
        if const is None:
            return None
        if form.loop is None or form.coef == 0:
            if -nparams <= const < nparams:
                read.add(const % nparams)
            continue
        start, stop = (None, None) if form.loop.start is None else (size_value(form.loop.start, shapes, values),
                                                                    size_value(form.loop.stop, shapes, values))
        if start is None or stop is None:
            return None
        step = form.loop.step
        taken = range(const + form.coef * start, const + form.coef * stop, form.coef * step)
        read.update(k for k in range(nparams) if k in taken)
    return read


def unused_parameters(use, params, shapes=None, values=None):
    """Names in ``params`` the kernel never reads, or [] when that cannot be told."""
    read = parameters_read(use, len(params), shapes, values)
    return [] if read is None else [p for k, p in enumerate(params) if k not in read]


__all__ = ["parameters_read", "unused_parameters"]
