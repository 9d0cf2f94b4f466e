r"""The notation table: one canonical sympy symbol per quantity of the papers' statements.

Each entry maps the Python keyword used by ``Theorem.evaluate`` to its sympy symbol
(declared with assumptions), a description, and the domain every numeric value must lie in
(input validation; a theorem's own hypotheses are checked separately). The table holds the
quantities papers share; a paper's own quantities are added by its statements module with
:func:`add_notation` (FedAWE's in :mod:`fedtheory.bounds.fedawe`).

The table's symbols are ``_TableSymbol`` objects, which the papers' statements take by
:func:`symbol`; a plain ``sympy.Symbol`` of a user's own theorem never equals one, so a
paper's keywords, aliases (FedAU's cutoff :math:`K` is ``K_cut``) and meanings (CA-Fed's
:math:`E`) apply to that paper's statements only. A user's plain symbol takes the table's
entry only for the quantities every paper shares (:data:`SHARED`: same name and
assumptions), else its domain from its own assumptions; its ``meanings=`` always win.
"""

from __future__ import annotations

import keyword
from dataclasses import dataclass, replace

import sympy as sp

from fedtheory.constraints import Instance, Label, MappingOf, Text, declare
from fedtheory.errors import ParameterError


@dataclass(frozen=True)
class Notation:
    symbol: sp.Symbol
    meaning: str
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    integer: bool = False


class _TableSymbol(sp.Symbol):
    """A symbol of the notation table (:func:`symbol`): unequal to a plain ``sympy.Symbol``
    of the same name and assumptions, so that a user's symbol never takes a paper's entry."""


def _real(latex: str, meaning: str, **domain) -> Notation:
    return Notation(_TableSymbol(latex, real=True), meaning, **domain)


def _pos(latex: str, meaning: str, **domain) -> Notation:
    return Notation(_TableSymbol(latex, positive=True), meaning, low=0.0, low_open=True, **domain)


def _nonneg(latex: str, meaning: str, **domain) -> Notation:
    return Notation(_TableSymbol(latex, nonnegative=True), meaning, low=0.0, **domain)


def _count(latex: str, meaning: str) -> Notation:
    symbol = _TableSymbol(latex, positive=True, integer=True)
    return Notation(symbol, meaning, low=1.0, integer=True)


def _natural(latex: str, meaning: str) -> Notation:
    symbol = _TableSymbol(latex, nonnegative=True, integer=True)
    return Notation(symbol, meaning, low=0.0, integer=True)


def _prob(latex: str, meaning: str) -> Notation:
    return Notation(_TableSymbol(latex, positive=True), meaning, low=0.0, high=1.0, low_open=True)


def _tabled(entry: Notation) -> Notation:
    """``entry`` with its symbol a ``_TableSymbol`` (same name and assumptions)."""
    if isinstance(entry.symbol, _TableSymbol):
        return entry
    return replace(entry, symbol=_TableSymbol(entry.symbol.name, **entry.symbol.assumptions0))


