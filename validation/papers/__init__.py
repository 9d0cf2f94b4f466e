"""The registered papers' checks, one folder per paper: its validations and its errata, each
module named in the paper's record (:mod:`fedtheory.papers`), loaded when the record is
registered."""
