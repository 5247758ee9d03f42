"""{% load tradeoff %}: latency and small costs as the results page and the leaderboard write them."""

from decimal import Decimal

from django import template

from oncore.templatetags.oncore_tags import dollars

from ..lib import tradeoff as lib_tradeoff

register = template.Library()


@register.filter
def seconds(value):
    """A latency in seconds as people read it ("180 ms", "1.24 s"); "n/a" for none."""
    return lib_tradeoff.seconds_words(value)


@register.filter
def percentiles(found):
    """A lib_tradeoff.Latency's p50 / p95, and p99 where it has one ("180 ms / 420 ms / 1.10 s")."""
    shown = [found.p50_s, found.p95_s] + ([found.p99_s] if found.p99_s is not None else [])
    return " / ".join(lib_tradeoff.seconds_words(v) for v in shown)


@register.filter
def per_thousand(amount):
    """A cost per line as a person compares them, in cents: per 1,000 lines ("$0.16" for $0.000157 a line, as the
    catalogue's prices are per 1,000 minutes); "n/a" for none."""
    if amount is None or amount == "":
        return "n/a"
    return dollars(Decimal(str(amount)) * 1000)


@register.filter
def hours(value):
    """Hours of work a month, as people read them ("12.5 hours", "2.7 minutes")."""
    return "n/a" if value is None else lib_tradeoff.hours_words(value)


@register.filter
def factor(value):
    """A real-time factor to two places ("0.18"); "n/a" for none."""
    return "n/a" if value is None else f"{value:.2f}"


@register.filter
def whole_minutes(minutes):
    """Minutes to the whole minute, with thousands separated ("1,234 minutes"); under ten, to a tenth."""
    if minutes is None:
        return "n/a"
    return lib_tradeoff.minutes_words(Decimal(str(minutes)))


@register.filter
def against_now(projection):
    """A monthly projection against what the calls cost now: "$12.40 more than now", "$3.00 less than now", "the
    same as now"; where some minutes ran on a live transcriber named on the calls only and not in the catalogue,
    the same on the minutes whose cost is known ("$3.00 less than now on the 93% of minutes priced now"), or, with
    none known, that today's cost is not known."""
    known = projection.known_difference
    if known is None:
        return "today's cost unknown: its live transcriber is not in the catalogue (named on the calls only)"
    said = (
        "the same as now"
        if known == 0
        else f"{dollars(abs(known))} {'more' if known > 0 else 'less'} than now"
    )
    if projection.difference is None:
        share = lib_tradeoff.share_words(projection.priced_minutes, projection.minutes)
        return f"{said} on the {share} of minutes priced now"
    return said