NOTATION: dict[str, Notation] = {
    # FedLaAvg Example 1
    "e1": _real("e_1", "mean of client 1's data (its minimiser)"),
    "e2": _real("e_2", "mean of client 2's data (its minimiser)"),
    "gamma": _pos("gamma", "learning rate"),
    "t1": _count("t_1", "rounds client 1 is available per period"),
    "t2": _count("t_2", "rounds client 2 is available per period"),
    "tau": _count("tau", "common block length (t_1 = t_2 = tau)"),
    # CA-Fed error decomposition
    "kappa": _pos("kappa", "condition number L/mu"),
    "gap_B": _nonneg("Delta_B", "optimisation error F_B(w) - F_B^* of the biased objective"),
    "chi2": _nonneg(r"\chi^2_{\alpha\|p}", "chi-square divergence of alpha from p"),
    "d_tv": _nonneg("d_TV", "total-variation distance between alpha and p", high=1.0),
    "Gamma": _nonneg("Gamma", "heterogeneity max_k F_k(w^*) - F_k^*"),
    "Gamma_prime": _nonneg("Gamma'", "heterogeneity max_k F_k(w_B^*) - F_k^*"),
    # shared problem constants
    "L": _pos("L", "smoothness constant"),
    "G": _nonneg("G", "bound on (stochastic) gradient norms"),
    "sigma2": _nonneg("sigma^2", "stochastic-gradient variance"),
    "F_gap": _nonneg(r"\mathcal{F}", "initial sub-optimality f(x_0) - f^*"),
    "T": _count("T", "number of rounds or iterations"),
    "N": _count("N", "number of clients"),
    "eta": _pos("eta", "step size (FedAU global rate; E3CS exponential-weights rate)"),
    # CA-Fed Lemma 1 and Theorem 2
    "D": _nonneg("D", "bound on the gradient norm over W (CA-Fed Lemma 1)"),
    "H": _pos("H", "bound on |F_k(w) - F_k(w_B^*)| over W (CA-Fed Lemma 1)"),
    "diam_W": _nonneg("diam_W", "diameter of the feasible set W"),
    "sigma2_max": _nonneg("sigma^2_max", "largest per-client gradient-noise variance"),
    "E": _count("E", "local steps per round (CA-Fed)"),
    "M": _count("M", "number of states of the availability chain"),
    "Q": _pos("Q", "total aggregation weight ||q||_1"),
    "lam": _pos(r"\lambda_P", "chain correlation (1 + |lambda_2|)/2", high=1.0, high_open=True),
    "C_P": _pos("C_P", "mixing constant of the chain (CA-Fed (5))"),
    "T_P": _natural("T_P", "round from which the mixing bound (5) holds"),
    "dist0_sq": _nonneg("R_0^2", "squared initial distance ||w_{0,0} - w^*||^2"),
    "pi_q": _pos(r"\pi^{\top}q", "availability-weighted aggregation mass pi^T q"),
    "noise_q": _nonneg("V_q", "sum_k sigma_k^2 pi_k q_k^2 (so q^T Sigma q = S_2 V_q)"),
    "sum_eta": _pos("S_1", "sum_{t=1}^T eta_t"),
    "sum_eta_sq": _nonneg("S_2", "sum_{t=1}^T eta_t^2"),
    "sum_eta_sq_inv": _nonneg("S_2'", "sum_{t=1}^T (eta_t^2 + 1/t^2)"),
    "sum_phi": _real("S_phi", "sum_{t=1}^T ln(2 C_P H t) eta_{t - J_t}^2"),
    "eta_max": _pos("eta_max", "largest step size of the schedule"),
    "pi_q_sq_sigma": _nonneg("V_1", "sum_k pi_k q_k^2 sigma_k^2 (CA-Fed Lemma 2)"),
    "dist0_B_sq": _nonneg("R_B^2", "squared initial distance ||w_{0,0} - w_B^*||^2"),
    "sum_J_eta": _nonneg("S_J", "sum_t J_t eta_{t-J_t}^2 (CA-Fed Lemma 3)"),
    "diff_norm": _nonneg("||v - w||", "distance of two points of W (CA-Fed (21))"),
    "q_active": _nonneg("Q_t", "sum_{k in A_t} q_k (CA-Fed (22))"),
    "eta_t": _pos("eta_t", "step size of round t"),
    "J_t": _natural("J_t", "look-back J_t of CA-Fed Theorem 2"),
    "lam_max": _pos(
        r"\max_k\lambda(P_k)", "largest per-client lambda(P_k) (product chains)", high=1.0
    ),
    # FedAU
    "p": _prob("p", "participation probability p_n"),
    "K_cut": _count("K", "FedAU cutoff on the interval length"),
    "t": _count("t", "round index"),
    "I": _count("I", "local steps per round (FedAU) / staleness bound (FedLaAvg)"),
    "Psi_G": _nonneg("Psi_G", "FedAU Assumption 5 constant (0 or G^2)"),
    "delta2": _nonneg("delta^2", "gradient dissimilarity ||grad F_n - grad f||^2 bound"),
    "Q_w": _pos("Q_omega", "max_t (1/N) sum_n p_n (omega_t^n)^2 (FedAU Theorem 2)"),
    "weight_error": _nonneg("W_err", "weight error (1/(NT)) sum_{t,n} E[(p_n omega_t^n - 1)^2]"),
    "omega_n": _nonneg("omega_n", "time-constant aggregation weight of client n (FedAU)"),
    "P_mass": _pos("P", "P = sum_n omega_n p_n (FedAU Theorem 1)"),
    "R_c": _pos("R", "1/log c with c = (1 - min_n p_n)^{-2} (FedAU Corollary 4)"),
    "f_tilde": _real(r"\tilde f(x_t)", "reweighted objective at x_t (FedAU Lemma B.3.3)"),
    "phi_gap": _nonneg("W_phi", "sum_n (p_n omega_t^n / N - phi_n)^2 (FedAU Lemma B.3.3)"),
    "sum_p_omega_sq": _nonneg("S_omega", "sum_n p_n (omega_t^n)^2 (FedAU Lemma B.3.3)"),
    "grad_sq": _nonneg(r"\|\nabla\tilde f\|^2", "squared gradient norm of f~ at x_t"),
    "delta2_tilde": _nonneg(
        r"\tilde\delta^2", "bound on ||grad F_n - grad f~||^2 (FedAU Lemma B.3.3)"
    ),
    # E3CS
    "K": _count("K_{pool}", "number of clients K (E3CS)"),
    "k": _count("k", "clients selected per round (E3CS k; FedLaAvg K)"),
    "sum_quota": _nonneg("S_sigma", "sum_{t=1}^T (k - K sigma_t) (E3CS)"),
    "sigma_t": _nonneg("sigma_t", "fairness quota of round t, in [0, k/K] (E3CS)", high=1.0),
    "q_star": _nonneg("q^*_{i,t}", "comparator quota of client i in round t (E3CS Def. 1)"),
    "sum_px": _nonneg("S_px", "sum_t sum_i p_{i,t} x_{i,t}, expected CEP (E3CS (9))"),
    # FedLaAvg
    "x0": _real("x_0", "initial point (FedLaAvg Example 1)"),
    "R": _count("R", "number of rounds (FedLaAvg round-based bound)"),
    "C": _count("C", "local iterations per round (FedLaAvg)"),
    "E_avail": _count("E_a", "availability window: every client is available once per E_a"),
    "beta": _prob("beta", "participation ratio K/N (FedLaAvg)"),
}


