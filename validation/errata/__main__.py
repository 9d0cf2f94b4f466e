"""``python -m fedtheory.validation.errata [--markdown]``: print every erratum."""

import sys

from fedtheory.validation.errata.catalogue import main

main(sys.argv[1:])
