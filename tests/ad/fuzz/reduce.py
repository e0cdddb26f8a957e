"""Greedy minimiser for failing fuzz cases (used by hand to write FINDINGS.md, not by the tests).

    .venv/bin/python -m tests.ad.fuzz.reduce SEED [--bugs] [--jit]

deletes statements, splices ``if``/``for`` bodies, replaces expressions by one of their operands or a
constant, and drops unused helpers, as long as the case still fails the same way (same ``kind``).
"""
import ast
import copy
import sys

from . import generator, runner

STMT_LISTS = ("body", "orelse")


def _sites(tree):
    """(path, kind) edit sites; a path is a list of (field, index) from the module."""
    sites = []

    def visit(node, path):
        for field, value in ast.iter_fields(node):
            if isinstance(value, list):
                for i, child in enumerate(value):
                    if isinstance(child, ast.AST):
                        here = path + [(field, i)]
                        if isinstance(child, ast.stmt) and field in STMT_LISTS:
                            sites.append((here, "drop"))
                            if isinstance(child, (ast.If, ast.For)):
                                sites.append((here, "splice_body"))
                            if isinstance(child, ast.If) and child.orelse:
                                sites.append((here, "splice_else"))
                        if isinstance(child, ast.expr):
                            sites.append((here, "expr"))
                        visit(child, here)
            elif isinstance(value, ast.AST):
                here = path + [(field, None)]
                if isinstance(value, ast.expr) and not isinstance(value, (ast.Name, ast.Constant)):
                    sites.append((here, "expr"))
                visit(value, here)

    visit(tree, [])
    return sites


def _get(node, path):
    for field, i in path:
        node = getattr(node, field) if i is None else getattr(node, field)[i]
    return node


def _replace(tree, path, new):
    parent = _get(tree, path[:-1])
    field, i = path[-1]
    if i is None:
        setattr(parent, field, new)
    else:
        lst = getattr(parent, field)
        lst[i:i + 1] = new if isinstance(new, list) else [new]
        if not lst and field == "body":
            lst.append(ast.Pass())


def _variants(tree):
    for path, kind in _sites(tree):
        node = _get(tree, path)
        if kind == "drop":
            if isinstance(node, ast.FunctionDef) and node.name == "kern":
                continue
            yield path, kind, []
        elif kind == "splice_body":
            body = list(node.body)
            if isinstance(node, ast.For):
                body = [ast.Assign([ast.Name(node.target.id, ast.Store())], ast.Constant(0))] + body
            yield path, kind, body
        elif kind == "splice_else":
            yield path, kind, list(node.orelse)
        else:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr) and not isinstance(child, ast.Name) or \
                        isinstance(child, ast.Name) and child.id not in ("x", "z", "theta", "math", "special"):
                    yield path, kind, child
            if not isinstance(node, ast.Constant):
                yield path, kind, ast.Constant(0.5)


def _fails_like(prog, source, kind, jit):
    try:
        ast.parse(source)
        out = runner.run_program(generator.Program(prog.seed, source, prog.ntheta, prog.args), jit=jit)
    except Exception:  # noqa: BLE001 - an invalid variant is simply not kept
        return None
    return out if out.status == "fail" and out.kind == kind else None


def minimise(prog, kind, jit=False, log=print):
    """The smallest source found that still fails with ``kind``, and its outcome."""
    best, best_out = prog.source, None
    improved = True
    while improved:
        improved = False
        tree = ast.parse(best)
        for path, _, new in list(_variants(tree)):
            t = copy.deepcopy(tree)
            try:
                _replace(t, path, copy.deepcopy(new))
                src = "import math\n\nfrom ad import special\n\n\n" + ast.unparse(
                    ast.Module([n for n in t.body if isinstance(n, ast.FunctionDef)], [])) + "\n"
            except Exception:  # noqa: BLE001
                continue
            if len(src) >= len(best):
                continue
            out = _fails_like(prog, src, kind, jit)
            if out is not None:
                best, best_out, improved = src, out, True
                log(f"-- {len(best)} chars")
                break
    return best, best_out


def main(argv):
    import warnings
    warnings.simplefilter("ignore")
    seed = int(argv[0])
    feats = generator.KNOWN_BUGS if "--bugs" in argv else generator.FAST
    jit = "--jit" in argv
    prog = generator.generate(seed, feats)
    out = runner.run_program(prog, jit=jit)
    print(out.report())
    if out.status != "fail":
        return
    src, small = minimise(prog, out.kind, jit)
    print("=" * 60)
    print(f"data: x={prog.args[0].tolist()} z={prog.args[1].tolist()} m={prog.args[2]}")
    print(small.report() if small else src)


if __name__ == "__main__":
    main(sys.argv[1:])