@declare(entries=MappingOf())
def add_notation(entries: dict[str, Notation]) -> None:
    """Add a paper's own quantities to :data:`NOTATION` (its statements module calls this
    before it builds its theorems, its record in :mod:`fedtheory.papers`); a keyword already
    in the table must keep its entry."""
    if not all(
        isinstance(k, str) and k.isidentifier() and isinstance(v, Notation)
        for k, v in entries.items()
    ):
        raise ParameterError(
            "The 'entries' parameter of add_notation must map identifiers to Notation "
            f"entries. Got {entries!r} instead."
        )
    entries = {k: _tabled(v) for k, v in entries.items()}
    clash = sorted(k for k, v in entries.items() if NOTATION.get(k, v) != v)
    if clash:
        raise ParameterError(
            "The 'entries' parameter of add_notation must not redefine keywords of the "
            f"notation table. Got {clash} instead."
        )
    NOTATION.update(entries)


@declare(name=Text())
def symbol(name: str) -> sp.Symbol:
    """The canonical sympy symbol of the keyword ``name``."""
    if name not in NOTATION:
        raise ParameterError(
            f"The 'name' parameter of symbol must be a keyword of the notation table. "
            f"Got {name!r} instead."
        )
    return NOTATION[name].symbol


SHARED = ("L", "G", "sigma2", "F_gap", "T", "N")
"""The quantities every paper shares: a user's plain symbol with one of these names and the
table's assumptions takes the table's entry (its domain and, without ``meanings=``, its
meaning); every other entry is a paper's."""


@declare(sym=Instance(sp.Symbol), meaning=Label())
def notation_of(sym: sp.Symbol, meaning: str = "") -> tuple[str, Notation]:
    """The keyword and entry of ``sym``: its entry of the notation table when it is one of
    the table's symbols (a ``_TableSymbol``) or a plain symbol of a :data:`SHARED`
    quantity, otherwise an entry derived from the symbol's sympy assumptions
    (``positive`` -> (0, inf), ``nonnegative`` -> [0, inf), ``negative``/``nonpositive``
    likewise, ``integer``), keyed by the symbol's name, which must be a Python identifier.
    A non-empty ``meaning`` replaces the entry's.

    This is how a theorem defined outside the package (``fedtheory.custom``) uses symbols
    of its own, e.g. ``sympy.Symbol("mu", positive=True)``: a paper's keyword, alias or
    meaning never reaches it (``sympy.Symbol("K", positive=True, integer=True)`` is ``K``,
    not FedAU's ``K_cut``)."""
    shared = NOTATION.get(sym.name) if sym.name in SHARED else None
    for key, entry in NOTATION.items():
        if isinstance(sym, _TableSymbol) and entry.symbol == sym:
            return key, replace(entry, meaning=meaning or entry.meaning)
    if shared is not None and shared.symbol.assumptions0 == sym.assumptions0:
        return sym.name, replace(shared, symbol=sym, meaning=meaning or shared.meaning)
    name = sym.name
    if not name.isidentifier() or keyword.iskeyword(name) or name == "strict":
        raise ParameterError(
            "The 'sym' parameter of notation_of must be a symbol of the notation table or "
            f"be named by a Python identifier other than 'strict'. Got {name!r} instead."
        )
    low = 0.0 if (sym.is_nonnegative or sym.is_positive) else None
    high = 0.0 if (sym.is_nonpositive or sym.is_negative) else None
    entry = Notation(
        sym,
        meaning or f"{name} (declared by the theorem)",
        low=low,
        high=high,
        low_open=bool(sym.is_positive),
        high_open=bool(sym.is_negative),
        integer=bool(sym.is_integer),
    )
    return name, entry


@declare(sym=Instance(sp.Symbol))
def keyword_of(sym: sp.Symbol) -> str:
    """Inverse of :func:`symbol`."""
    for key, entry in NOTATION.items():
        if entry.symbol == sym:
            return key
    raise ParameterError(
        f"The 'sym' parameter of keyword_of must be a symbol of the notation table. "
        f"Got {sym!r} instead."
    )


RENAMED: dict[str, str] = {"K_pool": "K", "k_sel": "k", "K": "K_cut"}
"""Keywords renamed in 0.2 (old -> new): E3CS's pool and selection sizes are ``K``, ``k``
as in ``e3cs.quota_sum`` and ``E3CS``; FedAU's cutoff is ``K_cut`` as in
``fedau.weight_error_exact``. ``Theorem.evaluate`` still accepts an old name where the
theorem has the new one as the paper's symbol (never a user's own symbol of that name),
with a DeprecationWarning (for one release)."""
