"""What a ``Theorem`` tells its user: parameters in ``evaluate``'s signature, in ``help`` and
in ``repr``; symbols of the user's own with domains from their sympy assumptions. A paper's
statements are imported (or marked) in its tests, so that the file runs in a copy without it."""

from __future__ import annotations

import inspect
import pydoc

import numpy as np
import pytest
import sympy as sp

from fedtheory.bounds import CATALOGUE, Condition, Theorem
from fedtheory.errors import ParameterError


@pytest.mark.parametrize("key", sorted(CATALOGUE))
def test_signature_lists_the_parameters_keyword_only(key):
    thm = CATALOGUE[key]
    params = inspect.signature(thm.evaluate).parameters
    assert list(params) == [*thm.parameters, "strict"]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params.values())


def test_help_and_repr_name_the_parameters_with_their_meaning():
    from fedtheory.bounds import cafed

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
    integer = "'n' parameter of user bound must be a number or an array of integers"
    with pytest.raises(ParameterError, match=integer):
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


def test_renamed_keywords_still_work_for_one_release_with_a_warning():
    """E3CS's theorems take K, k like quota_sum and E3CS; FedAU's cutoff is K_cut like
    weight_error_exact. The old names still work, with a DeprecationWarning."""
    import pytest

    from fedtheory.bounds import e3cs, fedau
    from fedtheory.errors import ParameterError

    new = float(e3cs.regret_optimal.evaluate(K=100, k=20, sum_quota=10.0).total)
    with (
        pytest.warns(DeprecationWarning, match="'K_pool' is deprecated; use 'K'"),
        pytest.warns(DeprecationWarning, match="'k_sel' is deprecated; use 'k'"),
    ):
        old = e3cs.regret_optimal.evaluate(K_pool=100, k_sel=20, sum_quota=10.0)
    assert float(old.total) == new
    with pytest.warns(DeprecationWarning, match="'K' is deprecated; use 'K_cut'"):
        cut = fedau.theorem3_per_round.evaluate(p=0.2, K=5, t=10)
    assert float(cut.total) == float(fedau.theorem3_per_round.evaluate(p=0.2, K_cut=5, t=10).total)
    with pytest.raises(ParameterError, match="both 'K_pool'"):
        e3cs.regret_optimal.evaluate(K=100, K_pool=100, k=20, sum_quota=10.0)


def test_a_users_symbols_k_e_t_keep_their_own_names_and_meanings_never_a_papers():
    """FedAU's cutoff is ``K`` (keyword ``K_cut``) and CA-Fed's ``E`` is its local steps; a
    user's plain symbols of those names are the user's: no alias, no deprecation, their own
    meanings (or none from a paper), in the theorem and in its tightness family."""
    import warnings

    from fedtheory.tightness import theorem_family

    K, E, T = sp.symbols("K E T", positive=True, integer=True)
    mine = {"K": "sampled clients", "E": "epochs", "T": "SGD steps"}
    thm = Theorem("user.ket", title="mine", reference="r", kind="upper bound",
                  terms={"a": K * E / T}, meanings=mine)  # fmt: skip
    plain = Theorem("user.ket_plain", title="plain", reference="r", kind="upper bound",
                    terms={"a": K * E / T})  # fmt: skip
    assert thm.parameters == ("E", "K", "T")
    assert {p: n.meaning for p, n in thm.notation.items()} == mine
    assert "CA-Fed" not in plain.notation["E"].meaning and "FedAU" not in plain.__doc__
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no DeprecationWarning for the user's K
        assert float(thm.evaluate(K=2, E=3, T=4).total) == 1.5
    with pytest.raises(ParameterError, match=r"'K' parameter of mine .* \(0, inf\)"):
        thm.evaluate(K=0, E=3, T=4)
    family = theorem_family(thm, lambda K, E, T: K * E / T / 2, ranges={"T": (1, 9)})
    assert {i.name: i.doc for i in family.integers} == mine


# the papers keep theirs (the table's symbols): one test per paper, left out in a copy without it
@pytest.mark.paper("cafed")
def test_ca_feds_e_keeps_its_meaning_of_local_steps():
    assert CATALOGUE["cafed.theorem2"].notation["E"].meaning == "local steps per round (CA-Fed)"


@pytest.mark.paper("fedau")
def test_fedaus_cutoff_keeps_its_keyword_k_cut():
    assert "K_cut" in CATALOGUE["fedau.theorem3.per_round"].parameters
