"""When a figure on a benchmark page needs a caution beside it. Pure (no Django).

A WER over 100% can only come from insertions: a transcriber that hallucinated many words on a clip. Pooled over
many clips it is a rate; on fewer than SMALL_N clips one such clip dominates it, so the page gives its n and one
caution for the whole table (over_100_caution), not a warning on every figure. The same goes for a difference of
two WERs (the code-switching cost) over 100 points.
"""

from .plural import listed

SMALL_N = 10  # fewer clips than this: a figure over 100% is a warning, not a rate


def outsized(value, n) -> bool:
    """Whether a fraction (a WER, or a difference of WERs) is over 1 (100%, or 100 points) and rests on fewer than
    SMALL_N clips."""
    if value is None or value == "" or n is None or n == "":
        return False
    return abs(float(value)) > 1 and int(n) < SMALL_N


def over_100_caution(ns) -> str | None:
    """The one caution of a table whose outsized figures rest on these numbers of clips; None when there are
    none. over_100_caution([2, 2]) -> "Figures over 100% come from n=2 clips: ..."."""
    ns = sorted({int(n) for n in ns})
    if not ns:
        return None
    clips = "clip" if ns == [1] else "clips"
    return (
        f"Figures over 100% come from {listed(f'n={n}' for n in ns)} {clips}: one clip with many insertions "
        "(a hallucination) dominates; read them as a warning, not a rate."
    )
