"""{% score_cell s %}: one score as the turn table and the flag results show it (a Score or a queries.Cell, or None
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
def score_cell(s):
    if s is None:
        return WAITING
    if s.failed:
        title = FAILED["no text"] if s.failure == "no text" else FAILED[""]
        cell = format_html('<span class="badge bad" title="{}">✗ {}</span>', title, s.failure or "error")
        if s.hypothesis:
            cell += format_html(' <span class="hyp">{}</span>', s.hypothesis)
        return cell
    cell = format_html('<span class="hyp">{}</span>\n', s.hypothesis or "(empty)")
    if not s.match:
        return cell + format_html(
            '<span class="wer">WER {}</span>', f"{s.wer:.2f}" if s.wer is not None else ""
        )
    return cell + MATCHED + NOTED if s.case_or_punctuation_only else cell + MATCHED
