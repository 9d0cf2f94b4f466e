r"""Heterogeneity constraints between the clients' functions.

* :class:`AtOptimum` -- bounded gradient dissimilarity at the optimum,
  :math:`\|\nabla f_i(x^*)\|^2\le\zeta^2` for every client (FedLaAvg's Example 1 family with
  :math:`\zeta=|e_1-e_2|`; the :math:`\zeta_*` of local-SGD analyses).
* :class:`Dissimilarity` -- the FedAU/FedAWE form
  :math:`\sum_i\alpha_i\|\nabla f_i(x)-\nabla F(x)\|^2\le\beta^2\|\nabla F(x)\|^2+\zeta^2`
  (uniform :math:`\alpha`: the papers' :math:`\frac1m\sum_i`). A PEP can only impose it at the
  points it evaluates; it is imposed at :math:`x^*` and at every server model :math:`x_t`, so
  the PEP ranges over a larger class and its value is an upper bound on the worst case over
  the functions satisfying it everywhere (``relaxed`` in the result).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce
from operator import add

from fedtheory.constraints import Probabilities, Real, SequenceOf, declare
from fedtheory.errors import ParameterError
from fedtheory.pep._pepit import POINTS

GRADIENTS = dict(
    grads_at_opt=POINTS,
    grads_at_models=SequenceOf(POINTS, min_size=0, plural="lists of PEPit points"),
    alpha=Probabilities(),
)
"""The clients' gradients ``[N]`` at :math:`x^*` and at each server model, and the weights
``alpha [N]``."""


def _per_client(grads_at_opt, grads_at_models, alpha, owner: str) -> None:
    """ParameterError unless every list of gradients has one point per weight."""
    sizes = {len(g) for g in [grads_at_opt, *grads_at_models]}
    if sizes != {len(alpha)}:
        raise ParameterError(
            f"The 'alpha' parameter of {owner} must have one weight per client gradient "
            f"({sorted(sizes)}). Got {len(alpha)} weights instead."
        )


@declare(zeta2=Real(0.0))
@dataclass(frozen=True)
class AtOptimum:
    r""":math:`\|\nabla f_i(x^*)\|^2\le\zeta^2` (``zeta2`` = :math:`\zeta^2`)."""

    zeta2: float
    relaxed = False

    @declare(**GRADIENTS)
    def constraints(self, grads_at_opt, grads_at_models, alpha):
        """PEPit constraints from the clients' gradients at :math:`x^*` (``[N]`` points)."""
        _per_client(grads_at_opt, grads_at_models, alpha, "AtOptimum.constraints")
        return [g**2 <= self.zeta2 for g in grads_at_opt]

    def __str__(self) -> str:
        return f"||grad f_i(x*)||^2 <= {self.zeta2:g}"


@declare(beta2=Real(0.0), zeta2=Real(0.0))
@dataclass(frozen=True)
class Dissimilarity:
    r""":math:`\sum_i\alpha_i\|\nabla f_i(x)-\nabla F(x)\|^2\le\beta^2\|\nabla F(x)\|^2+\zeta^2`
    at :math:`x^*` and at the server models (``beta2, zeta2`` = :math:`\beta^2,\zeta^2`)."""

    beta2: float
    zeta2: float
    relaxed = True

    @declare(**GRADIENTS)
    def constraints(self, grads_at_opt, grads_at_models, alpha):
        """PEPit constraints at :math:`x^*` and at every server model (class docstring)."""
        _per_client(grads_at_opt, grads_at_models, alpha, "Dissimilarity.constraints")
        out = []
        for grads in [grads_at_opt, *grads_at_models]:
            full = reduce(add, [a * g for a, g in zip(alpha, grads, strict=True)])
            spread = reduce(add, [a * (g - full) ** 2 for a, g in zip(alpha, grads, strict=True)])
            out.append(spread <= self.beta2 * full**2 + self.zeta2)
        return out

    def __str__(self) -> str:
        return f"sum_i a_i ||grad f_i - grad F||^2 <= {self.beta2:g} ||grad F||^2 + {self.zeta2:g}"


Heterogeneity = AtOptimum | Dissimilarity
