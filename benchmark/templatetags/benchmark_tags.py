"""Template filters for benchmark pages: {% load benchmark_tags %}. Percentages, money and lookups are the
shared builtins of oncore/templatetags/oncore_tags.py."""

from django import template

from ..caution import outsized as _outsized
from ..plural import counted as _counted

register = template.Library()


@register.filter
def tier_label(tiers):
    """AB becomes A+B; A and B stay."""
    return "A+B" if tiers == "AB" else tiers


@register.filter
def counted(n, words):
    """{{ n|counted:"clip" }} -> "1 clip", "2 clips"; an irregular plural after a comma:
    {{ n|counted:"utterance,utterances" }}."""
    singular, _, plural = str(words).partition(",")
    return _counted(int(n or 0), singular, plural or None)


@register.filter
def outsized(value, n):
    """Whether a WER-like figure (a fraction, or a delta) is over 100% and computed on too few clips to read
    as a rate: the figure the page's caution is about (benchmark.caution.outsized)."""
    return _outsized(value, n)


@register.filter
def p_value(p):
    """A p-value to four places, "< 0.0001" below that (never "0.0000", which reads as impossible)."""
    if p is None or p == "":
        return "n/a"
    return "< 0.0001" if float(p) < 0.00005 else f"{float(p):.4f}"
