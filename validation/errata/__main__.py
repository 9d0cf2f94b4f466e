"""``python -m fedtheory.validation.errata [--markdown]``: print every erratum."""

from fedtheory.validation.errata.catalogue import main

main()
