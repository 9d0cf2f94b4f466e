r"""Verdicts: a measured quantity next to what a theorem says, and what the evidence shows.

Statements (theorems, lemmas, identities) get one of four outcomes, by one rule everywhere
(the validations, :func:`fedtheory.validation.theorem_check`,
:func:`fedtheory.testing.check_theorem`, the :mod:`fedtheory.testing` assertions and the
tightness search):

* ``holds`` -- deterministic upper bound: ``measured <= bound + floor`` (the floor is
  rounding, :func:`rounding_floor`); upper bound on a random quantity: the *upper*
  confidence limit of its mean is at most the bound; exact statement on a random quantity:
  the confidence interval lies inside the stated equivalence margin around the prediction
  (two one-sided tests);
* ``violated`` -- deterministic: the comparison fails beyond the floor; random: the *lower*
  confidence limit is above the bound, or the interval lies outside the prediction ± the
  stated margin (the printed margin is the rule);
* ``inconclusive`` -- random quantities only: neither; the row says how many replicates
  would decide it at the measured spread (:func:`replicates_needed`);
* ``outside assumptions`` -- the instance does not satisfy the theorem's hypotheses; the
  comparison is still reported, but it neither confirms nor refutes the statement.

The intervals fit the data (:func:`mean_intervals`): an exact binomial interval for 0/1
outcomes, Student-t otherwise, a bootstrap on request (heavy tails), all intersected with
the quantity's support when one is given; over the points of a row they are
Bonferroni-corrected, so the row's confidence is family-wise.

A paper's empirical finding (an ordering of methods in a table, say) gets outcomes of its
own, never *violated* (:func:`compare_finding`): judged over independent data draws, each
with its own run seeds, it is *reproduced* (on the set-up judged against, or *on a
stand-in*), *reversed* (the opposite ordering significant across the draws, larger than the
smallest difference the comparison detects, on the set-up), *contradicted at this scale*
(the opposite ordering significant, not every condition of *reversed* met), *underpowered*
(neither significant: how many draws agree in direction, how many would decide it) or
*depends on* an unforced set-up choice whose values change the outcome. One function words
every outcome (:func:`finding_label`). The row gives the numbers; it is not evidence against
a statement of the paper.

The package, one concept per module: :mod:`~fedtheory.verdict.rows` (the row and its
outcome), :mod:`~fedtheory.verdict.rounding` (the rounding floor),
:mod:`~fedtheory.verdict.intervals` (confidence intervals of a mean),
:mod:`~fedtheory.verdict.outcomes` (the decision rules),
:mod:`~fedtheory.verdict.statements` (rows for statements),
:mod:`~fedtheory.verdict.adaptive` (adaptive replication) and
:mod:`~fedtheory.verdict.findings` (a paper's empirical findings). Every public name is
importable from ``fedtheory.verdict``.
"""

from fedtheory.verdict.adaptive import AUTO_START, adaptive_looks, replicate_until_decided
from fedtheory.verdict.findings import (
    DETECTION_POWER,
    MIN_DATA_SEEDS,
    VARIANT_HEADER,
    FindingDifference,
    FindingSpec,
    MeanDifference,
    Variant,
    compare_finding,
    compare_findings,
    distinct_runs,
    draws_to_decide,
    finding_difference,
    finding_label,
    holm_levels,
    mean_difference,
)
from fedtheory.verdict.intervals import (
    BOOTSTRAP_RESAMPLES,
    INTERVAL_KINDS,
    MeanIntervals,
    mean_confidence_interval,
    mean_intervals,
    replicates_needed,
)
from fedtheory.verdict.outcomes import (
    equivalence_outcome,
    near,
    upper_bound_outcome,
    within_bound,
)
from fedtheory.verdict.rounding import BOUND_RTOL, ROUNDING_ULPS, Measured, rounding_floor
from fedtheory.verdict.rows import (
    FINDING_VERDICTS,
    LOOSE_RATIO,
    Comparison,
    Verdict,
    algorithm_comparison,
    consistency_check,
    evidence_of,
    format_ratio,
)
from fedtheory.verdict.statements import (
    compare_equal,
    compare_mean_equal,
    compare_mean_upper_bound,
    compare_upper_bound,
)

__all__ = [
    "AUTO_START",
    "BOOTSTRAP_RESAMPLES",
    "BOUND_RTOL",
    "DETECTION_POWER",
    "FINDING_VERDICTS",
    "INTERVAL_KINDS",
    "LOOSE_RATIO",
    "MIN_DATA_SEEDS",
    "VARIANT_HEADER",
    "Variant",
    "ROUNDING_ULPS",
    "Comparison",
    "FindingDifference",
    "MeanDifference",
    "MeanIntervals",
    "Measured",
    "Verdict",
    "adaptive_looks",
    "compare_equal",
    "FindingSpec",
    "algorithm_comparison",
    "consistency_check",
    "evidence_of",
    "compare_finding",
    "compare_findings",
    "compare_mean_equal",
    "compare_mean_upper_bound",
    "compare_upper_bound",
    "distinct_runs",
    "draws_to_decide",
    "finding_label",
    "equivalence_outcome",
    "finding_difference",
    "holm_levels",
    "format_ratio",
    "mean_confidence_interval",
    "mean_difference",
    "mean_intervals",
    "near",
    "replicate_until_decided",
    "replicates_needed",
    "rounding_floor",
    "upper_bound_outcome",
    "within_bound",
]
