"""Regenerate the example data: prey and predator counts every 0.5 time units, from the RK4 solution with
a = 1.0, b = 0.6, c = 0.8, d = 0.5 and Gaussian noise 0.05.

    python configs/lotka_volterra/data/make_data.py
"""
from pathlib import Path

import numpy as np

TRUTH = {"a": 1.0, "b": 0.6, "c": 0.8, "d": 0.5, "sigma": 0.05}


def solve(a, b, c, d, t_obs, dt):
    f = lambda y: np.array([a * y[0] - b * y[0] * y[1], -c * y[1] + d * y[0] * y[1]])  # noqa: E731
    y, out = np.array([1.0, 0.5]), []
    for _ in t_obs:
        for _ in range(int(t_obs[0] / dt + 0.5)):
            q1 = f(y)
            q2 = f(y + 0.5 * dt * q1)
            q3 = f(y + 0.5 * dt * q2)
            q4 = f(y + dt * q3)
            y = y + dt / 6.0 * (q1 + 2 * q2 + 2 * q3 + q4)
        out.append(y)
    return np.array(out)


def main(folder=Path(__file__).parent, n=40, dt=0.05, seed=3):
    rng = np.random.default_rng(seed)
    t_obs = 0.5 * np.arange(1, n + 1)
    y = solve(TRUTH["a"], TRUTH["b"], TRUTH["c"], TRUTH["d"], t_obs, dt)
    y = y + rng.normal(0.0, TRUTH["sigma"], y.shape)
    for name, values in (("t_obs", t_obs), ("prey", y[:, 0]), ("predators", y[:, 1])):
        np.save(folder / f"{name}.npy", values)


if __name__ == "__main__":
    main()
