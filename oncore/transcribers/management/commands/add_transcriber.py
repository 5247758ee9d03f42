import argparse
import json
import re
import textwrap
from datetime import date
from decimal import Decimal, InvalidOperation

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, DjangoHelpFormatter
from django.utils import timezone
from django.utils.text import slugify

from oncore.transcribers import providers
from oncore.transcribers.models import Transcriber
from oncore.transcribers.options import GENERIC_PROTOCOL, check_options, describe
from oncore.transcribers.providers import ENV_NAME


def _epilog() -> str:
    parts = ["Options per provider (--options, a JSON object; an option left out takes its default):"]
    for provider in providers.all_providers():
        for mode in provider.modes:
            parts.append(f"\n{provider.name}: {provider.label}, {mode}\n{describe(provider.name, mode)}")
    protocol = re.sub(r"`([^`]*)`", r"\1", GENERIC_PROTOCOL)
    parts.append(
        "\nThe generic provider:\n"
        + textwrap.fill(protocol, width=100, initial_indent="  ", subsequent_indent="  ")
    )
    parts.append(
        "\nExamples:\n"
        "  manage.py add_transcriber deepgram nova-3 --price-per-minute 0.0043 \\\n"
        "      --price-source https://deepgram.com/pricing --price-date 2026-11-20 --api-key-env DEEPGRAM_API_KEY\n"
        "  manage.py add_transcriber generic in-house-v2 --display-name 'In-house ASR v2' \\\n"
        '      --options \'{"url": "http://asr.internal:9000/transcribe"}\' --disabled'
    )
    return "\n".join(parts)


