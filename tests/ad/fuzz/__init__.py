"""Differential fuzzer: random kernels, nestgrad's derivative against JAX's (issue 14).

One seed gives one ``generator.Program``: the source text of ``kern(theta, x, z, m)`` plus module-level helpers
(loops, nested loops with float and integer state, if/elif/else on parameter values, helpers calling helpers,
swaps, min/max/abs, integer ``//`` and ``%``, ``math`` and ``ad.special`` functions on safe domains, reads
``x[i]``, ``x[j % n]``, ``z[r, i]``) and its data. From that same text:

* the plain kernel: the text is written to a ``.py`` file and imported (``ad`` reads the source through the
  function object, helpers included) and called on float64 numpy arrays: the reference value;
* nestgrad: ``ad.differentiate(module.kern)``, then ``value_and_grad`` and ``grad`` in pure Python, and for
  a sample of cases the numba ``jit()`` versions;
* JAX (``jax_interp``): an interpreter of the text's ``ast`` that evaluates all test points at once. Values
  that depend on ``theta`` are ``(P,)`` arrays; a branch on such a value runs both sides under masks and merges
  assignments with ``select``, so every point follows exactly the path Python takes there, and ``jax.vjp`` of
  the batched program (cotangent ones; points are independent) gives each point's gradient of its own path.
  Nothing is jitted (per-case XLA compiles would cost seconds) and nothing relies on concretising tracers. The
  same interpreter run once with numpy instead of JAX gives a second value and, for each point, the margin of
  its closest float decision (comparison, min/max, abs, float ``//``/``%``/``floor``).

Per point: skipped when the plain value or JAX's value/gradient is non-finite or the margin is below
``runner.MARGIN`` (the derivative is not defined there, or a rounding difference could flip the branch);
otherwise plain, numpy-interpreted and JAX values must agree (else the harness is wrong, kind ``oracle``),
nestgrad's values must match the plain value and its gradients JAX's, within ``runner.VALUE_TOL`` /
``GRAD_TOL``. ``ad.UnsupportedError`` is an accepted, counted outcome; any other exception (a numba typing
error included) or a wrong number is a failure. ``reduce`` minimises a failing seed for FINDINGS.md.
"""
