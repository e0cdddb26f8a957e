"""Regenerate the example data: 40 points on the line y = 1 + 0.5 x with errors 0.1-0.3 and scatter 0.3.

    python configs/custom/data/make_data.py
"""
from pathlib import Path

import numpy as np

TRUTH = {"a": 1.0, "b": 0.5, "s": 0.3}


def main(folder=Path(__file__).parent, n=40, seed=7):
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(0.0, 10.0, n))
    yerr = rng.uniform(0.1, 0.3, n)
    y = TRUTH["a"] + TRUTH["b"] * x + rng.normal(0.0, np.sqrt(yerr**2 + TRUTH["s"] ** 2))
    for name, values in (("x", x), ("y", y), ("yerr", yerr)):
        np.save(folder / f"{name}.npy", values)


if __name__ == "__main__":
    main()
