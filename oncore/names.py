"""What a name may hold: no invisible or direction-changing characters. A bank named "\u202eEnglish" reads as
"hsilgnE" (or reorders the text around it) and "English\u200b" looks like "English" but is another bank, so names
(banks, tenants, assistants, API keys, webhook descriptions) refuse the bidirectional controls and the zero-width
characters. Right-to-left letters are welcome: the pages isolate user text (`<bdi>`, `dir="auto"`) so a name
written in Arabic or Hebrew never reorders what surrounds it.

`hidden_characters` and `name_problem` are pure (no Django); `check_name` is the validator the API schemas and
the call import use (a ValueError, as pydantic expects), `validate_name` the one the dashboard's forms use (the
same check and words, as Django's ValidationError)."""

import unicodedata

from django.core.exceptions import ValidationError

# Bidirectional formatting: embeddings and overrides (U+202A–U+202E), isolates (U+2066–U+2069), the marks
# (LRM, RLM, the Arabic letter mark).
BIDI_CONTROLS = frozenset(
    [*map(chr, range(0x202A, 0x202F)), *map(chr, range(0x2066, 0x206A)), "\u200e", "\u200f", "\u061c"]
)
# Zero-width: space, non-joiner, joiner (U+200B–U+200D), the word joiner and the byte order mark.
ZERO_WIDTH = frozenset([*map(chr, range(0x200B, 0x200E)), "\u2060", "\ufeff"])
HIDDEN = BIDI_CONTROLS | ZERO_WIDTH

MESSAGE = (
    "must not contain invisible or direction-changing characters (found {found}): they make a name read "
    "differently from what it is; type it again without them"
)


def hidden_characters(text: str) -> list[str]:
    """The hidden characters in `text`, each once, in order, named: ["U+202E RIGHT-TO-LEFT OVERRIDE"]."""
    found = dict.fromkeys(c for c in text if c in HIDDEN)
    return [f"U+{ord(c):04X} {unicodedata.name(c, 'FORMAT CHARACTER')}" for c in found]


def name_problem(text: str) -> str | None:
    """Why `text` cannot be a name (MESSAGE, naming what was found), or None when it can."""
    found = hidden_characters(text) if isinstance(text, str) else []
    return MESSAGE.format(found=", ".join(found)) if found else None


def check_name(value):
    """A pydantic validator: the value unchanged, or ValueError with name_problem's words."""
    problem = name_problem(value) if value is not None else None
    if problem:
        raise ValueError(problem)
    return value


def validate_name(value) -> None:
    """A Django form field validator: ValidationError with name_problem's words."""
    problem = name_problem(value) if value is not None else None
    if problem:
        raise ValidationError(problem[:1].upper() + problem[1:] + ".", code="hidden_characters")
