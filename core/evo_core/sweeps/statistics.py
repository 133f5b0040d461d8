"""Mean and 95 % confidence interval of a few numbers, one per seed.

A sweep has few seeds (3 to 10), so the interval uses Student's t-distribution, not the normal
approximation: with 3 seeds the normal's 1.96 would make the interval less than half as wide as
it should be. The t quantile is computed here (the regularized incomplete beta function, solved
by bisection) so that summary.csv needs no SciPy.

One seed gives no interval at all (`None`): a single run says nothing about the spread, and an
interval of zero width would claim it does.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Estimate", "estimate", "t_quantile", "CONFIDENCE"]

CONFIDENCE = 0.95


@dataclass(frozen=True)
class Estimate:
    """The mean of `count` values and the half-width of its 95 % interval (None for one)."""

    mean: float
    half_width: float | None
    count: int


def estimate(values: Sequence[float]) -> Estimate | None:
    """Mean and t-interval half-width of `values`; None for no values."""
    count = len(values)
    if count == 0:
        return None
    mean = math.fsum(values) / count
    if count == 1:
        return Estimate(mean, None, 1)
    variance = math.fsum((value - mean) ** 2 for value in values) / (count - 1)
    quantile = t_quantile(0.5 + CONFIDENCE / 2, count - 1)
    return Estimate(mean, quantile * math.sqrt(variance / count), count)


def t_quantile(probability: float, degrees: int) -> float:
    """The `probability` quantile of Student's t with `degrees` degrees of freedom (p > 0.5)."""
    if not 0.5 < probability < 1.0 or degrees < 1:
        raise ValueError("need 0.5 < probability < 1 and at least one degree of freedom")
    low, high = 0.0, 1.0
    while _t_cdf(high, degrees) < probability:
        high *= 2.0
    for _ in range(200):  # the bracket halves each time: far below float resolution at the end
        middle = (low + high) / 2.0
        if _t_cdf(middle, degrees) < probability:
            low = middle
        else:
            high = middle
        if high - low <= 1e-13 * max(1.0, high):
            break
    return (low + high) / 2.0


def _t_cdf(value: float, degrees: int) -> float:
    """P(T <= value) for value >= 0."""
    x = degrees / (degrees + value * value)
    return 1.0 - 0.5 * _incomplete_beta(degrees / 2.0, 0.5, x)


def _incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b) (continued fraction, Lentz)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, 1.0 - x) / b


def _beta_fraction(a: float, b: float, x: float) -> float:
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 500):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return result
