"""Convex programs for aggregation weights (cvxpy, DPP)."""
