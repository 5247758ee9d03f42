"""The template filters every page shares, loaded as builtins (no {% load %} needed): percentages and lookups.

`pct` is the one way a fraction becomes a percentage on a page; Python code that writes one (SVG labels,
commands) calls `percent` below."""

from django import template

register = template.Library()

NO_FIGURE = "n/a"


def percent(fraction, places: int = 1) -> str:
    """0.7515 -> "75.2%"; "n/a" when there is no figure (None: nothing was scored)."""
    if fraction is None or fraction == "":
        return NO_FIGURE
    return f"{100 * fraction:.{places}f}%"


@register.filter
def pct(fraction, places=1):
    """A fraction as a percentage ("75.0%", or "75%" with `|pct:0`); "n/a" when there is none."""
    return percent(fraction, int(places))


@register.filter
def pct_number(fraction):
    """A fraction as a bare percentage number for a CSS width (75.0); 0 when there is none."""
    if fraction is None or fraction == "":
        return 0
    return round(100 * fraction, 1)


@register.filter
def points(value):
    """Percentage points with their sign ("+3.5 points"); "n/a" when there is no figure."""
    if value is None or value == "":
        return NO_FIGURE
    return f"{value:+.1f} points"


@register.filter
def get_item(mapping, key):
    """mapping[key], or None when the key is absent or there is no mapping (a page not given one)."""
    if not hasattr(mapping, "get"):
        return None
    return mapping.get(key)
