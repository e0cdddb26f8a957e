"""nestgrad.run refuses bad arguments by name before anything is compiled, and exposes the documented names."""
import re

import pytest

import nestgrad as ng
from nestgrad.sampler.parameter_names import typeset_problem
from nestgrad.sampler.priors import PriorError
from nestgrad.sampler.run_folder import RunFolderError


def kernel(theta, x):
    return -0.5 * (theta[0] - x) ** 2


def test_public_names_resolve():
    for name in ng.__all__:
        assert getattr(ng, name) is not None
    assert ng.Prior is ng.priors.Prior and callable(ng.run) and callable(ng.differentiate)
    with pytest.raises(AttributeError):
        ng.no_such_name  # noqa: B018


def test_unknown_setting_is_named():
    with pytest.raises(TypeError, match="nlife"):
        ng.run(kernel, {"a": {"prior": "uniform", "low": 0, "high": 1}}, {"x": 0.5}, nlife=100)


@pytest.mark.parametrize("params, needle", [
    ({"a": {"low": 0, "high": 1}}, "'prior' key"),
    ({"a": {"prior": "unifrom", "low": 0, "high": 1}}, "unifrom"),
    ({"a": {"prior": "uniform", "low": 1, "high": 0}}, "low < high"),
    ({"a": 3.0}, "prior spec"),
])
def test_bad_prior_spec_names_the_parameter(params, needle):
    with pytest.raises(PriorError, match=needle) as error:
        ng.run(kernel, params, {"x": 0.5}, backend="python")
    assert str(error.value).startswith("parameter 'a': ")


def test_spec_dicts_keep_labels_and_order():
    prior = ng.Prior.from_spec({"b": {"prior": "normal", "mu": 0, "sigma": 2, "latex": r"\beta"},
                                "a": ng.priors.Uniform(0, 1)})
    assert prior.names == ["b", "a"] and prior.latex == {"b": r"\beta"}


KERNELS = {"narrow": lambda theta: -0.5 * ((theta[0] - 0.5) / 0.1) ** 2}  # a lambda inside an expression


def test_a_lambda_kernel_is_refused_with_its_line_wherever_it_is_written():
    """Its source lines (a dict entry) do not parse on their own: a bare SyntaxError reached the user."""
    from nestgrad.likelihoods.errors import LikelihoodError

    for kernel in (KERNELS["narrow"], lambda theta: -theta[0] ** 2):
        with pytest.raises(LikelihoodError, match=r"test_api\.py:\d+:1: kernel must be a plain 'def' function"):
            ng.run(kernel, {"a": {"prior": "uniform", "low": 0, "high": 1}}, nlive=50, progress=False)


@pytest.mark.parametrize("seed", ["1", 1.5, -3, True])
def test_a_seed_that_is_not_a_non_negative_integer_is_refused(seed):
    """The API took seed="1" while refusing nlive="200"; a seed is an integer like the others."""
    from problems import gaussian
    from nestgrad.sampler import NestedSampler
    from nestgrad.sampler.nested_sampler import SamplerError

    problem = gaussian(2)
    with pytest.raises(SamplerError, match=rf"seed must be a non-negative integer .*got {seed!r}"):
        NestedSampler(problem, problem.prior, nlive=50, seed=seed)


def kernel2(theta, x):
    return -0.5 * ((theta[0] - x) ** 2 + (theta[1] - x) ** 2) / 0.01


def test_two_live_points_sample_without_numpy_warnings():
    """nlive 2 (the smallest allowed) leaves one survivor an iteration, whose spread numpy cannot measure: its
    warnings reached the user as `nestgrad: warning: Degrees of freedom <= 0 for slice` and three more."""
    import warnings

    import numpy as np

    uniform = {"prior": "uniform", "low": 0, "high": 1}
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        results = ng.run(kernel2, {"a": uniform, "b": uniform}, {"x": 0.5}, nlive=2, seed=3, backend="python",
                         progress=False)
    truth = np.log(2 * np.pi * 0.01)  # the Gaussian's mass, all of it inside the unit square
    assert np.isfinite(results.logz) and abs(results.logz - truth) < 5 * results.logz_err + 1.0


