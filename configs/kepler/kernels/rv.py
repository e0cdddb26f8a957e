"""Radial velocities of a star on an eccentric orbit: Kepler's equation E - e sin E = M solved per epoch by
Newton's method, which stops when converged (`break`); the reverse sweep replays only the steps taken."""
import math


def eccentric_anomaly(m, e):
    ecc = m + e * math.sin(m)
    for it in range(50):
        step = (ecc - e * math.sin(ecc) - m) / (1.0 - e * math.cos(ecc))
        ecc = ecc - step
        if abs(step) < 1e-12:
            break
    return ecc


def radial_velocity(theta, t, rv, rv_err):
    period, k, e, omega, phase, v0 = theta[0], theta[1], theta[2], theta[3], theta[4], theta[5]
    s = 0.0
    for j in range(t.shape[0]):
        m = 2.0 * math.pi * t[j] / period + phase
        ecc = eccentric_anomaly(m, e)
        nu = 2.0 * math.atan2(math.sqrt(1.0 + e) * math.sin(0.5 * ecc), math.sqrt(1.0 - e) * math.cos(0.5 * ecc))
        model = v0 + k * (math.cos(nu + omega) + e * math.cos(omega))
        r = (rv[j] - model) / rv_err[j]
        s -= 0.5 * r * r + math.log(rv_err[j])
    return s - 0.5 * t.shape[0] * math.log(2.0 * math.pi)
