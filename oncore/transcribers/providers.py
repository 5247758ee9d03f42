"""The providers: every speech-to-text provider the catalogue can name, each registered by its own engine module
(engines/<name>.py ends with `register(Provider(...))`: its name, label, modes with their engine and the options
that engine reads, the key's environment variable). Everything else that names providers reads them here:

    models.Transcriber.clean() and admin.py    a catalogue entry's provider and mode, the admin's choices
    engines.get_engine                         the engine of an entry's provider and mode
    options.check_options, options.describe    the options an entry may hold (manage.py add_transcriber, its --help)
    engines.base.key_problem                   whether an entry needs a key
    Transcriber.PROVIDERS                      (name, label) pairs: the API's provider enum and its description

The app's ready() (apps.py) imports every module of engines/ once, which fills the registry; a module elsewhere
(a test's fake provider) registers the same way when it is imported. Adding a provider: docs/transcribers.md."""

import re
from dataclasses import dataclass

from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string

BATCH, STREAMING = "batch", "streaming"
MODES = (BATCH, STREAMING)
NAME = re.compile(r"^[a-z][a-z0-9_]{0,31}$")  # what Transcriber.provider (32 characters) stores
ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]{0,99}$")


@dataclass(frozen=True)
class Mode:
    """One way a provider replays a line: its engine class, as a dotted path imported on first use (so the
    registry never loads a model or a vendor's client), and the options that engine reads (options.Option)."""

    engine: str
    options: tuple = ()


@dataclass(frozen=True)
class Provider:
    name: str  # what a catalogue entry stores in `provider`, e.g. "deepgram"
    label: str  # what people read, e.g. "Deepgram"
    modes: dict  # "batch" and/or "streaming" -> Mode
    # The environment variable its key is usually in (e.g. DEEPGRAM_API_KEY): a provider that names one needs a key
    # on every request. "" for one that sends a key only when the entry names a variable (generic) or never (local).
    key_env: str = ""
    local: bool = False  # runs on this server: no key, no vendor bill
    models: tuple = ()  # the only model strings it has (empty: any the vendor names)

    @property
    def keyed(self) -> bool:
        return bool(self.key_env)

    def engine(self, mode: str):
        """The engine class of a mode the provider has."""
        return import_string(self.modes[mode].engine)


_registry: dict[str, Provider] = {}


def register(provider: Provider) -> Provider:
    """Add a provider; a bad definition, or another provider under a name already taken, fails at start-up with
    what to fix. Registering the same provider again changes nothing."""
    where = f"Provider {provider.name!r}"
    problems = []
    if not NAME.match(provider.name):
        problems.append(
            "its name must be lowercase letters, digits and _ (at most 32), starting with a letter"
        )
    if not provider.label.strip():
        problems.append("it needs a label, the name people read")
    if not provider.modes or set(provider.modes) - set(MODES):
        problems.append(f"its modes must be one or both of {', '.join(MODES)}, not {sorted(provider.modes)}")
    if not all(isinstance(m, Mode) and "." in m.engine for m in provider.modes.values()):
        problems.append("each mode must be a Mode naming its engine class by dotted path")
    if provider.key_env and not ENV_NAME.match(provider.key_env):
        problems.append(
            f"key_env must name an environment variable (capitals, digits and _), not {provider.key_env!r}"
        )
    if provider.local and provider.key_env:
        problems.append("a local provider sends no key: leave key_env empty")
    if problems:
        raise ImproperlyConfigured(f"{where} cannot be registered: {'; '.join(problems)}.")
    existing = _registry.get(provider.name)
    if existing is not None and existing != provider:
        raise ImproperlyConfigured(
            f"{where} is registered twice with different definitions: give the new provider another name."
        )
    _registry[provider.name] = provider
    return provider


def unregister(name: str) -> None:
    """Remove a provider (tests that registered one of their own)."""
    _registry.pop(name, None)


def get(name: str) -> Provider | None:
    return _registry.get(name)


def all_providers() -> list[Provider]:
    """Every registered provider, by name."""
    if not _registry:
        raise ImproperlyConfigured(
            "No transcription provider is registered: the providers are read before the oncore.transcribers "
            "app is ready (its ready() imports the engine modules, which register them)."
        )
    return [_registry[name] for name in sorted(_registry)]


def names(mode: str | None = None) -> list[str]:
    """The providers' names, by name; with a mode, those that have it."""
    return [p.name for p in all_providers() if mode is None or mode in p.modes]


def choices() -> list[tuple[str, str]]:
    """(name, label) of every provider, by name."""
    return [(p.name, p.label) for p in all_providers()]


def label(name: str) -> str:
    """What people read for a provider's name (the name itself when no provider has it)."""
    provider = _registry.get(name)
    return provider.label if provider else name
