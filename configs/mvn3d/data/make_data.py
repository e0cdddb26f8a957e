"""Regenerate the example data: 200 draws of a zero-mean 3-D normal whose covariance has the Cholesky factor
L = [[1.2, 0, 0], [0.5, 0.8, 0], [-0.3, 0.4, 0.6]].

    python configs/mvn3d/data/make_data.py
"""
from pathlib import Path

import numpy as np

L_TRUE = np.array([[1.2, 0.0, 0.0], [0.5, 0.8, 0.0], [-0.3, 0.4, 0.6]])


def main(folder=Path(__file__).parent, n=200, seed=9):
    rng = np.random.default_rng(seed)
    np.save(folder / "x.npy", rng.normal(size=(n, 3)) @ L_TRUE.T)


if __name__ == "__main__":
    main()
