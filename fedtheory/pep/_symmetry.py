r"""Interchangeable clients of a PEP, reduced to one representative and the group's mean.

Clients :math:`i,j` are *interchangeable* when swapping them maps the PEP onto itself:
they share the function class and the heterogeneity condition (both are the same for every
client here), have the same weight :math:`\alpha_i=\alpha_j`, and under every mask do local
work in the same rounds with the same aggregation weights (computed by the simulator's own
code, :func:`fedtheory.pep.methods.participants` and
:func:`~fedtheory.pep.methods.fedavg_weights`). The PEP is a convex program invariant under
the group :math:`\mathfrak S_{k_1}\times\dots` of such permutations, so the group average of
any solution is a solution of the same value: the worst case is attained by an invariant
Gram matrix (Colla & Hendrickx 2024, agent symmetries in performance estimation; Gatermann
& Parrilo 2004 for invariant SDPs).

For an invariant solution, the :math:`k` clients of a group evaluated in the same role
:math:`r` (same round, same local step) have vectors
:math:`u_{m,r}=\bar u_r+e_m\otimes\delta_r`, :math:`m=1..k`, where :math:`\bar u_r` (the
group's mean) lies in the invariant part, :math:`e_m=\varepsilon_m-\tfrac1k\mathbf 1` and
:math:`\delta_r` lies in a deviation space orthogonal to the invariant part and to the other
groups' deviations, so that
:math:`\langle u_{m,r},u_{l,s}\rangle=\langle\bar u_r,\bar u_s\rangle
+(\delta_{ml}-\tfrac1k)\langle\delta_r,\delta_s\rangle`, and every client of the group has
the same function values. Conversely any such data are the Gram matrix of :math:`k` clients
(the deviations realised in :math:`\mathbb R^k_0\otimes\mathbb R^n`). The reduced PEP
therefore keeps, per group, one PEPit function (client :math:`m=1`, evaluated at
:math:`\bar y_r+c\,\delta^y_r` with gradient :math:`\bar u_r+c\,\delta_r`,
:math:`c=\sqrt{1-1/k}`, the only interpolation conditions it needs), the mean and deviation
leaves, and equality constraints making every deviation orthogonal to every invariant leaf
and to other groups' deviations (:mod:`fedtheory.pep._program` turns them into a
block-diagonal Gram matrix). Its value is the full PEP's, and its size does not grow with
:math:`k`: for FedAvg with full participation, :math:`T=6`, :math:`E=4`, the Gram matrix is
:math:`51\times51` for :math:`N=3` and :math:`N=4` (full PEP: 76 and 101).

Every vector of the method is a :class:`Vector` (invariant part plus the members'
deviations); the server models must come out invariant, which checks the grouping on the
computation itself (:class:`Broken` otherwise, and the caller solves the full PEP).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fedtheory.pep import methods
from fedtheory.pep.classes import SmoothNonconvex, SmoothStronglyConvex
from fedtheory.pep.heterogeneity import AtOptimum, Dissimilarity

REDUCIBLE_CLASSES = (SmoothStronglyConvex, SmoothNonconvex)
"""Classes whose interpolation conditions involve only a client's own (point, gradient,
value) triplets, all of which the representative carries."""

SAME = 1e-12
"""Two members' deviations are the same combination when their coefficients differ by at
most this much (relative): they are computed by the same operations, so in practice equal."""


class Broken(Exception):
    """A vector of the method is not of the form the grouping predicts."""


def groups(algorithm, fclass, participation, alpha, heterogeneity) -> tuple[list, str]:
    r"""Partition of the clients into interchangeable groups (lists of indices, in order)
    and a sentence saying what was found or why no reduction applies (then one group per
    client)."""
    n = participation.num_clients
    alone = [[i] for i in range(n)]
    if not isinstance(fclass, REDUCIBLE_CLASSES):
        return alone, f"none (full PEP: the class {fclass.name} is not reduced)"
    if type(algorithm) not in methods.SUPPORTED:
        return alone, f"none (full PEP: no symmetry check for {type(algorithm).__name__})"
    if heterogeneity is not None and not isinstance(heterogeneity, (AtOptimum, Dissimilarity)):
        return alone, "none (full PEP: unknown heterogeneity condition)"
    columns = [[float(a)] for a in alpha]  # what must agree: weight, work and q per mask
    for mask in participation.masks:
        work = methods.participants(algorithm, mask)
        q = (
            methods.fedavg_weights(algorithm.aggregator, work)
            if isinstance(algorithm, methods.FedAvg)
            else np.zeros(work.shape)
        )
        for i in range(n):
            columns[i] += [*work[:, i].tolist(), *q[:, i].tolist()]
    found: dict[tuple, list[int]] = {}
    for i, col in enumerate(columns):
        found.setdefault(tuple(col), []).append(i)
    parts = sorted(found.values())
    if all(len(p) == 1 for p in parts):
        return alone, "none (full PEP: no two clients share weight, participation and weights)"
    shown = ", ".join("{" + ",".join(map(str, p)) + "}" for p in parts)
    return parts, f"clients {shown} interchangeable: one representative and the mean per group"


def _key(point) -> tuple:
    return tuple(sorted((leaf.counter, c) for leaf, c in point.decomposition_dict.items() if c))


def _same(a, b) -> bool:
    da, db = a.decomposition_dict, b.decomposition_dict
    keys = {k for k, v in da.items() if v} | {k for k, v in db.items() if v}
    scale = max([abs(v) for v in (*da.values(), *db.values())], default=0.0)
    return all(abs(da.get(k, 0.0) - db.get(k, 0.0)) <= SAME * scale for k in keys)


class Vector:
    r""":math:`T+\sum_g\sum_me_m\otimes X_{g,m}`: the invariant part ``trivial`` (a PEPit
    point) and, per group ``g``, the members' deviations ``parts[g][m]`` (PEPit points in
    that group's deviation leaves)."""

    __slots__ = ("model", "parts", "trivial")
    __array_ufunc__ = None  # numpy scalar * Vector defers to Vector.__rmul__

    def __init__(self, model, trivial, parts=None) -> None:
        self.model, self.trivial, self.parts = model, trivial, parts or {}

    def _combine(self, other, a: float, b: float) -> Vector:
        if not isinstance(other, Vector):
            return NotImplemented
        trivial = a * self.trivial + b * other.trivial
        parts = {}
        for g in self.parts.keys() | other.parts.keys():
            mine, theirs = self.parts.get(g, {}), other.parts.get(g, {})
            members = {}
            for m in mine.keys() | theirs.keys():
                if m in mine and m in theirs:
                    members[m] = a * mine[m] + b * theirs[m]
                else:
                    members[m] = a * mine[m] if m in mine else b * theirs[m]
            parts[g] = members
        return Vector(self.model, trivial, self.model.canonical(parts))

    def __add__(self, other):
        return self._combine(other, 1.0, 1.0)

    def __sub__(self, other):
        return self._combine(other, 1.0, -1.0)

    def __neg__(self) -> Vector:
        return -1.0 * self

    def __rmul__(self, a):
        if isinstance(a, Vector):
            return self.model.inner(a, self)
        a = float(a)
        parts = {g: {m: a * x for m, x in p.items()} for g, p in self.parts.items()}
        return Vector(self.model, a * self.trivial, parts)

    def __mul__(self, other):
        return self.model.inner(self, other) if isinstance(other, Vector) else self.__rmul__(other)

    def __truediv__(self, d):
        return (1.0 / float(d)) * self

    def __pow__(self, power: int):
        if power != 2:
            raise ValueError(f"Vector ** {power}: only squares are inner products")
        return self.model.inner(self, self)


