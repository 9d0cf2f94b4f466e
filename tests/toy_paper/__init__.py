r"""A toy paper, registered by one call (``tests/test_papers.py`` checks every surface).

Setting: :math:`N` identical clients :math:`F_k(w)=\tfrac L2\|w\|^2`, all available, each
taking one gradient step of rate :math:`\eta\le1/L`; the server averages the updates over
all :math:`N` clients (*toy averaging*). Toy Lemma: after :math:`T` rounds
:math:`\|w_T\|^2\le(1-\eta L)^{2T}\Delta_0` with :math:`\Delta_0=\|w_0\|^2` (equality: the
bound is tight). Everything a paper brings is in this package, one module per layer as
a paper's modules are: its own symbol and the statement (``statements``), the algorithm
with its plain loop and agreement-test configuration (``algorithm``), a tightness family
(``tightness``), the method and the statement as a PEP (``pep``), a validation
(``validation``) and an erratum (``errata``). Nothing imports it: the test registers
it with one call, ``fedtheory.papers.register(Paper("toy", ..., statements=(...), ...))``.
"""
