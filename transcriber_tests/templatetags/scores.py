"""{% score_cell c expected %}: one score as the turn table and a flag's results show it (a lib/cells.py ScoreCell,
or None while it is waiting), its words marked against the expected text where it did not match. A tag rather than
an included template: the turn table draws hundreds of cells a page."""

from functools import lru_cache
from html import escape  # the standard library's: Django's wraps it in a check for lazy strings, per call
from typing import NamedTuple

from django import template
from django.utils.safestring import mark_safe
from markupsafe import Markup

from ..lib import alignment, entities, scoring
from ..lib import tradeoff as lib_tradeoff
from ..lib import trust as lib_trust

register = template.Library()

WAITING = mark_safe('<span class="muted">waiting…</span>')
MATCHED = mark_safe('<span class="ok-mark" title="Matched">✓ match</span>')
NOTED = mark_safe(' <span class="note">differs only in capitals or punctuation</span>')
FAILED = {
    "no text": "Its text has no words: a failed line, left out of the division",
    "": "No text came back (an error): a failed line, left out of the division",
}
# How the marks read without colour: the legend the turn table and a flag's results print once.
LEGEND = (
    "Words marked against the expected text: struck through, a word that was said but missed or misheard; "
    "underlined, a word heard in its place or added."
)


# How each entity of what was said (names, times, dates, numbers, ids: lib.entities) reads under a scored cell.
ENTITY_LEGEND = (
    "Entities said (names, times, dates, numbers, ids) under each text: ✓ kept, the text has it; "
    "✗ lost, it does not."
)
ENTITY_WORDS = {True: ("✓", "kept"), False: ("✗", "lost")}


def entity_marks_html(stored: str) -> str:
    """The expected text's entities under a scored cell, each kept or lost (lib.entities.decode of the score's
    Score.entities): escaped HTML, "" when what was said had none. The sign and a word say it, not colour alone."""
    marks = entities.decode(stored)
    if not marks:
        return ""
    items = "".join(
        f'<li class="entity-mark {ENTITY_WORDS[m.kept][1]}"><span aria-hidden="true">{ENTITY_WORDS[m.kept][0]} </span>'
        f'<span class="visually-hidden">{ENTITY_WORDS[m.kept][1]}: </span>{escape(m.text)} '
        f'<span class="kind">{escape(m.category)}</span></li>'
        for m in marks
    )
    kept = sum(m.kept for m in marks)
    return f'\n<ul class="entity-marks" aria-label="Entities said: {kept} of {len(marks)} kept">{items}</ul>'


# A word of a vocabulary candidate's text that is in its vocabulary: marked in text (a raised "voc", and words a
# screen reader hears), not by colour alone.
VOCAB_LEGEND = "A word followed by a raised “voc” is one of the vocabulary that candidate sends."
# Words too common to say a vocabulary brought them.
COMMON = frozenset("a an and at for i in is it my of on the to".split())


@lru_cache(maxsize=256)
def vocabulary_words(terms: tuple) -> frozenset:
    """The normalized words of a vocabulary's terms (common words left out): what the turn table marks."""
    return frozenset(w for term in terms for w in scoring.words(term) if w not in COMMON)


def vocabulary_of(transcriber) -> frozenset:
    return vocabulary_words(tuple(getattr(transcriber, "keyterms", None) or ()))


def _heard(text: str, vocab: frozenset) -> str:
    """A heard word, escaped, with the vocabulary mark when it is one of the vocabulary's words."""
    if vocab and any(w in vocab for w in scoring.words(text)):
        return (
            f'<span class="vocab-word">{escape(text)}<sup class="vocab-mark" aria-hidden="true">voc</sup>'
            '<span class="visually-hidden"> (from the vocabulary)</span></span>'
        )
    return escape(text)


def _plain(text: str, vocab: frozenset) -> str:
    """A whole text, escaped, its vocabulary words marked."""
    if not vocab:
        return escape(text)
    return " ".join(_heard(word, vocab) for word in text.split())


# What a screen reader hears for each mark: against what was said, or against the live transcript.
SAID = ("said ", ", heard ", "missed ", "added ")
LIVE = ("live has ", ", this has ", "only live has ", "only this has ")


def _step(kind: str, expected: str, heard: str, words=SAID, vocab=frozenset()) -> str:
    if kind == alignment.EQUAL:
        return _heard(heard, vocab)
    if kind == alignment.SUBSTITUTION:
        return (
            f'<span class="sub"><del><span class="visually-hidden">{words[0]}</span>{escape(expected)}</del>'
            f'<span class="arrow" aria-hidden="true">→</span>'
            f'<ins><span class="visually-hidden">{words[1]}</span>{_heard(heard, vocab)}</ins></span>'
        )
    if kind == alignment.DELETION:
        return f'<del class="missed"><span class="visually-hidden">{words[2]}</span>{escape(expected)}</del>'
    return f'<ins class="added"><span class="visually-hidden">{words[3]}</span>{_heard(heard, vocab)}</ins>'


def marked_steps(steps, words=SAID, vocab=frozenset()) -> str:
    """(kind, expected, heard) steps of an alignment as the transcriber's text with its words marked: escaped HTML
    (with `vocab`, the words of a vocabulary candidate's vocabulary marked too)."""
    return " ".join(_step(kind, expected, heard, words, vocab) for kind, expected, heard in steps)


