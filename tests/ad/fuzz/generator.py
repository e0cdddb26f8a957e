"""Random kernels in the accepted subset, as Python source text (one ``Program`` per seed).

The text is the single source of truth: nestgrad differentiates it (after it is written to a file and
imported), the plain Python kernel runs it, and ``jax_interp`` interprets its ``ast``. Every construct is
domain-safe by construction (``log``/``sqrt`` of ``1 + e*e``, divisions by ``1.5 + e*e``, ``exp`` of a
``tanh``), every variable is assigned before any branch, loops have bounds that do not depend on ``theta``,
integer ``//`` and ``%`` divide by positive constants or the data length, and array indices stay in range.

``Features`` switches construct families on and off; ``FAST`` is the set the committed fast suite runs,
``KNOWN_BUGS`` lists the switches that expose open findings (see FINDINGS.md).
"""
import dataclasses
import random

import numpy as np


@dataclasses.dataclass(frozen=True)
class Features:
    helpers: bool = True          # module-level helpers, a helper calling a helper
    loops: bool = True            # for i in range(...)
    nested_loops: bool = True     # a loop inside a loop, inner bound may be the outer index
    int_state: bool = True        # integer variables updated in loops and branches
    swaps: bool = True            # a, b = b, a / a, b = e1, e2 / a, b, c = c, a, b (in loops: loop_tuples)
    minmax: bool = True           # min / max / abs
    int_divmod: bool = True       # integer // and % (indices x[j % n])
    early_return: bool = True     # if cond: return e   (outside loops)
    ifexp: bool = True            # e if cond else e
    specials: bool = True         # ad.special functions and the rarer math functions
    data2d: bool = True           # z[r, i], z.shape[1]
    int_arg: bool = True          # an integer kernel argument used as a loop bound
    guard_flags: bool = True      # stop = False ... if not stop: ... stop = True
    cmp_values: bool = True       # comparisons used as numbers: s += (a > b), k + (i < j)
    andor_values: bool = True     # and/or whose operand value is used: (a > 0.0 and b) as a number
    float_divmod: bool = True     # float // and %, math.floor
    loop_tuples: bool = True      # tuple assignment (swap, rotation) inside a loop body (F1, fixed)
    # switches for constructs with open findings (FINDINGS.md) go here, off in FAST


FAST = Features()
KNOWN_BUGS = dataclasses.replace(FAST)  # FAST with the open findings' switches on (none open now)
ALL_NAMES = [f.name for f in dataclasses.fields(Features)]


@dataclasses.dataclass
class Program:
    seed: int
    source: str
    ntheta: int
    args: tuple          # the data arguments after theta: (x, z, m)

    def points(self, count, rng):
        return rng.uniform(-1.5, 1.5, size=(count, self.ntheta))


UNARY = [
    "math.exp(math.tanh({0}))", "math.log(1.0 + {0} * {0})", "math.sqrt(1.0 + {0} * {0})", "math.sin({0})",
    "math.cos({0})", "math.tanh({0})", "math.atan({0})", "(-{0})", "math.exp(-{0} * {0})", "({0} ** 2)",
    "({0} ** 3)",
]
SPECIAL_UNARY = [
    "math.log1p({0} * {0})", "math.expm1(math.tanh({0}))", "math.erf({0})", "math.erfc({0})",
    "math.sinh(math.tanh({0}))", "math.cosh(math.tanh({0}))", "math.lgamma(1.5 + {0} * {0})",
    "special.digamma(1.5 + {0} * {0})", "special.log1pexp({0})", "math.hypot({0}, 1.0)",
    "math.log2(2.0 + {0} * {0})", "math.log10(1.0 + {0} * {0})", "math.fabs({0})", "math.tan(math.tanh({0}))",
]
BINARY = ["({0} + {1})", "({0} - {1})", "({0} * {1})", "({0} / (1.5 + {1} * {1}))"]
SPECIAL_BINARY = [
    "math.atan2({0}, 1.5 + {1} * {1})", "math.pow(1.25 + {0} * {0}, math.tanh({1}))",
    "special.logaddexp({0}, {1})", "special.xlogy({0}, 1.0 + {1} * {1})",
    "special.lbeta(1.0 + {0} * {0}, 1.5 + {1} * {1})", "((1.5 + {0} * {0}) ** math.tanh({1}))",
]


