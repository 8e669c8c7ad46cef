"""Constants of ptonnx's special-function lowerings that are computed, not published:
recomputed here with mpmath at 200 bits. `tests/e2e/test_special.py` checks the
values in ptonnx/lowering/special/ against this; `python -m audit.special_constants`
prints them.
"""

from __future__ import annotations

import mpmath

#: how many Taylor terms of digamma about its positive root ptonnx uses
DIGAMMA_ROOT_TERMS = 26


def digamma_root() -> tuple[float, float]:
    """The positive zero of digamma as a double and the double nearest its remainder."""
    with mpmath.workprec(200):
        root = mpmath.findroot(mpmath.digamma, mpmath.mpf("1.4616321449683623"))
        hi = float(root)
        return hi, float(root - hi)


def digamma_root_taylor(terms: int = DIGAMMA_ROOT_TERMS) -> tuple[float, ...]:
    """c[k-1] = psi^(k)(x0) / k! = (-1)**(k+1) zeta(k+1, x0), k = 1..terms."""
    with mpmath.workprec(200):
        root = mpmath.findroot(mpmath.digamma, mpmath.mpf("1.4616321449683623"))
        return tuple(float((-1) ** (k + 1) * mpmath.zeta(k + 1, root)) for k in range(1, terms + 1))


if __name__ == "__main__":
    print("DIGAMMA_ROOT =", digamma_root())
    print("DIGAMMA_ROOT_TAYLOR = (")
    for c in digamma_root_taylor():
        print(f"    {c!r},")
    print(")")