class HelpFormatter(DjangoHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Django's order of arguments, with the epilog's lines kept as written."""


class Command(BaseCommand):
    help = textwrap.fill(
        "Add a transcriber to the catalogue (the list banks choose candidates from): its provider, model, list "
        "price per audio minute with where and when the price was read, the provider's options, and whether it "
        "is offered. The options are checked against what the provider's engine reads (listed below); keys are "
        "never stored: --api-key-env names the environment variable that holds one.",
        width=100,
    )

    def create_parser(self, prog_name, subcommand, **kwargs):
        kwargs.setdefault("formatter_class", HelpFormatter)
        return super().create_parser(prog_name, subcommand, epilog=_epilog(), **kwargs)

    def add_arguments(self, parser):
        parser.add_argument("provider", help=f"One of: {', '.join(providers.names())}.")
        parser.add_argument("model", help="The provider's model string, e.g. nova-3, tiny.en, en-us.")
        parser.add_argument(
            "--mode",
            choices=[Transcriber.BATCH, Transcriber.STREAMING],
            default=Transcriber.BATCH,
            help="batch (the clip in one request, the default) or streaming (the clip as a live call; "
            f"providers {', '.join(providers.names(Transcriber.STREAMING))}).",
        )
        parser.add_argument(
            "--slug", help="Its id in URLs and lists (default: from provider, model and mode)."
        )
        parser.add_argument("--display-name", help="The name people see (default: from provider and model).")
        parser.add_argument(
            "--price-per-minute",
            default="0",
            help="List price per audio minute in USD, e.g. 0.0043 (at most 5 decimals; default 0, for local "
            "engines). A price above 0 needs --price-source and --price-date.",
        )
        parser.add_argument(
            "--price-source", default="", help="Where the price was read: a vendor page or quote."
        )
        parser.add_argument("--price-date", help="When the price was read there, YYYY-MM-DD.")
        parser.add_argument("--deprecation-date", help="The vendor's announced shutdown date, YYYY-MM-DD.")
        parser.add_argument(
            "--api-key-env",
            default="",
            help="The environment variable that holds the key, e.g. DEEPGRAM_API_KEY (required for "
            f"{', '.join(p.name for p in providers.all_providers() if p.keyed)}; none for the local ones; "
            "optional for the others; never the key itself).",
        )
        parser.add_argument(
            "--options",
            default="{}",
            help="The provider's options as a JSON object, e.g. '{\"beam_size\": 5}'.",
        )
        parser.add_argument(
            "--enabled",
            action=argparse.BooleanOptionalAction,
            default=True,
            help="Offer it to banks (default); --no-enabled adds it switched off.",
        )
        parser.add_argument(
            "--disabled", dest="enabled", action="store_false", help="The same as --no-enabled."
        )

    def handle(self, *args, **o):
        name, model, mode = o["provider"].strip(), o["model"].strip(), o["mode"]
        provider = providers.get(name)
        if provider is None:
            raise CommandError(f"No provider {name!r}: choose one of {', '.join(providers.names())}.")
        problems = _model_problems(provider, model, mode)

        price = _price(o["price_per_minute"], problems)
        price_date = _day(o["price_date"], "--price-date", problems)
        deprecation_date = _day(o["deprecation_date"], "--deprecation-date", problems)
        source = o["price_source"].strip()
        if price_date and price_date > timezone.now().date():
            problems.append(f"--price-date {price_date} is in the future: give the day the price was read.")
        if price is not None and price > 0 and not (source and price_date):
            problems.append(
                "A price needs its source and date: give --price-source (the page or quote it was read from) "
                "and --price-date (when)."
            )

        key_env = o["api_key_env"].strip()
        problems += _key_problems(provider, key_env)

        try:
            options = json.loads(o["options"])
        except json.JSONDecodeError as exc:
            raise CommandError(f"--options is not JSON: {exc.msg} at character {exc.pos}.") from None
        if not isinstance(options, dict):
            problems.append(f"--options must be a JSON object, not {type(options).__name__}.")
        elif mode in provider.modes:
            problems += check_options(name, mode, options)

        display_name = (o["display_name"] or "").strip() or _display_name(provider, model, mode)
        slug = (o["slug"] or "").strip() or slugify(
            re.sub(r"[^A-Za-z0-9]+", "-", f"{name}-{model}-{mode}").removesuffix("-batch")
        )
        if Transcriber.objects.filter(slug=slug).exists():
            problems.append(f"The catalogue already has {slug!r}: give another --slug, or edit that entry.")
        if problems:
            raise CommandError("Nothing was added:\n  " + "\n  ".join(problems))

        transcriber = Transcriber(
            slug=slug,
            provider=name,
            model=model,
            mode=mode,
            display_name=display_name,
            price_per_minute=price,
            price_source=source,
            price_date=price_date,
            deprecation_date=deprecation_date,
            api_key_env=key_env,
            options=options,
            enabled=o["enabled"],
        )
        try:
            transcriber.full_clean()
        except ValidationError as exc:
            lines = [f"{field}: {' '.join(messages)}" for field, messages in exc.message_dict.items()]
            raise CommandError("Nothing was added:\n  " + "\n  ".join(lines)) from None
        transcriber.save()
        priced = f"${transcriber.price_per_minute}/min" + (f" ({source}, {price_date})" if source else "")
        self.stdout.write(
            f"Added {display_name!r} ({slug}, id {transcriber.pk}): {name} {model}, {mode}, {priced}, "
            f"options {json.dumps(options)}, {'enabled' if transcriber.enabled else 'not enabled'}."
        )
        if key_env:
            self.stdout.write(f"Its key is read from the environment variable {key_env} when it transcribes.")


def _model_problems(provider, model: str, mode: str) -> list[str]:
    """What the provider's registration refuses in the model and mode."""
    problems = []
    if not model:
        problems.append("The model must not be empty: give the provider's model string.")
    if mode not in provider.modes:
        problems.append(
            f"{provider.name} has no {mode} engine: use --mode {' or '.join(provider.modes)}, or one of "
            f"{', '.join(providers.names(mode))}."
        )
    if provider.models and model.lower() not in provider.models:
        problems.append(
            f"{provider.label.removesuffix(' (local)')} has only its {' or '.join(provider.models)} "
            f"model, not {model!r}: give {' or '.join(provider.models)}."
        )
    return problems


def _key_problems(provider, key_env: str) -> list[str]:
    """What is wrong with --api-key-env for the provider: not a variable's name, missing where every request
    needs a key, given where none is sent."""
    problems = []
    if key_env and not ENV_NAME.match(key_env):
        problems.append(
            f"--api-key-env must name an environment variable (capitals, digits and _), e.g. "
            f"{provider.key_env or provider.name.upper() + '_API_KEY'}; never give the key itself."
        )
    if provider.keyed and not key_env:
        problems.append(
            f"{provider.name} needs a key: name its environment variable with --api-key-env (usually "
            f"{provider.key_env})."
        )
    if provider.local and key_env:
        problems.append(f"{provider.name} runs here and sends no key: leave out --api-key-env.")
    return problems


def _price(text: str, problems: list) -> Decimal | None:
    try:
        price = Decimal(text.strip())
    except InvalidOperation:
        problems.append(f"--price-per-minute {text!r} is not a number: give USD per minute, e.g. 0.0043.")
        return None
    if not price.is_finite() or price < 0:
        problems.append(f"--price-per-minute must be 0 or more, not {text}.")
        return None
    if price.as_tuple().exponent < -5 or price >= 10**5:
        problems.append(f"--price-per-minute {text} has more than 5 decimals or is too large (below 100000).")
        return None
    return price


def _day(text: str | None, flag: str, problems: list) -> date | None:
    if not text:
        return None
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        problems.append(f"{flag} {text!r} is not a day: write YYYY-MM-DD.")
        return None


def _display_name(provider, model: str, mode: str) -> str:
    label = provider.label.replace(" (local)", "")
    return f"{label} {model}" + (" (streaming)" if mode == Transcriber.STREAMING else "")
