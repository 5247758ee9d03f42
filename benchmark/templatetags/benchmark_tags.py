"""Template filters for benchmark pages: {% load benchmark_tags %}. Percentages and lookups are the shared
builtins of oncore/templatetags/oncore_tags.py."""

from django import template

register = template.Library()


@register.filter
def tier_label(tiers):
    """AB becomes A+B; A and B stay."""
    return "A+B" if tiers == "AB" else tiers
