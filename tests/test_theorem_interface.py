"""What a ``Theorem`` tells its user: parameters in ``evaluate``'s signature, in ``help`` and
in ``repr``; symbols of the user's own with domains from their sympy assumptions."""

from __future__ import annotations

import inspect
import pydoc

import numpy as np
import pytest
import sympy as sp

from fedtheory.bounds import CATALOGUE, Condition, Theorem, cafed
from fedtheory.errors import ParameterError


@pytest.mark.parametrize("key", sorted(CATALOGUE))
def test_signature_lists_the_parameters_keyword_only(key):
    thm = CATALOGUE[key]
    params = inspect.signature(thm.evaluate).parameters
    assert list(params) == [*thm.parameters, "strict"]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params.values())


def test_help_and_repr_name_the_parameters_with_their_meaning():
    thm = cafed.theorem1
    text = pydoc.render_doc(thm, renderer=pydoc.plaintext)
    for p in thm.parameters:
        assert f"{p} : real in" in text and thm.notation[p].meaning in text
    assert "kappa >= 1 (kappa = L/mu)" in text and thm.reference in text
    assert "kappa" in pydoc.render_doc(thm.evaluate, renderer=pydoc.plaintext)
    assert repr(thm) == (
        "<Theorem cafed.theorem1: CA-Fed Theorem 1 (upper bound; Rodio et al. 2023, Theorem 1 "
        "(error decomposition, chi-square bias)) (Gamma, chi2, gap_B, kappa)>"
    )


def test_a_users_symbols_take_their_domain_from_their_assumptions():
    mu = sp.Symbol("mu", positive=True)
    n = sp.Symbol("n", nonnegative=True, integer=True)
    L = sp.Symbol("L", positive=True)  # the notation table's L
    thm = Theorem(
        "user.x",
        title="user bound",
        reference="r",
        kind="upper bound",
        terms={"a": L / mu * n},
        conditions=[Condition("mu <= L", mu, "<=", L)],
        meanings={"mu": "strong convexity"},
    )
    assert thm.parameters == ("L", "mu", "n")
    assert thm.notation["mu"].meaning == "strong convexity"
    assert thm.notation["L"].meaning == "smoothness constant"
    assert thm.evaluate(L=2.0, mu=1.0, n=3).total == 6.0
    with pytest.raises(ParameterError, match=r"'mu' parameter of user bound .* \(0, inf\)"):
        thm.evaluate(L=2.0, mu=0.0, n=3)
    with pytest.raises(ParameterError, match="'n' parameter of user bound must be an integer"):
        thm.evaluate(L=2.0, mu=1.0, n=1.5)
    assert not thm.evaluate(strict=False, L=np.array([0.5, 2.0]), mu=1.0, n=1).valid


def test_two_symbols_with_one_name_are_refused():
    with pytest.raises(ParameterError, match="one symbol per name"):
        Theorem(
            "user.y",
            title="t",
            reference="r",
            kind="exact",
            terms={"a": sp.Symbol("z", positive=True) + sp.Symbol("z", real=True)},
        )