@pytest.mark.parametrize("arguments, error, needle", [
    ({"plots": ["cornr"]}, ValueError, "unknown kind 'cornr' (did you mean 'corner'?)"),
    ({"plots": "corner"}, TypeError, "expected a list such as ['corner', 'run'], got 'corner'"),
    ({"plots": ["corner"], "plot_formats": ("svg",)}, ValueError, "plot_formats"),
    ({"plots": ["corner"], "out": None}, TypeError, "plots need out="),
    ({"resume": True, "out": None}, TypeError, "resume=True needs out="),
])
def test_plots_and_resume_are_checked_before_the_run(tmp_path, arguments, error, needle):
    """An outsider's ``plots=["cornr"]`` raised a bare KeyError after the whole run (the plots lost), and
    ``resume=True`` or ``plots`` without a folder were silently ignored."""
    arguments = {"out": tmp_path / "out", **arguments}
    with pytest.raises(error, match=re.escape(needle)):
        ng.run(kernel, {"a": {"prior": "uniform", "low": 0, "high": 1}}, {"x": 0.5}, backend="python", **arguments)
    assert not (tmp_path / "out").exists()  # refused before anything was written


def test_an_output_folder_that_is_a_file_is_named_before_compiling(tmp_path):
    (tmp_path / "results").write_text("not a folder")
    with pytest.raises(RunFolderError, match=r"results: cannot be the output folder: it is a file"):
        ng.run(kernel, {"a": {"prior": "uniform", "low": 0, "high": 1}}, {"x": 0.5}, out=tmp_path / "results")
    with pytest.raises(RunFolderError, match=r"lies under .*results, which is a file"):
        ng.run(kernel, {"a": {"prior": "uniform", "low": 0, "high": 1}}, {"x": 0.5},
               out=tmp_path / "results" / "run1")


@pytest.mark.parametrize("arguments, error, needle", [
    # each was a traceback inside: "'list' object has no attribute 'items'", "'>' not supported between
    # instances of 'str' and 'int'", pathlib's "expected str, bytes or os.PathLike object, not int"
    ({"data": [0.5]}, ValueError, "data: expected a dict kernel-argument name -> value"),
    ({"data": (0.5,)}, ValueError, "data: expected a dict kernel-argument name -> value"),
    ({"dlogz": "0.1"}, ValueError, "dlogz: expected a number > 0 (e.g. 0.1), got text '0.1'"),
    ({"out": 5}, TypeError, "nestgrad.run: out: expected a folder path (text or a pathlib.Path), got int 5"),
    # taken as true, silently: progress shown, a run continued
    ({"progress": "no"}, TypeError, "nestgrad.run: progress: expected True or False, got text 'no'"),
    ({"resume": "no", "out": "somewhere"}, TypeError, "nestgrad.run: resume: expected True or False"),
])
def test_an_argument_of_the_wrong_type_is_named(tmp_path, monkeypatch, arguments, error, needle):
    monkeypatch.chdir(tmp_path)
    arguments = {"data": {"x": 0.5}, "backend": "python", "nlive": 10, "progress": False, **arguments}
    with pytest.raises(error, match=re.escape(needle)):
        ng.run(kernel, {"a": {"prior": "uniform", "low": 0, "high": 1}}, **arguments)
    assert list(tmp_path.iterdir()) == []  # nothing written