class Gen:
    def __init__(self, seed, feats, size=1.0):
        self.rng = random.Random(seed)
        self.f = feats
        self.size = size
        self.ntheta = self.rng.choice([2, 3])
        self.floats = []      # float variables in scope
        self.ints = []        # integer variables in scope (assignable)
        self.iread = []       # read-only integers (a helper's k)
        self.loopvars = []    # loop indices in scope (read-only)
        self.helpers = []     # (name, kind) kind: "ff" (a, b) or "fxk" (a, x, k)
        self.in_helper = False
        self.depth_left = 0

    # ---- expressions -------------------------------------------------------------------------------
    def chance(self, p):
        return self.rng.random() < p

    def flit(self):
        return self.rng.choice(["0.5", "1.25", "2.0", "-0.75", "0.3", "-1.5"])

    def fleaf(self):
        r = self.rng
        opts = [lambda: r.choice(self.floats)] if self.floats else []
        if self.in_helper == "fxk":
            opts.append(lambda: f"x[({self.iexpr(1)}) % len(x)]")
        if not self.in_helper:
            opts.append(lambda: f"theta[{r.randrange(self.ntheta)}]")
            if self.loopvars:
                opts.append(lambda: f"x[{r.choice(self.loopvars)}]")
                if self.f.int_divmod:
                    opts.append(lambda: f"x[({self.iexpr(1)}) % n]")
                if self.f.data2d:
                    opts.append(lambda: f"z[{r.randrange(2)}, {r.choice(self.loopvars)} % z.shape[1]]")
            else:
                opts.append(lambda: f"x[{r.randrange(3)}]")
        opts.append(self.flit)
        return r.choice(opts)()

    def fexpr(self, d):
        r = self.rng
        if d <= 0 or self.chance(0.25):
            return self.fleaf()
        kinds = ["u", "u", "b", "b", "b"]
        if self.f.minmax:
            kinds.append("mm")
        if self.f.specials:
            kinds += ["su", "sb"]
        if self.f.ifexp:
            kinds.append("ifexp")
        if self.helpers:
            kinds += ["call", "call"]
        if self.ints or self.loopvars or self.iread:
            kinds.append("mixed")
        if self.f.cmp_values:
            kinds.append("cmpval")
        if self.f.andor_values:
            kinds.append("andor")
        if self.f.float_divmod:
            kinds.append("fdivmod")
        k = r.choice(kinds)
        if k == "u":
            return r.choice(UNARY).format(self.fexpr(d - 1))
        if k == "b":
            return r.choice(BINARY).format(self.fexpr(d - 1), self.fexpr(d - 1))
        if k == "su":
            return r.choice(SPECIAL_UNARY).format(self.fexpr(d - 1))
        if k == "sb":
            return r.choice(SPECIAL_BINARY).format(self.fexpr(d - 1), self.fexpr(d - 1))
        if k == "mm":
            if self.chance(0.3):
                return f"abs({self.fexpr(d - 1)})"
            return f"{r.choice(['min', 'max'])}({self.two(self.fexpr, d - 1)})"
        if k == "ifexp":
            return f"({self.fexpr(d - 1)} if {self.cond(d - 1)} else {self.fexpr(d - 1)})"
        if k == "call":
            return self.call(d - 1)
        if k == "mixed":
            return f"({self.fexpr(d - 1)} * {self.iexpr(d - 1)})"
        if k == "cmpval":
            return f"({self.fexpr(d - 1)} * ({self.cmp(d - 1)}))"
        if k == "andor":
            # 1.0 * (...): a bare numpy bool in a float variable would add as logical or (np.True_ + np.True_)
            return f"(1.0 * (({self.cmp(d - 1)}) {r.choice(['and', 'or'])} {self.fexpr(d - 1)}))"
        # fdivmod
        return r.choice([f"({self.fexpr(d - 1)} % 1.5)", f"({self.fexpr(d - 1)} // 0.5)",
                         f"math.floor({self.fexpr(d - 1)})"])

    def call(self, d):
        usable = [h for h in self.helpers if self.in_helper != "ff" or h[1] == "ff"]
        if not usable:
            return self.fleaf()
        name, kind = self.rng.choice(usable)
        if kind == "ff":
            return f"{name}({self.fexpr(d)}, {self.fexpr(d)})"
        if self.in_helper:
            return f"{name}({self.fexpr(d)}, x, {self.iexpr(d)})"
        return f"{name}({self.fexpr(d)}, x, {self.iexpr(d)})"

    def two(self, gen, d, sep=", "):
        """Two different operands (an exact tie like ``min(a, a)`` would only be skipped)."""
        a = gen(d)
        for _ in range(5):
            b = gen(d)
            if b != a:
                break
        return f"{a}{sep}{b}"

    def ileaf(self):
        r = self.rng
        opts = [lambda: str(r.randrange(4))]
        if not self.in_helper:
            opts.append(lambda: "n")
        if self.ints or self.iread:
            opts.append(lambda: r.choice(self.ints + self.iread))
        if self.loopvars:
            opts.append(lambda: r.choice(self.loopvars))
        return r.choice(opts)()

    def iexpr(self, d):
        r = self.rng
        if d <= 0 or self.chance(0.4):
            return self.ileaf()
        kinds = ["add", "sub", "scale"]
        if self.f.int_divmod:
            kinds += ["div", "mod"]
        if self.f.minmax:
            kinds.append("mm")
        if self.f.cmp_values:
            kinds.append("cmpval")
        k = r.choice(kinds)
        if k == "add":
            return f"({self.iexpr(d - 1)} + {self.iexpr(d - 1)})"
        if k == "sub":
            return f"({self.iexpr(d - 1)} - {self.iexpr(d - 1)})"
        if k == "scale":
            return f"({self.iexpr(d - 1)} * {r.choice([2, 3])})"
        if k == "div":
            return f"({self.iexpr(d - 1)} // {r.choice([2, 3])})"
        if k == "mod":
            return f"({self.iexpr(d - 1)} % {r.choice([2, 3, 5])})"
        if k == "mm":
            if self.chance(0.3):
                return f"abs({self.iexpr(d - 1)})"
            return f"{r.choice(['min', 'max'])}({self.iexpr(d - 1)}, {self.iexpr(d - 1)})"
        return f"({self.iexpr(d - 1)} + ({self.icmp(d - 1)}))"

    def icmp(self, d):
        op = self.rng.choice(["<", "<=", ">", ">=", "==", "!="])
        return f"{self.iexpr(d)} {op} {self.iexpr(d)}"

    def cmp(self, d):
        if not (self.ints or self.loopvars or self.iread) or self.chance(0.7):
            op = self.rng.choice(["<", ">", "<=", ">="])
            if self.chance(0.4):
                return f"{self.fexpr(d)} {op} {self.flit()}"
            return self.two(self.fexpr, d, f" {op} ")
        return self.icmp(d)

    def cond(self, d):
        r = self.rng
        c = self.cmp(d)
        roll = r.random()
        if roll < 0.15:
            return f"not ({c})"
        if roll < 0.3:
            return f"{c} {r.choice(['and', 'or'])} {self.cmp(d)}"
        return c

    # ---- statements (lists of source lines, indented by the caller) ---------------------------------
    def block(self, count, nest, top=False):
        lines = []
        for _ in range(count):
            lines += self.stmt(nest, top)
        return lines or ["pass"]

    def stmt(self, nest, top):
        r = self.rng
        kinds = ["f", "f", "f"]
        if self.f.int_state and self.ints:
            kinds.append("i")
        if self.f.swaps and len(self.floats) >= 2 and (self.f.loop_tuples or not self.loopvars):
            kinds.append("swap")
        if nest < 3:
            kinds += ["if", "if"]
            if self.f.loops and (not self.loopvars or self.f.nested_loops) and len(self.loopvars) < 2 \
                    and self.in_helper != "ff":
                kinds += ["for", "for"]
            if self.f.guard_flags and self.loopvars and not self.in_helper:
                kinds.append("guard")
        if top and self.f.early_return:
            kinds.append("ret")
        k = r.choice(kinds)
        d = self.rng.choice([1, self.depth_left])
        if k == "f":
            v = r.choice(self.floats)
            form = r.choice(["{v} = {e}", "{v} += {e}", "{v} -= {e}", "{v} *= math.tanh({e})",
                             "{v} /= 1.5 + {e} * {e}"])
            return [form.format(v=v, e=self.fexpr(d))]
        if k == "i":
            v = r.choice(self.ints)
            return [r.choice(["{v} = {e}", "{v} += {e}", "{v} -= {e}"]).format(v=v, e=self.iexpr(d))]
        if k == "swap":
            if len(self.floats) >= 3 and self.chance(0.3):   # rotation, one value possibly recomputed
                a, b, c = r.sample(self.floats, 3)
                rhs = [c, a, b]
                if self.chance(0.5):
                    rhs[r.randrange(3)] = self.fexpr(d)
                return [f"{a}, {b}, {c} = {', '.join(rhs)}"]
            a, b = r.sample(self.floats, 2)
            if self.chance(0.6):
                return [f"{a}, {b} = {b}, {a}"]
            return [f"{a}, {b} = {self.fexpr(d)}, {self.fexpr(d)}"]
        if k == "if":
            lines = [f"if {self.cond(d)}:"] + self.indent(self.block(r.randint(1, 2), nest + 1))
            for _ in range(r.choice([0, 0, 1])):
                lines += [f"elif {self.cond(d)}:"] + self.indent(self.block(r.randint(1, 2), nest + 1))
            if self.chance(0.6):
                lines += ["else:"] + self.indent(self.block(r.randint(1, 2), nest + 1))
            return lines
        if k == "for":
            var = "ijl"[len(self.loopvars)]
            line = f"for {var} in range({self.bound()}):"
            self.loopvars.append(var)
            body = self.block(r.randint(1, 2), nest + 1)
            self.loopvars.pop()
            return [line] + self.indent(body)
        if k == "guard":
            body = self.block(r.randint(1, 2), nest + 1)
            return (["if not stop:"] + self.indent(body + [f"if {self.cond(d)}:", "    stop = True"]))
        return [f"if {self.cond(d)}:", f"    return {self.fexpr(d)}"]

    def bound(self):
        r = self.rng
        if self.in_helper:
            return r.choice(["len(x)", "2", "1, len(x)"])
        opts = ["n", "n", "3", "1, n", "0, n, 2", "len(x)"]
        if self.f.int_arg:
            opts.append("m")
        if self.f.data2d:
            opts.append("z.shape[1]")
        if self.loopvars:
            opts += [f"{self.loopvars[-1]} + 1", f"{self.loopvars[-1]}, n"]
        return r.choice(opts)

    @staticmethod
    def indent(lines):
        return ["    " + s for s in lines]

    # ---- whole programs ------------------------------------------------------------------------------
    def helper(self, name, kind):
        self.in_helper, self.floats, self.ints = kind, ["a", "t"], []
        self.iread = ["k"] if kind == "fxk" else []
        self.depth_left = 1
        args = "a, b" if kind == "ff" else "a, x, k"
        if kind == "ff":
            self.floats.append("b")
        self.floats.remove("t")
        lines = [f"def {name}({args}):", f"    t = {self.fexpr(1)}"]
        self.floats.append("t")
        lines += self.indent(self.block(self.rng.randint(1, 2), 2, top=True))
        lines.append(f"    return {self.fexpr(1)}")
        self.helpers.append((name, kind))
        return lines

    def kernel(self):
        r = self.rng
        lines = []
        if self.f.helpers:
            for h in range(r.choice([0, 1, 1, 2])):
                lines += self.helper(f"h{h}", r.choice(["ff", "fxk"])) + ["", ""]
        self.in_helper, self.iread, self.depth_left = False, [], 2
        nf = r.randint(2, 4)
        self.floats, self.ints = [], []
        body = ["n = x.shape[0]"]
        for v in range(nf):
            body.append(f"f{v} = {self.fexpr(1)}")
            self.floats.append(f"f{v}")
        if self.f.int_state:
            for v in range(r.randint(1, 2)):
                body.append(f"k{v} = {r.randrange(3)}")
                self.ints.append(f"k{v}")
        if self.f.guard_flags:
            body.append("stop = False")
        body += self.block(max(1, int(r.randint(2, 4) * self.size)), 0, top=True)
        body.append(f"return {' + '.join(self.floats)} + {self.fexpr(self.depth_left)}")
        lines += ["def kern(theta, x, z, m):"] + self.indent(body)
        return "import math\n\nfrom ad import special\n\n\n" + "\n".join(lines) + "\n"


def generate(seed, feats=FAST, size=1.0):
    """The random kernel ``kern(theta, x, z, m)`` of ``seed`` and its data."""
    g = Gen(seed, feats, size)
    source = g.kernel()
    data = np.random.default_rng(seed)
    n = int(g.rng.choice([3, 4]))
    x = np.round(data.uniform(-1.0, 1.0, n), 3)
    z = np.round(data.uniform(-1.0, 1.0, (2, g.rng.choice([2, 3]))), 3)
    return Program(seed, source, g.ntheta, (x, z, int(g.rng.choice([1, 2, 3]))))
