"""Regenerate the example data: 50 radial velocities over 400 days of a planet with P = 57 d, K = 30 m/s,
e = 0.35, omega = 1.2, phase = 0.7, v0 = -3 m/s, errors 3-6 m/s.

    python configs/kepler/data/make_data.py
"""
from pathlib import Path

import numpy as np

TRUTH = {"period": 57.0, "k": 30.0, "e": 0.35, "omega": 1.2, "phase": 0.7, "v0": -3.0}


def model(t, period, k, e, omega, phase, v0):
    m = 2.0 * np.pi * t / period + phase
    ecc = m.copy()
    for _ in range(100):  # Newton, to machine precision
        ecc = ecc - (ecc - e * np.sin(ecc) - m) / (1.0 - e * np.cos(ecc))
    nu = 2.0 * np.arctan2(np.sqrt(1 + e) * np.sin(ecc / 2), np.sqrt(1 - e) * np.cos(ecc / 2))
    return v0 + k * (np.cos(nu + omega) + e * np.cos(omega))


def main(folder=Path(__file__).parent, n=50, seed=11):
    rng = np.random.default_rng(seed)
    t = np.sort(rng.uniform(0.0, 400.0, n))
    rv_err = rng.uniform(3.0, 6.0, n)
    rv = model(t, **TRUTH) + rng.normal(0.0, rv_err)
    for name, values in (("t", t), ("rv", rv), ("rv_err", rv_err)):
        np.save(folder / f"{name}.npy", values)


if __name__ == "__main__":
    main()
