"""The template filters every page shares, loaded as builtins (no {% load %} needed): percentages, money and lookups.

`pct` is the one way a fraction becomes a percentage on a page; Python code that writes one (SVG labels,
commands) calls `percent` below."""

from decimal import ROUND_HALF_UP, Decimal
from zoneinfo import ZoneInfo

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


def dollars(amount) -> str:
    """An amount of US dollars as a person reads it: "$0.00" for nothing, "under $0.01" for a fraction of a cent
    (a vendor line costs that), else to the cent with thousands separated ("$1,234.50"); "n/a" when unknown."""
    if amount is None or amount == "":
        return NO_FIGURE
    amount = Decimal(str(amount))
    if 0 < amount < Decimal("0.01"):
        return "under $0.01"
    return f"${amount.quantize(Decimal('0.01'), rounding=ROUND_HALF_UP):,.2f}"


@register.filter
def day_in(moment, zone_name):
    """A moment's date in a timezone (an organization's): `{{ flag.joined_at|day_in:tz|date:"j M" }}`."""
    if moment is None:
        return None
    return moment.astimezone(ZoneInfo(zone_name or "UTC")).date()


@register.filter
def minute_in(moment, zone_name):
    """A moment to the minute in a timezone (an organization's), naming it: "2026-12-04 14:02 UTC", "2026-07-01
    15:02 IST"; "" for none."""
    if moment is None:
        return ""
    local = moment.astimezone(ZoneInfo(zone_name or "UTC"))
    return f"{local:%Y-%m-%d %H:%M} {local.tzname()}"


@register.filter
def time_in(moment, zone_name):
    """A moment's time of day to the second in a timezone (an organization's), naming it: "14:02:31 UTC"."""
    if moment is None:
        return ""
    local = moment.astimezone(ZoneInfo(zone_name or "UTC"))
    return f"{local:%H:%M:%S} {local.tzname()}"


@register.filter
def usd(amount):
    """Money on a page ("$0.00", "under $0.01", "$12.40"); see dollars."""
    return dollars(amount)


@register.filter
def price(transcriber):
    """A catalogue entry's list price as a page shows it: "free (runs on this server)" for a local engine (no
    price), else per 1,000 audio minutes, as vendors are compared ("$4.30 per 1,000 min" for $0.0043 a minute)."""
    per_minute = Decimal(str(transcriber.price_per_minute or 0))
    if not per_minute:
        return "free (runs on this server)"
    return f"{dollars(per_minute * 1000)} per 1,000 min"
