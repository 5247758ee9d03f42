"""The Jinja2 environment of the pages' long row lists (the turn table's rows, a call's lines, the calls list): the
rest of every page is a Django template, which includes the rows rendered here as one piece. Jinja2 compiles a
template to Python, so a row costs a few microseconds where Django's template engine spent about a millisecond
(bench/bank_page.py measures both). Templates live under templates/jinja2/ and end in .jinja, so the Django
engine never finds them; views render them with `rows_html` (or `rows_each`, a row at a time, to keep each)."""

from functools import lru_cache

from django.template import engines
from django.template.loader import render_to_string
from django.urls import get_script_prefix, reverse
from django.utils.timezone import localtime
from jinja2 import Environment
from markupsafe import Markup

from oncore.templatetags import oncore_tags


@lru_cache(maxsize=256)
def _url_parts(name: str, arity: int, prefix: str) -> tuple[str, ...]:
    """The path of a URL named `name` with `arity` integer arguments, cut where the arguments go: reversed once
    with stand-ins (Django's reverse costs tens of microseconds, and a page of rows asks for hundreds)."""
    stand_ins = [987654321 + i for i in range(arity)]
    path = reverse(name, args=stand_ins)
    parts = []
    for stand_in in stand_ins:
        head, found, path = path.partition(str(stand_in))
        if not found:
            raise ValueError(f"The URL {name!r} does not take {arity} integer argument(s) in order.")
        parts.append(head)
    return (*parts, path)


def url(name: str, *args: int) -> str:
    """The path of the URL named `name` with integer arguments (Django's {% url %} for rows)."""
    parts = _url_parts(name, len(args), get_script_prefix())
    return "".join(part + str(int(arg)) for part, arg in zip(parts, args, strict=False)) + parts[-1]


def minute(moment) -> str:
    """A moment in the site's time zone to the minute, as the pages write it in a row: "2026-12-04 14:02"
    (Django's date:"Y-m-d H:i")."""
    return localtime(moment).strftime("%Y-%m-%d %H:%M") if moment else ""


def day_month(day) -> str:
    """A date as the pages write it in a row: "4 Dec" (Django's "j M")."""
    return f"{day.day} {day.strftime('%b')}"


def environment(**options) -> Environment:
    env = Environment(**options)
    env.globals.update(url=url)
    env.filters.update(
        day_in=oncore_tags.day_in,
        day_month=day_month,
        minute=minute,
        minute_in=oncore_tags.minute_in,
        pct=oncore_tags.pct,
        usd=oncore_tags.usd,
    )
    return env


def rows_html(template_name: str, context: dict) -> Markup:
    """A row template rendered with `context` (an app passes its own helpers in it, as functions that return
    Markup), as a safe string a Django template includes as it is."""
    return Markup(render_to_string(template_name, context, using="jinja2"))


def rows_each(template_name: str, contexts) -> list[Markup]:
    """rows_html of one template for each context (rows kept one by one), the template looked up once."""
    template = engines["jinja2"].get_template(template_name)
    return [Markup(template.render(context)) for context in contexts]
