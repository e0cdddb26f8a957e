"""The modules of ad/ import each other without a cycle (function-level imports included), and ad/ imports
nothing of likelihoods/ or sampler/ (DESIGN.md: imports run sampler -> likelihoods -> ad)."""
import ast
import pathlib

AD_DIR = pathlib.Path(__file__).resolve().parents[2] / "ad"
PACKAGE_NAMES = ("nestgrad.ad", "ad")  # the installed name and the pre-package name of a source checkout


def _target(folder, name):
    """The module of ``folder`` that importing ``name`` from the package loads: a submodule, or the package."""
    return name if (folder / f"{name}.py").is_file() else "__init__"


def _edges(folder, path):
    """(imported module names inside ``folder``, imported names outside it) of one file, at any nesting depth."""
    inside, outside = set(), set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level == 1 or (node.level == 0 and module in PACKAGE_NAMES):
                if node.level == 1 and module:
                    inside.add(_target(folder, module.split(".")[0]))
                else:
                    inside.update(_target(folder, a.name) for a in node.names)
            elif node.level == 0 and any(module.startswith(p + ".") for p in PACKAGE_NAMES):
                inside.add(_target(folder, module.split(".")[-1]))
            else:
                outside.add("." * node.level + module)
        elif isinstance(node, ast.Import):
            for a in node.names:
                prefix = next((p for p in PACKAGE_NAMES if a.name.startswith(p + ".")), None)
                if prefix:
                    inside.add(_target(folder, a.name[len(prefix) + 1:].split(".")[0]))
                else:
                    outside.add(a.name)
    return inside, outside


def import_graph(folder):
    """``{module: set of modules of the same folder it imports}`` and ``{module: names it imports from outside}``."""
    graph, external = {}, {}
    for path in sorted(folder.glob("*.py")):
        graph[path.stem], external[path.stem] = _edges(folder, path)
    return graph, external


def find_cycle(graph):
    """One import cycle as a list ``[a, b, ..., a]``, or None."""
    state = {}  # module -> "open" while on the DFS stack, "done" after

    def visit(m, stack):
        state[m] = "open"
        stack.append(m)
        for n in sorted(graph.get(m, ())):
            if state.get(n) == "open":
                return stack[stack.index(n):] + [n]
            if n not in state:
                found = visit(n, stack)
                if found:
                    return found
        stack.pop()
        state[m] = "done"
        return None

    for m in sorted(graph):
        if m not in state:
            found = visit(m, [])
            if found:
                return found
    return None


def test_ad_has_no_import_cycle():
    graph, _ = import_graph(AD_DIR)
    # the graph is the real one: the pipeline's own imports are in it
    assert {"fence", "lower", "reverse", "emit"} <= graph["pipeline"]
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))


def test_ad_imports_nothing_from_likelihoods_or_sampler():
    _, external = import_graph(AD_DIR)
    wrong = {m: sorted(n for n in names if "likelihoods" in n or "sampler" in n or n.startswith(".."))
             for m, names in external.items()}
    assert not any(wrong.values()), wrong


def test_cycle_through_a_function_level_import_is_found(tmp_path):
    (tmp_path / "__init__.py").write_text("from . import a\n")
    (tmp_path / "a.py").write_text("from .b import f\n")
    (tmp_path / "b.py").write_text("def f():\n    from nestgrad.ad.c import g\n    return g\n")
    (tmp_path / "c.py").write_text("def g():\n    from . import a\n    return a\n")
    graph, _ = import_graph(tmp_path)
    assert graph["b"] == {"c"} and graph["c"] == {"a"}
    assert find_cycle(graph) == ["a", "b", "c", "a"]


def test_importing_a_name_of_the_package_depends_on_its_init(tmp_path):
    (tmp_path / "__init__.py").write_text("from .a import run\n")
    (tmp_path / "a.py").write_text("def run():\n    from . import helper_name\n")
    graph, _ = import_graph(tmp_path)
    assert find_cycle(graph) == ["__init__", "a", "__init__"]
