"""Template filters for benchmark figures: {% load benchmark_tags %}."""

from django import template

register = template.Library()


@register.filter
def get_item(mapping, key):
    """mapping[key], or None when the key is absent or there is no mapping (a page not given one)."""
    if not hasattr(mapping, "get"):
        return None
    return mapping.get(key)


@register.filter
def pct(fraction):
    """A fraction as a percentage with one decimal ("75.0%"); "n/a" when there is none (n = 0)."""
    if fraction is None or fraction == "":
        return "n/a"
    return f"{100 * fraction:.1f}%"


@register.filter
def points(value):
    """Percentage points with their sign ("+3.5 points"); "n/a" when there is no figure."""
    if value is None or value == "":
        return "n/a"
    return f"{value:+.1f} points"


@register.filter
def tier_label(tiers):
    """AB becomes A+B; A and B stay."""
    return "A+B" if tiers == "AB" else tiers