@pytest.mark.parametrize("path, arguments, needle", [
    ({"likelihood": {"builtin": "gaussian4d"}}, {}, "nestgrad.run_config: path: expected the YAML config file's "
                                                    "path (text or a pathlib.Path) or None for the default config, "
                                                    "got a mapping; settings in a dict run with nestgrad.run("),
    (5, {}, "nestgrad.run_config: path: expected the YAML config file's path"),
    (None, {"out": 5}, "nestgrad.run_config: out: expected a folder path (text or a pathlib.Path), got int 5"),
    (None, {"resume": "no"}, "nestgrad.run_config: resume: expected True or False, got text 'no'"),
])
def test_run_config_names_an_argument_of_the_wrong_type(tmp_path, monkeypatch, path, arguments, needle):
    """A dict given for the path ended in pathlib's "expected str, bytes or os.PathLike object, not dict"."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TypeError, match=re.escape(needle)):
        ng.run_config(path, **arguments)
    assert list(tmp_path.iterdir()) == []


UNIFORM = {"prior": "uniform", "low": 0, "high": 1}


@pytest.mark.parametrize("params, needle", [
    # 'mu 1' was written to the run folder's .paramnames as the name 'mu' labelled '1  mu 1'
    ({"mu 1": UNIFORM}, "parameter 'mu 1': a parameter name must be an identifier"),
    ({"": UNIFORM}, "parameter '': a parameter name must be an identifier"),
    ({"a/b": UNIFORM}, "parameter 'a/b': a parameter name must be an identifier"),
    ({5: UNIFORM}, "parameter 5: a parameter name must be text, got int 5"),
    # labels: str(5) was taken silently; '\mu_{1' failed in the plots after the run, which lost them
    ({"a": {**UNIFORM, "latex": 5}}, "parameter 'a': latex: expected text (a LaTeX label such as '\\mu_1'), "
                                     "got int 5"),
    ({"a": {**UNIFORM, "latex": ["a"]}}, "parameter 'a': latex: expected text"),
    ({"a": {**UNIFORM, "latex": "\\mu_{1"}}, "parameter 'a': latex: unbalanced braces { } in '\\\\mu_{1'"),
    ({"a": {**UNIFORM, "latex": "\\mux"}}, "parameter 'a': latex: matplotlib cannot typeset $\\mux$ for the "
                                          "plots: Unknown symbol: \\mux"),
    ({"a": {**UNIFORM, "latex": "a\nb"}}, "parameter 'a': latex: must be one line"),
])
def test_parameter_names_and_labels_the_outputs_cannot_use_are_refused(tmp_path, params, needle):
    with pytest.raises(PriorError, match=re.escape(needle)):
        ng.run(kernel, params, {"x": 0.5}, backend="python", nlive=10, progress=False, out=tmp_path / "out",
               plots=["corner"])
    assert not (tmp_path / "out").exists()  # refused before anything was written


def test_a_prior_made_directly_checks_its_names_and_labels():
    with pytest.raises(PriorError, match=re.escape("parameter 'a b': a parameter name must be an identifier")):
        ng.Prior({"a b": ng.priors.Uniform(0, 1)})
    with pytest.raises(PriorError, match=re.escape(r"parameter 'a': latex: unbalanced braces { } in '\\frac{a}{b'")):
        ng.Prior({"a": ng.priors.Uniform(0, 1)}, latex={"a": r"\frac{a}{b"})
    # typesetting is asked where plots are drawn (ng.run with plots=, a config with output.plots), not here
    assert ng.Prior({"a": ng.priors.Uniform(0, 1)}, latex={"a": r"\mux"}).latex == {"a": r"\mux"}


def test_labels_matplotlib_can_typeset_are_kept():
    labels = ["\\mu_1", "\\sigma_{\\rm tot}", "$\\log A$", "\\frac{a}{b}", "x\\_y", "\\Omega_m h^2"]
    prior = ng.Prior.from_spec({f"p{i}": {**UNIFORM, "latex": text} for i, text in enumerate(labels)})
    assert list(prior.latex.values()) == labels
    assert [typeset_problem(text) for text in labels] == [None] * len(labels)


def test_a_misspelt_setting_gets_the_nearest_name():
    with pytest.raises(TypeError, match=r"unknown setting\(s\) nlivee \(did you mean 'nlive'\?\); the settings: "
                                        r"nlive, dlogz"):
        ng.run(kernel, {"mu": {"prior": "uniform", "low": 0, "high": 1}}, {"x": 0.5}, nlivee=50)
    with pytest.raises(ValueError, match=r"hmc: unknown setting\(s\) nsteps \(did you mean 'n_steps'\?\)"):
        ng.run(kernel, {"mu": {"prior": "uniform", "low": 0, "high": 1}}, {"x": 0.5}, backend="python", nlive=10,
               progress=False, hmc={"nsteps": 3})


def divides_by_zero(theta, x):
    return -theta[0] ** 2 - x * (1.0 / 0.0)


def test_no_finite_prior_draw_names_the_kernel_line_where_python_raises():
    """1/0 in a kernel: the compiled kernel gives -inf everywhere, and the message blamed the prior ranges alone;
    running the kernel in Python finds the division at its line."""
    from nestgrad.sampler.nested_sampler import SamplerError
    with pytest.raises(SamplerError) as info:
        ng.run(divides_by_zero, {"mu": {"prior": "uniform", "low": 0, "high": 1}}, {"x": 0.5}, backend="python",
               nlive=5, progress=False)
    message = str(info.value)
    line = divides_by_zero.__code__.co_firstlineno + 1
    assert "fewer than 5 of 5000 prior draws have a finite log-likelihood" in message, message
    assert f"{__file__}:{line}:" in message and "raised ZeroDivisionError" in message, message
