"""CA-Fed's checks: its validations and errata, the modules its record names
(:mod:`fedtheory.papers.cafed`)."""
