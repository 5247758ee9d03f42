"""A full-call run's lines as the judge's label requests: several lines of one call per request, each shown as
neutral "transcript 1" and "transcript 2" in an order drawn per line from the run's seed, with the call's lines
around them. The run's judge step sends them (work/runs.py); its estimate counts them first (actions/runs.py)."""

import random
from dataclasses import dataclass
from string import ascii_uppercase

from oncore.calls.models import Line

from ..models import RunLine
from . import build, prompts

CONTEXT_EACH_SIDE = (
    3  # neighbouring lines shown to the judge on each side of a line (or of a request's lines)
)


REQUEST_SPAN = 24  # the lines of one label request lie within this many positions of one call


def shown_first(seed: int, line_id: int) -> bool:
    """Whether the judge sees the live transcript as transcript 1 on this line: drawn from the run's seed."""
    return random.Random(f"{seed}:{line_id}").random() < 0.5


def chunks(lines) -> list[list]:
    """Lines (calls' Lines, or RunLines with their line loaded) grouped into label requests: lines of one call in
    the call's order, at most prompts.LINES_PER_REQUEST per request, within REQUEST_SPAN positions of the call (the
    call's own positions for both, so a run sends the requests its estimate counted)."""
    groups: list[list] = []
    for item in sorted(lines, key=lambda x: (_line(x).call_id, _line(x).position)):
        last = groups[-1] if groups else None
        if (
            last
            and _line(last[0]).call_id == _line(item).call_id
            and len(last) < prompts.LINES_PER_REQUEST
            and _line(item).position - _line(last[0]).position <= REQUEST_SPAN
        ):
            last.append(item)
        else:
            groups.append([item])
    return groups


def _line(item) -> Line:
    """The call's line of a Line or a RunLine."""
    return item.line if isinstance(item, RunLine) else item


class Context:
    """The lines and the assistant's instructions of some calls, loaded once, to build the judge's requests."""

    def __init__(self, calls):
        self.lines: dict[int, list] = {}
        self.instructions: dict[int, str] = {}
        for call in calls:
            self.instructions[call.pk] = call.assistant.instructions if call.assistant else ""
        for line in Line.objects.filter(call__in=list(self.instructions)).order_by("call_id", "position"):
            self.lines.setdefault(line.call_id, []).append(line)
        self.text = {line.pk: line.text for lines in self.lines.values() for line in lines}

    def around(self, line_id: int, call_id: int, each_side: int) -> list[tuple[str, str]]:
        lines = self.lines.get(call_id, [])
        index = next((i for i, ln in enumerate(lines) if ln.pk == line_id), None)
        if index is None:
            return []
        out = [(ln.speaker, ln.text) for ln in lines[max(0, index - each_side) : index]]
        out.append(("caller", "[the line being judged]"))
        out += [(ln.speaker, ln.text) for ln in lines[index + 1 : index + 1 + each_side]]
        return out

    def request(self, call_id: int, keyed: dict) -> tuple[str, list[tuple[str, str]]]:
        """(instructions, context lines) of a request labelling the lines in `keyed` (line id -> key): the call's
        lines from CONTEXT_EACH_SIDE before the first to CONTEXT_EACH_SIDE after the last, each labelled line
        written as its placeholder."""
        lines = self.lines.get(call_id, [])
        where = [i for i, ln in enumerate(lines) if ln.pk in keyed]
        if not where:
            return self.instructions.get(call_id, ""), []
        window = lines[max(0, where[0] - CONTEXT_EACH_SIDE) : where[-1] + 1 + CONTEXT_EACH_SIDE]
        context = [
            (ln.speaker, build.placeholder(keyed[ln.pk]) if ln.pk in keyed else ln.text) for ln in window
        ]
        return self.instructions.get(call_id, ""), context


@dataclass(frozen=True)
class LabelRequest:
    instructions: str
    context_lines: list
    items: list  # build.LabelItem, keyed A, B, ...
    line_ids: dict  # key -> line id

    @property
    def parts(self) -> tuple[str, list, list]:
        return self.instructions, self.context_lines, self.items


def label_requests(context: Context, lines, texts) -> list[LabelRequest]:
    """Every request that labels `lines` (RunLines, or calls' Lines for an estimate); `texts(line)` gives
    (live text, candidate text, live shown first) of each."""
    requests = []
    for group in chunks(lines):
        keys = {_line(item).pk: ascii_uppercase[n] for n, item in enumerate(group)}
        instructions, context_lines = context.request(_line(group[0]).call_id, keys)
        items = [build.LabelItem(keys[_line(item).pk], *texts(item)) for item in group]
        requests.append(LabelRequest(instructions, context_lines, items, {k: i for i, k in keys.items()}))
    return requests
