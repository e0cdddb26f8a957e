"""Derivative rules: one table (rules.ADJOINTS) holds every adjoint, arithmetic included, and the reverse pass
reads it from there."""
import ast

import numpy as np
import pytest

from nestgrad.ad import rules
from test_core_helpers import assert_gradient_ok, from_text

ARITHMETIC = {"copy": 1, "tofloat": 1, "add": 2, "sub": 2, "neg": 1, "mul": 2, "div": 2, "mod": 2}
SPECIAL = {"digamma": 1, "trigamma": 1, "logaddexp": 2, "log1pexp": 1, "expit": 1, "xlogy": 2, "lbeta": 2}


def test_every_differentiable_operation_has_one_adjoint_per_argument():
    arity = dict(ARITHMETIC, **SPECIAL, abs=1, min=2, max=2, minimum=2, maximum=2)
    arity.update((name, n) for name, n in rules.MATH_FUNCS.items() if name not in rules.ZERO_DERIVATIVE)
    for name, n in arity.items():
        templates = rules.adjoints(name, exponent=2 if name == "pow" else None)
        assert templates is not None and len(templates) == n, name
    assert set(rules.ADJOINTS) | {"pow"} == set(arity)


@pytest.mark.parametrize("exponent", [None, 0, 1, 2, 3, -1, 0.5])
def test_pow_adjoints_exist_for_constant_and_variable_exponents(exponent):
    assert len(rules.adjoints("pow", exponent)) == 2


def test_templates_read_only_the_adjoint_the_arguments_the_result_math_and_special():
    names = {"g", "a", "b", "r", "math", "special", "float"}
    for name, templates in list(rules.ADJOINTS.items()) + [("pow", rules.adjoints("pow", None))]:
        for template in templates:
            tree = ast.parse(template, mode="eval")
            used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
            assert used <= names and "g" in used, (name, template)


ARITHMETIC_KERNELS = {
    "add_sub_neg": "def k(theta, x):\n    return -(theta[0] + x[0]) - (theta[1] - theta[0])\n",
    "mul_div": "def k(theta, x):\n    return theta[0] * theta[1] / (x[0] + theta[1] * theta[1])\n",
    "pow_constant": "def k(theta, x):\n    return theta[0] ** 3 + theta[1] ** 0.5 + theta[0] ** -1\n",
    "pow_variable": "def k(theta, x):\n    return theta[1] ** theta[0] + x[0] ** theta[1]\n",
    "mod": "def k(theta, x):\n    return (theta[0] * 3.0) % theta[1] + theta[1] % 0.7\n",
    "copy_tofloat": "def k(theta, x):\n    a = theta[0]\n    return float(a) * a + float(2) * theta[1]\n",
}


@pytest.mark.parametrize("name", sorted(ARITHMETIC_KERNELS))
def test_arithmetic_adjoints_match_finite_differences(name):
    text = ARITHMETIC_KERNELS[name]
    ns = {}
    exec(compile(text, "<rules-test>", "exec"), ns)
    assert_gradient_ok(from_text(text), ns["k"], (np.array([1.3, 1.9]), np.array([0.4])))


def test_reverse_pass_reads_arithmetic_adjoints_from_the_table(monkeypatch):
    text = "def k(theta, x):\n    return theta[0] * theta[1] + x[0]\n"
    theta, x = np.array([1.5, -2.0]), np.array([0.25])
    grad = np.zeros(2)
    from_text(text).value_and_grad(theta, x, grad)
    assert grad.tolist() == [-2.0, 1.5]
    # a (deliberately wrong) rule for * changes the generated adjoint: nothing about * is hard-coded elsewhere
    monkeypatch.setitem(rules.ADJOINTS, "mul", ("g * b * 2.0", "g * a * 3.0"))
    from_text(text).value_and_grad(theta, x, grad)
    assert grad.tolist() == [-4.0, 4.5]
