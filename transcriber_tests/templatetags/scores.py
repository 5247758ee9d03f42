"""{% score_cell c %}: one score as the turn table and a flag's results show it (a queries.cells.ScoreCell, or None
while it is waiting). A tag rather than an included template: the turn table draws hundreds of cells a page."""

from django import template
from django.utils.html import format_html
from django.utils.safestring import mark_safe

register = template.Library()

WAITING = mark_safe('<span class="muted">waiting…</span>')
MATCHED = mark_safe('<span class="ok-mark" title="Matched">✓ match</span>')
NOTED = mark_safe(' <span class="note">differs only in capitals or punctuation</span>')
FAILED = {
    "no text": "Its text has no words: a failed line, left out of the division",
    "": "No text came back (an error): a failed line, left out of the division",
}


@register.simple_tag
def score_cell(c):
    if c is None or c.waiting:
        return WAITING
    if c.failed:
        title = c.reason or (FAILED["no text"] if c.failure == "no text" else FAILED[""])
        cell = format_html('<span class="badge bad" title="{}">✗ {}</span>', title, c.failure or "error")
        if c.text:
            cell += format_html(' <span class="hyp">{}</span>', c.text)
        return cell
    cell = format_html('<span class="hyp">{}</span>\n', c.text or "(empty)")
    if not c.match:
        return cell + format_html('<span class="wer">WER {}</span>', f"{c.wer:.2f}")
    return cell + MATCHED + NOTED if c.case_or_punctuation_only else cell + MATCHED
