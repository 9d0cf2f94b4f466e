r"""A PEPit problem sent to cvxpy as a few stacked sparse constraints, with a Gram matrix that
may be block diagonal.

PEPit's own cvxpy wrapper writes every scalar constraint as its own
``trace(W G) + f^T F + c`` expression over a dense :math:`n\times n` weight matrix; with
thousands of interpolation constraints cvxpy spends longer compiling than the solver
solving. Here every scalar constraint is one row of a sparse matrix acting on
:math:`\operatorname{vec}(G)` and :math:`F` (one inequality and one equality block, each
LMI one equality block), which is the same program.

``blocks`` (lists of leaf indices) declares :math:`G=\operatorname{diag}(G_1,\dots)` up to
a permutation, :math:`G_b\succeq0`: the Gram entries between blocks are zero by
construction. An equality constraint that fixes exactly one such entry to zero (the
orthogonality constraints of :mod:`fedtheory.pep._symmetry`) is then satisfied identically
and is not sent; its multiplier is the one that cancels that entry in the worst-case proof
(an equality's multiplier is free), so PEPit's proof and the certificate's checks
(:mod:`fedtheory.pep.certificate`) are those of the problem as PEPit wrote it.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from PEPit import Expression, Point
from PEPit.constraint import Constraint
from PEPit.psd_matrix import PSDMatrix
from PEPit.wrappers.cvxpy_wrapper import CvxpyWrapper


def _terms(expression):
    """``(G entries [(i, j, w)], F entries [(k, w)], constant)`` of a PEPit expression."""
    if expression.get_is_leaf():
        return [], [(expression.counter, 1.0)], 0.0
    gram, values, const = [], [], 0.0
    for key, w in expression.decomposition_dict.items():
        if type(key) is tuple:
            gram.append((key[0].counter, key[1].counter, w))
        elif type(key) is Expression:
            values.append((key.counter, w))
        elif key == 1:
            const = w
    return gram, values, const


class StackedWrapper(CvxpyWrapper):
    """PEPit's :class:`~PEPit.wrappers.cvxpy_wrapper.CvxpyWrapper` with stacked constraints
    and an optional block-diagonal Gram matrix (``blocks``: every leaf index in exactly one
    block; None: one block)."""

    def __init__(self, blocks=None, verbose: int = 0) -> None:
        super().__init__(verbose=verbose)
        self.blocks = blocks
        self.scalar_rows = 0  # scalar constraints the solver receives

    def set_main_variables(self) -> None:
        """The value vector :math:`F` and one symmetric variable per Gram block."""
        import cvxpy as cp

        n = Point.counter
        blocks = self.blocks if self.blocks is not None else [list(range(n))]
        self.where = np.empty((n, 2), int)  # leaf -> (block, position in block)
        for b, idx in enumerate(blocks):
            self.where[idx, 0], self.where[idx, 1] = b, np.arange(len(idx))
        if sorted(i for idx in blocks for i in idx) != list(range(n)):
            raise ValueError("the Gram blocks must partition the leaf points")
        self.block_index = blocks
        self.F = cp.Variable((Expression.counter,))
        self.Gb = [cp.Variable((len(idx), len(idx)), symmetric=True) for idx in blocks]
        self._psd = [g >> 0 for g in self.Gb]

    def send_constraint_to_solver(self, constraint) -> None:
        """Keep ``constraint`` for :meth:`generate_problem` (stacked there)."""
        self._list_of_constraints_sent_to_solver.append(constraint)

    def send_lmi_constraint_to_solver(self, psd_matrix) -> None:
        """Keep the LMI ``psd_matrix`` for :meth:`generate_problem`."""
        self._list_of_constraints_sent_to_solver.append(psd_matrix)

    def _structural(self, constraint) -> tuple | None:
        """The cross-block pair an equality fixes to zero, if that is all it does."""
        if constraint.equality_or_inequality != "equality":
            return None
        gram, values, const = _terms(constraint.expression)
        if values or const or len(gram) != 1:
            return None
        i, j, _ = gram[0]
        return (i, j) if self.where[i, 0] != self.where[j, 0] else None

    def _rows(self, expressions):
        """Sparse ``[m, len(block)^2]`` per block, ``[m, |F|]`` and constants ``[m]``."""
        m = len(expressions)
        gr, gi, gj, gw, fr, fc, fv, const = [], [], [], [], [], [], [], np.zeros(m)
        for r, e in enumerate(expressions):
            gram, values, const[r] = _terms(e)
            for i, j, w in gram:
                gr.append(r), gi.append(i), gj.append(j), gw.append(w / 2)
            for k, w in values:
                fr.append(r), fc.append(k), fv.append(w)
        gr, gw = np.asarray(gr, int), np.asarray(gw, float)
        (bi, pi), (bj, pj) = self.where[np.asarray(gi, int)].T, self.where[np.asarray(gj, int)].T
        mats = []
        for b, idx in enumerate(self.block_index):
            keep = (bi == b) & (bj == b)  # entries between blocks are zeros of G
            size, rows, w = len(idx), gr[keep], gw[keep]
            cols = np.concatenate([pi[keep] + size * pj[keep], pj[keep] + size * pi[keep]])
            # vec is column-major; W is symmetrised
            mat = sp.csr_matrix((np.tile(w, 2), (np.tile(rows, 2), cols)), shape=(m, size**2))
            mats.append(mat)
        return mats, sp.csr_matrix((fv, (fr, fc)), shape=(m, Expression.counter)), const

    def _affine(self, expressions):
        import cvxpy as cp

        mats, fmat, const = self._rows(expressions)
        out = fmat @ self.F + const
        for mat, g in zip(mats, self.Gb, strict=True):
            if mat.nnz:
                out = out + mat @ cp.vec(g, order="F")
        return out

    def generate_problem(self, objective):
        """The cvxpy problem: maximise ``objective`` subject to the stacked constraints,
        every :math:`G_b\\succeq0` and every LMI."""
        import cvxpy as cp

        scalar = [c for c in self._list_of_constraints_sent_to_solver if isinstance(c, Constraint)]
        self.lmis = [c for c in self._list_of_constraints_sent_to_solver if c not in scalar]
        self.structural = {id(c): p for c in scalar if (p := self._structural(c)) is not None}
        sent = [c for c in scalar if id(c) not in self.structural]
        self.ineq = [c for c in sent if c.equality_or_inequality == "inequality"]
        self.eq = [c for c in sent if c.equality_or_inequality == "equality"]
        self.scalar_rows = len(sent)
        constraints = list(self._psd)
        self._ineq = self._eq = None
        if self.ineq:
            self._ineq = self._affine([c.expression for c in self.ineq]) <= 0
            constraints.append(self._ineq)
        if self.eq:
            self._eq = self._affine([c.expression for c in self.eq]) == 0
            constraints.append(self._eq)
        self._lmi = []
        for lmi in self.lmis:
            k = lmi.shape[0]
            M = cp.Variable((k, k), symmetric=True)
            entries = [lmi[i, j] for j in range(k) for i in range(k)]  # column-major
            psd = M >> 0
            self._lmi.append(psd)
            constraints += [psd, cp.vec(M, order="F") == self._affine(entries)]
        self.objective = self._affine([objective])[0]
        self.prob = cp.Problem(cp.Maximize(self.objective), constraints)
        return self.prob

    def solve(self, **kwargs):
        """Solve (``kwargs`` go to ``cvxpy.Problem.solve``); ``(status, solver, value)``."""
        self.prob.solve(**kwargs)
        self.solver_name = self.prob.solver_stats.solver_name
        n = Point.counter
        G = None
        if all(g.value is not None for g in self.Gb):
            G = np.zeros((n, n))
            for idx, g in zip(self.block_index, self.Gb, strict=True):
                G[np.ix_(idx, idx)] = g.value
        self.optimal_G, self.optimal_F = G, self.F.value
        if G is None or self.optimal_F is None:
            return self.prob.status, self.solver_name, None
        gram, values, value = _terms(self.objective_expression)  # as PEPit evaluates it
        value += sum(w * self.optimal_F[k] for k, w in values)
        value += sum(w * G[i, j] for i, j, w in gram)
        return self.prob.status, self.solver_name, float(value)

    def _recover_dual_values(self):
        n = Point.counter
        residual = np.zeros((n, n))
        for idx, psd in zip(self.block_index, self._psd, strict=True):
            residual[np.ix_(idx, idx)] = psd.dual_value
        duals = {}
        for group, con in ((self.ineq, self._ineq), (self.eq, self._eq)):
            if con is not None:
                values = np.atleast_1d(con.dual_value).tolist()
                duals.update(zip(map(id, group), values, strict=True))
        for lmi, psd in zip(self.lmis, self._lmi, strict=True):
            duals[id(lmi)] = psd.dual_value
        if self.structural:
            duals.update(self._structural_duals(duals))
        values = [residual] + [duals[id(c)] for c in self._list_of_constraints_sent_to_solver]
        return values, residual

    def _structural_duals(self, duals) -> dict:
        r"""Multipliers of the unsent equalities: each cancels its Gram entry in
        :math:`\text{objective}-\sum_c\lambda_c\,c+\sum D\circ M` (the residual is zero
        there)."""
        left: dict[tuple, float] = {}

        def add(expression, scale):
            for i, j, w in _terms(expression)[0]:
                if self.where[i, 0] != self.where[j, 0]:
                    key = (min(i, j), max(i, j))
                    left[key] = left.get(key, 0.0) + scale * w

        add(self.objective_expression, 1.0)
        for c in self._list_of_constraints_sent_to_solver:
            if isinstance(c, Constraint) and id(c) not in self.structural:
                add(c.expression, -duals[id(c)])
        for lmi in self.lmis:
            D = duals[id(lmi)]
            for i in range(lmi.shape[0]):
                for j in range(lmi.shape[1]):
                    add(lmi[i, j], D[i, j])
        out = {}
        for c in self._list_of_constraints_sent_to_solver:
            if id(c) in self.structural:
                i, j = self.structural[id(c)]
                w = _terms(c.expression)[0][0][2]
                out[id(c)] = left.get((min(i, j), max(i, j)), 0.0) / w
        return out


def value(obj):
    """The value of a PEPit point, expression, constraint or LMI at the last solution, from
    the solved leaves. PEPit's own ``eval`` keeps the first value it computed of every
    non-leaf object: after a second solve of the same PEP (the next solver in turn) it would
    mix the two solutions."""
    if isinstance(obj, Constraint):
        return value(obj.expression)
    if isinstance(obj, PSDMatrix):
        return np.array([[value(e) for e in row] for row in obj.matrix_of_expressions])
    if obj.get_is_leaf():
        return obj._value
    if isinstance(obj, Point):
        return sum(
            (w * leaf._value for leaf, w in obj.decomposition_dict.items()),
            np.zeros(Point.counter),
        )
    out = 0.0
    for key, w in obj.decomposition_dict.items():
        if type(key) is tuple:
            out += w * float(np.dot(value(key[0]), value(key[1])))
        elif type(key) is Expression:
            out += w * key._value
        else:  # the constant
            out += w
    return out


def solve(pep, blocks, **kwargs):
    """Solve PEPit's ``pep`` through :class:`StackedWrapper` and return the primal value
    (None when the solver found none). These are the steps of PEPit 0.5's
    ``PEP._solve_with_wrapper`` without its printed feasibility report, whose checks
    :func:`fedtheory.pep.certificate.check` recomputes."""
    import numpy as np

    if pep.objective is None:
        pep._prepare_constraints(verbose=0)
    wrapper = StackedWrapper(blocks)
    wrapper.objective_expression = pep.objective
    pep.wrapper_name, pep.wrapper = "cvxpy", wrapper
    wrapper.set_main_variables()
    pep._list_of_constraints_sent_to_wrapper = [
        c for c in pep._list_of_prepared_constraints if c.activated
    ]
    pep._list_of_psd_sent_to_wrapper = [m for m in pep._list_of_prepared_psd if m.activated]
    for constraint in pep._list_of_prepared_constraints:
        constraint._dual_variable_value = 0.0
    for psd in pep._list_of_prepared_psd:
        psd._dual_variable_value = np.zeros_like(psd.matrix_of_expressions)
    for constraint in pep._list_of_constraints_sent_to_wrapper:
        wrapper.send_constraint_to_solver(constraint)
    for psd in pep._list_of_psd_sent_to_wrapper:
        wrapper.send_lmi_constraint_to_solver(psd)
    wrapper.generate_problem(pep.objective)
    _, _, value = wrapper.solve(**kwargs)
    if value is None:
        return None
    pep.residual = wrapper.assign_dual_values()
    pep.G_value, pep.F_value = wrapper.get_primal_variables()
    pep._eval_points_and_function_values(pep.F_value, pep.G_value, verbose=0)
    return value
