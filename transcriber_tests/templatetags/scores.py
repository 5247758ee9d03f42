"""{% score_cell c expected %}: one score as the turn table and a flag's results show it (a queries.cells.ScoreCell,
or None while it is waiting), its words marked against the expected text where it did not match. A tag rather than
an included template: the turn table draws hundreds of cells a page."""

from django import template
from django.utils.html import escape, format_html
from django.utils.safestring import mark_safe

from .. import alignment, uncertainty

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


# What a screen reader hears for each mark: against what was said, or against the live transcript.
SAID = ("said ", ", heard ", "missed ", "added ")
LIVE = ("live has ", ", this has ", "only live has ", "only this has ")


def _step(step, words=SAID) -> str:
    if step.kind == alignment.EQUAL:
        return escape(step.heard)
    if step.kind == alignment.SUBSTITUTION:
        return (
            f'<span class="sub"><del><span class="visually-hidden">{words[0]}</span>{escape(step.expected)}</del>'
            f'<span class="arrow" aria-hidden="true">→</span>'
            f'<ins><span class="visually-hidden">{words[1]}</span>{escape(step.heard)}</ins></span>'
        )
    if step.kind == alignment.DELETION:
        return f'<del class="missed"><span class="visually-hidden">{words[2]}</span>{escape(step.expected)}</del>'
    return f'<ins class="added"><span class="visually-hidden">{words[3]}</span>{escape(step.heard)}</ins>'


def marked_text(expected: str, text: str, words=SAID) -> str:
    """The transcriber's text with its words marked against the expected text (alignment.align): escaped HTML."""
    return " ".join(_step(step, words) for step in alignment.align(expected, text).steps)


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


@register.simple_tag
def score_cell(c, expected=None):
    if c is None or c.waiting:
        return WAITING
    if c.failed:
        title = c.reason or (FAILED["no text"] if c.failure == "no text" else FAILED[""])
        cell = format_html('<span class="badge bad" title="{}">✗ {}</span>', title, c.failure or "error")
        if c.text:
            cell += format_html(' <span class="hyp">{}</span>', c.text)
        return cell
    if c.match or not expected or not c.text:
        cell = format_html('<span class="hyp">{}</span>\n', c.text or "(empty)")
    else:
        cell = mark_safe(f'<span class="hyp aligned">{marked_text(expected, c.text)}</span>\n')
    if not c.match:
        counted = edits(c)
        if counted:
            cell += format_html('<span class="edits">{}</span>\n', counted)
        return cell + format_html('<span class="wer">WER {}</span>', f"{c.wer:.2f}")
    return cell + MATCHED + NOTED if c.case_or_punctuation_only else cell + MATCHED


@register.simple_tag
def marks_legend():
    return LEGEND


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
    """A count as "about N" says it (uncertainty.about)."""
    return "" if n is None else f"{uncertainty.about(int(n)):,}"


@register.filter
def grouped(n):
    """A whole number with its thousands separated, as a person reads it: "10,000"."""
    return "" if n is None else f"{int(n):,}"


@register.filter
def lead_points(fraction):
    """A difference of two accuracies in percentage points, with its sign: "+3.5"."""
    return "" if fraction is None else f"{fraction * 100:+.1f}"