def marked_text(expected: str, text: str, words=SAID) -> str:
    """The transcriber's text with its words marked against the expected text (alignment.align): escaped HTML.
    For texts no score keeps (a full-call run's lines, the expected-text checks a snapshot renders)."""
    return marked_steps(((s.kind, s.expected, s.heard) for s in alignment.align(expected, text).steps), words)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def edits(c) -> str:
    """ "1 substitution, 2 deletions": the edits WER counts, those that happened."""
    parts = [
        _plural(n, word)
        for n, word in (
            (c.substitutions, "substitution"),
            (c.deletions, "deletion"),
            (c.insertions, "insertion"),
        )
        if n
    ]
    return ", ".join(parts)


def latency_words(c, transcriber) -> str:
    """How long the transcriber took on the line, under its score (a streaming candidate's time to final): escaped
    HTML, "" where it is not known (the live transcript, a text that never came back)."""
    if c is None or c.latency_s is None:
        return ""
    what = "time to final" if transcriber is not None and transcriber.mode == "streaming" else "took"
    return f' <small class="cell-latency">{what} {lib_tradeoff.seconds_words(c.latency_s)}</small>'


def cell_html(c, expected=None, transcriber=None) -> str:
    """One score cell as escaped HTML, from what its score keeps (no alignment is worked out here); with
    `transcriber`, how long it took on the line after it, and a vocabulary candidate's vocabulary words marked."""
    vocab = vocabulary_of(transcriber)
    if c is None or c.waiting:
        return WAITING
    if c.failed:
        title = c.reason or (FAILED["no text"] if c.failure == "no text" else FAILED[""])
        cell = f'<span class="badge bad" title="{escape(title)}">✗ {escape(c.failure or "error")}</span>'
        if c.text:
            cell += f' <span class="hyp">{escape(c.text)}</span>'
        return cell + latency_words(c, transcriber)
    if c.match or not expected or not c.text or not c.alignment:
        cell = f'<span class="hyp">{_plain(c.text, vocab) if c.text else "(empty)"}</span>\n'
    else:
        cell = f'<span class="hyp aligned">{marked_steps(alignment.decode_steps(c.alignment), vocab=vocab)}</span>\n'
    if not c.match:
        counted = edits(c)
        if counted:
            cell += f'<span class="edits">{counted}</span>\n'
        cell += f'<span class="wer">WER {c.wer:.2f}</span>'
    else:
        cell += MATCHED + NOTED if c.case_or_punctuation_only else MATCHED
    return cell + entity_marks_html(c.entities) + latency_words(c, transcriber)


class _Transcriber(NamedTuple):
    mode: str
    keyterms: tuple = ()


@lru_cache(maxsize=20_000)
def _kept_cell(c, mode: str | None, keyterms: tuple = ()) -> Markup:
    """A cell's HTML, kept by everything it is drawn from (the ScoreCell's values: its text, outcome, alignment
    and latency; and its transcriber's mode, None for the live transcript, and vocabulary): a page of the turn
    table draws hundreds, most of them drawn already on the reads before."""
    return Markup(cell_html(c, True, None if mode is None else _Transcriber(mode, keyterms)))


def row_cells(rows) -> list:
    """The score cells of turn-table rows as Markup for the row template (a Jinja2 call per cell costs more than
    the cell): per row, the live transcript's cell and (candidate's name, cell) per candidate."""
    return [
        (
            _kept_cell(row.production, None),
            [
                (t.display_name, _kept_cell(c, t.mode, tuple(t.keyterms or ())) if c is not None else WAITING)
                for t, c in row.cells
            ],
        )
        for row in rows
    ]


@register.simple_tag
def score_cell(c, expected=None, transcriber=None):
    """One score cell, in a Django template ({% score_cell c expected t %}) or a Jinja2 one (passed as a function:
    {{ score_cell(c, expected, t) }}). Markup is safe to both (Django's mark_safe costs a check for lazy strings
    on each of a page's hundreds of cells)."""
    return Markup(cell_html(c, expected, transcriber))


@register.simple_tag
def marks_legend(candidates=()):
    """The marks' legend; with the bank's candidates, the vocabulary mark's too when one sends a vocabulary."""
    transcribers = [getattr(c, "transcriber", c) for c in candidates or ()]
    if any(getattr(t, "keyterms", None) for t in transcribers):
        return f"{LEGEND} {VOCAB_LEGEND}"
    return LEGEND


@register.simple_tag
def entity_legend():
    return ENTITY_LEGEND


@register.simple_tag
def aligned(expected, text, against="said"):
    """A text with its words marked against `expected`: what was said (`against` "said"), or the live transcript
    ("live"), as a run's lines show them. Escaped HTML; the text as it is where the other has no words."""
    if not text:
        return ""
    if not expected or not alignment.has_words(expected):
        return escape(text)
    words = LIVE if against == "live" else SAID
    return mark_safe(f'<span class="aligned">{marked_text(expected, text, words)}</span>')


@register.filter
def about(n):
    """A count as "about N" says it (lib_trust.about)."""
    return "" if n is None else f"{lib_trust.about(int(n)):,}"


@register.filter
def grouped(n):
    """A whole number with its thousands separated, as a person reads it: "10,000"."""
    return "" if n is None else f"{int(n):,}"


@register.filter
def lead_points(fraction):
    """A difference of two accuracies in percentage points, with its sign: "+3.5"."""
    return "" if fraction is None else f"{fraction * 100:+.1f}"
