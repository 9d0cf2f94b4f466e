"""The machinery of the validation suite, shared by every paper's checks and the user's: the
registry of checks and their parameter kinds, the runner (compute, save, resume, report), the
report's blocks, the one plotting style and its figure lint, the digest of the code a check
runs, the local Dask cluster, and the set-up table of a paper's experiment."""