@dataclass
class _Role:
    """One evaluation of a group's representative: where, its gradient's mean and
    deviation, the value (common to the group's members)."""

    trivial: object  # point's invariant part
    deviation: object | None  # point's deviation X (None: invariant point)
    mean: object  # gradient's mean part
    spread: object | None  # gradient's deviation leaf (None: a group of one)
    value: object


class Reduced:
    r"""The reduced PEP's clients: ``clients[i]`` answers ``gradient`` for client ``i``,
    ``F`` is :math:`\sum_i\alpha_if_i`, ``x_star`` its stationary point, ``x0`` the initial
    point; :meth:`close` checks the server models and adds the orthogonality constraints,
    :meth:`instance` rebuilds every client's data after the solve."""

    def __init__(self, pep, fclass, parts: list, alpha) -> None:
        from PEPit import Expression, Point

        self.pep, self.parts, self.alpha = pep, parts, np.asarray(alpha, float)
        self.Point, self.Expression = Point, Expression
        self.zero = Point(is_leaf=False, decomposition_dict={})
        self.functions = [fclass.declare(pep) for _ in parts]
        self.group_of = {i: (g, m) for g, p in enumerate(parts) for m, i in enumerate(p)}
        self.weight = [float(self.alpha[p].sum()) for p in parts]
        self.roles: list[dict] = [{} for _ in parts]
        self.order: list[list] = [[] for _ in parts]
        self.spread_leaves: list[list] = [[] for _ in parts]
        self.clients = [_Client(self, i) for i in range(len(self.alpha))]
        self.x0 = self.vector(pep.set_initial_point())
        xs = Point()
        self.x_star = self.vector(xs)
        means = []
        for g in range(len(parts)):  # sum_g w_g ubar_g(x*) = 0: the last mean is dependent
            mean = None
            if g == len(parts) - 1:
                rest = [w * u for w, u in zip(self.weight[:-1], means, strict=True)]
                mean = (-1.0 / self.weight[-1]) * sum(rest[1:], rest[0]) if rest else self.zero
            means.append(self._evaluate(g, xs, None, mean).mean)
        self.F = _Sum(self)

    def vector(self, point) -> Vector:
        return Vector(self, point)

    def canonical(self, parts: dict) -> dict:
        """Drop a group whose every member carries the same deviation (:math:`\\sum_me_m=0`)."""
        out = {}
        for g, members in parts.items():
            k = len(self.parts[g])
            xs = list(members.values())
            if len(members) == k and all(_same(xs[0], x) for x in xs[1:]):
                continue
            if members:
                out[g] = members
        return out

    def inner(self, a: Vector, b: Vector):
        r""":math:`\langle T_a,T_b\rangle+\sum_g[\sum_m\langle X_m,Y_m\rangle
        -\tfrac1k\langle\sum_mX_m,\sum_mY_m\rangle]` as a PEPit expression."""
        total = a.trivial * b.trivial
        for g in a.parts.keys() & b.parts.keys():
            pa, pb = a.parts[g], b.parts[g]
            k = len(self.parts[g])
            for m in pa.keys() & pb.keys():
                total = total + pa[m] * pb[m]
            sa = sum(list(pa.values())[1:], next(iter(pa.values())))
            sb = sum(list(pb.values())[1:], next(iter(pb.values())))
            total = total - (1.0 / k) * (sa * sb)
        return total

    def _evaluate(self, g: int, trivial, deviation, mean=None) -> _Role:
        """The representative of group ``g`` at :math:`T+c\\,X` (new leaves on first use)."""
        key = (_key(trivial), None if deviation is None else _key(deviation))
        role = self.roles[g].get(key)
        if role is not None:
            return role
        k = len(self.parts[g])
        mean = self.Point() if mean is None else mean
        value = self.Expression()
        if k == 1:
            role = _Role(trivial, None, mean, None, value)
            self.functions[g].add_point((trivial, mean, value))
        else:
            c = math.sqrt(1.0 - 1.0 / k)
            spread = self.Point()
            self.spread_leaves[g].append(spread)
            point = trivial if deviation is None else trivial + c * deviation
            role = _Role(trivial, deviation, mean, spread, value)
            self.functions[g].add_point((point, mean + c * spread, value))
        self.roles[g][key] = role
        self.order[g].append(role)
        return role

    def gradient(self, i: int, y: Vector) -> Vector:
        """Client ``i``'s gradient at ``y`` (a vector of that client's own trajectory)."""
        g, m = self.group_of[i]
        others = set(y.parts) - {g}
        mine = y.parts.get(g, {})
        if others or set(mine) - {m}:
            raise Broken(f"client {i} evaluated at a point mixing other clients' deviations")
        role = self._evaluate(g, y.trivial, mine.get(m))
        return self._member(g, m, role.mean, role.spread)

    def _member(self, g: int, m: int, trivial, deviation) -> Vector:
        r"""Member ``m`` of group ``g``'s vector :math:`T+e_m\otimes X` (X None: T)."""
        return Vector(self, trivial, {} if deviation is None else {g: {m: deviation}})

    def close(self, trajectories) -> None:
        """Check that every server model is invariant (:class:`Broken` otherwise), then make
        every deviation leaf orthogonal to every invariant leaf and to other groups'
        deviations (equality constraints on the Gram matrix)."""
        if any(x.parts for models in trajectories for x in models):
            raise Broken("a server model depends on how the clients of a group are numbered")
        spread = [s for leaves in self.spread_leaves for s in leaves]
        ids = {id(s) for s in spread}
        invariant = [p for p in self.Point.list_of_leaf_points if id(p) not in ids]
        for g, leaves in enumerate(self.spread_leaves):
            later = [s for h in self.spread_leaves[g + 1 :] for s in h]
            for s in leaves:
                for z in invariant + later:
                    self.pep.add_constraint(s * z == 0)

    def blocks(self) -> list[list[int]]:
        """Leaf indices of the Gram matrix's diagonal blocks: the invariant leaves, then each
        group's deviation leaves (the orthogonality constraints make it block diagonal)."""
        spread = [[s.counter for s in leaves] for leaves in self.spread_leaves if leaves]
        taken = {i for b in spread for i in b}
        return [[i for i in range(self.Point.counter) if i not in taken], *spread]

    def realise(self, v: Vector) -> np.ndarray:
        r"""Coordinates of ``v`` in :math:`\mathbb R^n\oplus\bigoplus_g(\mathbb R^{k_g}\otimes
        \mathbb R^n)` from the solved leaves (:math:`n` = Gram dimension)."""
        from fedtheory.pep._program import value

        n = self.Point.counter
        out = [np.asarray(value(v.trivial), float) if v.trivial.decomposition_dict else np.zeros(n)]
        for g, p in enumerate(self.parts):
            k = len(p)
            block = np.zeros((k, n))
            for m, x in v.parts.get(g, {}).items():
                e = -np.full(k, 1.0 / k)
                e[m] += 1.0
                block += np.outer(e, value(x))
            out.append(block.ravel())
        return np.concatenate(out)

    def instance(self, instance_type):
        """Every client's (points, gradients, values) and :math:`x_0,x^*`, realised."""
        from fedtheory.pep._program import value

        pts, grads, vals = [], [], []
        for i in range(len(self.alpha)):
            g, m = self.group_of[i]
            rows = []
            for r in self.order[g]:
                point, grad = (
                    self._member(g, m, r.trivial, r.deviation),
                    self._member(g, m, r.mean, r.spread),
                )
                rows.append((self.realise(point), self.realise(grad), float(value(r.value))))
            pts.append(np.array([a for a, _, _ in rows]))
            grads.append(np.array([b for _, b, _ in rows]))
            vals.append(np.array([c for _, _, c in rows]))
        return instance_type(
            self.realise(self.x0), self.realise(self.x_star), tuple(pts), tuple(grads),
            tuple(vals), None,
        )  # fmt: skip


class _Client:
    """Client ``i`` as the method sees it (``gradient`` only)."""

    def __init__(self, model: Reduced, i: int) -> None:
        self.model, self.i = model, i

    def gradient(self, y: Vector) -> Vector:
        return self.model.gradient(self.i, y)


class _Sum:
    r""":math:`F=\sum_i\alpha_if_i` at invariant points: :math:`\sum_gw_g\,f_g(x)` and
    :math:`\sum_gw_g\bar u_g(x)`, :math:`w_g=\sum_{i\in g}\alpha_i`."""

    def __init__(self, model: Reduced) -> None:
        self.model = model

    def _roles(self, x: Vector) -> list:
        if x.parts:
            raise Broken("F evaluated at a point that is not invariant (a server model)")
        return [self.model._evaluate(g, x.trivial, None) for g in range(len(self.model.parts))]

    def __call__(self, x: Vector):
        terms = [w * r.value for w, r in zip(self.model.weight, self._roles(x), strict=True)]
        return sum(terms[1:], terms[0])

    def gradient(self, x: Vector) -> Vector:
        terms = [w * r.mean for w, r in zip(self.model.weight, self._roles(x), strict=True)]
        return Vector(self.model, sum(terms[1:], terms[0]))
