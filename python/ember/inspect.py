"""ember.inspect: the instruments. Each watches from its creation until
stop() (or the end of a with block):

    with ember.inspect.Profiler() as prof:
        loss = model.loss(x, y); loss.backward()
    print(prof.table())
"""
from ._ember.inspect import BackwardTrace, Profiler  # noqa: F401
