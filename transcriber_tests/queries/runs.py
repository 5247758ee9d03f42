"""The read side of full-call runs that the pages and the API share: the active run, the bank's leader to run,
a run's summary, its lines by filter, the review sample, the runs of a bank with their counts, and the calls a new
run offers."""

from dataclasses import dataclass, fields
from decimal import Decimal

from django.db.models import Count, Exists, F, OuterRef, Q

from oncore import llm
from oncore.calls.models import Call
from oncore.config import config

from ..lib import trust as lib_trust
from ..lib.agreement import Agreement, agreement
from ..lib.runs import LeftOutLine
from ..models import Bank, Flag, Run, RunLine, Transcription
from .results import bank_results

CALL_CHOICES = 30


def active_run(organization_id: int) -> Run | None:
    return (
        Run.objects.filter(organization_id=organization_id, status__in=Run.ACTIVE)
        .select_related("candidate")
        .first()
    )


def default_candidate(bank: Bank):
    """The bank's leader, or None while it has no scored lines."""
    leader = bank_results(bank).leader
    return leader.transcriber if leader else None


@dataclass(frozen=True)
class Labelling:
    """How far the labels go that a figure needs (fixes, breaks, patterns, the verdict): unlabelled is not zero,
    so a page shows "not labelled", or the figure with "n of m differing lines labelled", with the reason."""

    compared: bool  # the run compared its lines: before that there is no figure at all
    differing: int  # compared lines whose texts differ (the candidate produced text)
    unlabelled: int  # of those, lines with no label
    why: str  # why they carry none, from what the run records ("" when every differing line is labelled)

    @property
    def labelled(self) -> int:
        return self.differing - self.unlabelled

    @property
    def none(self) -> bool:
        """Lines differ and not one of them is labelled: a figure that needs labels has no value."""
        return self.unlabelled > 0 and self.labelled == 0

    @property
    def partial(self) -> bool:
        return self.unlabelled > 0 and self.labelled > 0


def unlabelled_why(run: Run, unlabelled: int, gave_up: int) -> str:
    """Why `unlabelled` differing lines of the run carry no label, as the run records it; "" when none."""
    if not unlabelled:
        return ""
    others = unlabelled - min(gave_up, unlabelled)
    reasons = []
    if others:
        if run.judge_status == Run.JUDGE_NOT_CONFIGURED:
            reasons.append(run.judge_error or llm.NOT_CONFIGURED)
        elif run.judge_status == Run.JUDGE_FAILED:
            reasons.append("the judge failed")
        elif run.status == Run.CANCELLED:
            reasons.append("the run was cancelled before the judge labelled them")
        elif run.status == Run.FAILED:
            reasons.append("the run failed before the judge labelled them")
        elif run.is_active:
            reasons.append("the judge has not labelled them yet")
        else:
            reasons.append("no label was given")
    if gave_up:
        invalid = "the judge's answer was invalid twice"
        reasons.append(f"{invalid} on {gave_up}" if others else invalid)
    return "; ".join(reasons)


def labelling(run: Run, compared: int, differing: int, unlabelled: int, gave_up: int) -> Labelling:
    return Labelling(compared > 0, differing, unlabelled, unlabelled_why(run, unlabelled, gave_up))


@dataclass(frozen=True)
class RunSummary:
    lines: int
    compared: int
    identical: int
    differing: int
    candidate_failed: int
    fixes: int  # candidate_right
    breaks: int  # live_right
    same_meaning: int
    both_wrong: int
    unlabelled: int  # differing lines with no label (judge not configured, failed, or not there yet)
    rule_labelled: int  # differing lines labelled same_meaning by rule: never sent to the judge
    judge_gave_up: int  # lines the judge answered invalidly twice: left unlabelled with the reason
    judge_calls_saved: int  # label requests the rule labels spared the judge
    judge_requests: int  # label requests the judge was sent
    flagged: int
    identical_labelled: int  # identical lines that are flagged: also labelled against what was said
    calibration_sampled: int
    calibration_compared: int
    calibration_matched: int
    calibration_failed: int
    review_sample: int
    reviewed: int
    review_agrees: int
    transcriptions: int
    transcriptions_finished: int
    warn_below: float
    labels: Labelling

    @property
    def audio_path_agreement(self) -> float | None:
        return self.calibration_matched / self.calibration_compared if self.calibration_compared else None

    @property
    def calibration_low(self) -> bool:
        value = self.audio_path_agreement
        return value is not None and value < self.warn_below

    @property
    def judge_human_agreement(self) -> float | None:
        return self.review_agrees / self.reviewed if self.reviewed else None

    @property
    def labelled(self) -> int:
        return self.fixes + self.breaks + self.same_meaning + self.both_wrong

    @property
    def in_boxes(self) -> int:
        """What the run page's boxes add up to (fixes, breaks, same meaning, both wrong, identical, differing not
        labelled, no text): each compared line once, but an identical flagged line twice (identical, and same
        meaning or both wrong against what was said)."""
        return self.labelled + self.identical + self.unlabelled + self.candidate_failed

    @property
    def with_text(self) -> int:
        """Compared lines on which the candidate produced text: the y of "lines that differ: x of y"."""
        return self.identical + self.differing

    @property
    def tally(self) -> lib_trust.RunTally:
        """Fixes and breaks out of the lines whose outcome is known (identical, or differing and labelled), with
        their 95% intervals, and the net with its sign test (lib_trust.run_tally)."""
        return lib_trust.run_tally(self.fixes, self.breaks, self.identical + self.labels.labelled)


# What each count of a run's lines counts, written once: the run page's figures (run_summary), the runs list's
# (counts_for_runs) and the lines filter (LINE_FILTERS) all read these.
COUNTED = {
    "lines": Q(),
    "compared": Q(compared=True),
    "identical": Q(compared=True, candidate_failed=False, differs=False),
    "differing": Q(compared=True, candidate_failed=False, differs=True),
    "candidate_failed": Q(compared=True, candidate_failed=True),
    "fixes": Q(label=RunLine.CANDIDATE_RIGHT),
    "breaks": Q(label=RunLine.LIVE_RIGHT),
    "same_meaning": Q(label=RunLine.SAME_MEANING),
    "both_wrong": Q(label=RunLine.BOTH_WRONG),
    "unlabelled": Q(compared=True, candidate_failed=False, differs=True, label=""),
    "rule_labelled": Q(label_source=RunLine.BY_RULE),
    "judge_gave_up": Q(label="") & ~Q(label_error=""),
    "flagged": Q(flag__isnull=False),
    "identical_labelled": Q(compared=True, candidate_failed=False, differs=False) & ~Q(label=""),
    "calibration_sampled": Q(calibration=True),
    "calibration_compared": Q(calibration=True, replay_matches__isnull=False),
    "calibration_matched": Q(calibration=True, replay_matches=True),
    "calibration_failed": Q(calibration=True, replay_failed=True),
    "review_sample": Q(in_review=True),
    "reviewed": Q(in_review=True, review_agrees__isnull=False),
    "review_agrees": Q(in_review=True, review_agrees=True),
}
LIST_COUNTS = ("lines", "compared", "differing", "unlabelled", "judge_gave_up", "fixes", "breaks")
LIST_COUNTS += ("calibration_compared", "calibration_matched")


def _counts(names) -> dict:
    """Count expressions of these COUNTED names, as "n_<name>" (a count may not share a field's name)."""
    return {f"n_{name}": Count("id", filter=COUNTED[name]) for name in names}


def _named(row: dict) -> dict:
    """A row of _counts with its counts under their COUNTED names."""
    return {key.removeprefix("n_"): value for key, value in row.items()}


def run_summary(run: Run) -> RunSummary:
    """Every count the run page shows, in two queries."""
    c = _named(run.lines.aggregate(**_counts(COUNTED)))
    t = Transcription.objects.filter(
        Q(line__run_lines__run=run)
        & (
            Q(transcriber_id=run.candidate_id)
            | Q(line__run_lines__calibration=True, transcriber_id=F("line__run_lines__replay_transcriber_id"))
        )
    ).aggregate(
        n=Count("id", distinct=True),
        done=Count("id", distinct=True, filter=Q(status__in=Transcription.FINISHED)),
    )
    return RunSummary(
        **c,
        judge_calls_saved=run.judge_calls_saved,
        judge_requests=run.judge_label_requests,
        transcriptions=t["n"],
        transcriptions_finished=t["done"],
        warn_below=config().run_calibration_warn,
        labels=labelling(run, c["compared"], c["differing"], c["unlabelled"], c["judge_gave_up"]),
    )


def left_out_of(run: Run) -> list[LeftOutLine] | None:
    """The caller lines of its calls the run left out, and why, as its estimate recorded them when it started;
    None for a run started before runs recorded them."""
    stored = (run.estimate or {}).get("left_out")
    if stored is None:
        return None
    return [LeftOutLine(**{f.name: item.get(f.name) for f in fields(LeftOutLine)}) for item in stored]


def estimated_total(run: Run) -> Decimal | None:
    """What the run's estimate said it would cost in all, before it started; None when it recorded none."""
    total = run.estimate.get("total_cost") if run.estimate else None
    return None if total in (None, "") else Decimal(str(total))


LINE_FILTERS = {
    "": ("Every line", COUNTED["lines"]),
    "differing": ("Differing", Q(differs=True)),
    "identical": ("Identical", COUNTED["identical"]),
    RunLine.CANDIDATE_RIGHT: ("Candidate right (fixes)", COUNTED["fixes"]),
    RunLine.LIVE_RIGHT: ("Live right (breaks)", COUNTED["breaks"]),
    RunLine.SAME_MEANING: ("Same meaning", COUNTED["same_meaning"]),
    RunLine.BOTH_WRONG: ("Both wrong", COUNTED["both_wrong"]),
    "unlabelled": ("Differing, not labelled", COUNTED["unlabelled"]),
    "rule": ("Labelled by rule", COUNTED["rule_labelled"]),
    "gave_up": ("Judge could not label", COUNTED["judge_gave_up"]),
    "no_text": ("Candidate produced no text", COUNTED["candidate_failed"]),
    "flagged": ("Flagged lines", COUNTED["flagged"]),
    "review": ("Review sample", COUNTED["review_sample"]),
    "calibration": ("Calibration sample", COUNTED["calibration_sampled"]),
}


# A line of the review sample not reviewed yet: its label, source, reasoning and pattern are shown nowhere.
AWAITING_REVIEW = Q(in_review=True, human_label="")
# The filters that select by label (or by how it was given): a line awaiting review is left out of them, since
# being listed under one would tell its label.
BY_LABEL = {
    RunLine.CANDIDATE_RIGHT,
    RunLine.LIVE_RIGHT,
    RunLine.SAME_MEANING,
    RunLine.BOTH_WRONG,
    "unlabelled",
    "rule",
    "gave_up",
}


def run_line_rows(run: Run, which: str = "", pattern: int | None = None):
    """The run's lines in order, those of one filter of LINE_FILTERS (an unknown one: every line) and, if given,
    of one pattern; a filter by label or pattern leaves out the lines awaiting review (the review is blind)."""
    _, q = LINE_FILTERS.get(which, LINE_FILTERS[""])
    if pattern is not None:
        q &= Q(pattern_id=pattern)
    rows = run.lines.filter(q)
    if which in BY_LABEL or pattern is not None:
        rows = rows.exclude(AWAITING_REVIEW)
    return rows.select_related("line__call", "pattern").order_by("position")


REVIEW_FILTERS = {
    "": ("Whole sample", Q()),
    "todo": ("Not reviewed yet", Q(review_agrees__isnull=True)),
    "agreed": ("Agreed", Q(review_agrees=True)),
    "disagreed": ("Disagreed", Q(review_agrees=False)),
}


@dataclass(frozen=True)
class VersionAgreement:
    prompt_version: str  # of the labels reviewed (a rule label's is the rule's version)
    agreement: Agreement


def review_agreement(run: Run) -> list[VersionAgreement]:
    """The review's agreement between the person's labels and the labels given, with Cohen's kappa, per prompt
    version (rule labels under their own version), in one query."""
    pairs: dict[str, list] = {}
    reviewed = run.lines.filter(in_review=True).exclude(human_label="")
    for version, human, label in reviewed.values_list("label_prompt_version", "human_label", "label"):
        pairs.setdefault(version, []).append((human, label))
    return [VersionAgreement(version, agreement(found)) for version, found in sorted(pairs.items())]


def review_lines(run: Run, which: str = ""):
    """The lines of the review sample in order, those of one filter of REVIEW_FILTERS (an unknown one: all)."""
    _, q = REVIEW_FILTERS.get(which, REVIEW_FILTERS[""])
    return run.lines.filter(q, in_review=True).select_related("line__call", "pattern").order_by("position")


def patterns_with_examples(run: Run, per_pattern: int = 3) -> list[tuple]:
    """The run's patterns, each with its first few lines (none awaiting review)."""
    patterns = list(run.patterns.all())
    examples = {}
    lines = RunLine.objects.filter(pattern__in=patterns).exclude(AWAITING_REVIEW)
    for rl in lines.select_related("line").order_by("position"):
        bucket = examples.setdefault(rl.pattern_id, [])
        if len(bucket) < per_pattern:
            bucket.append(rl)
    return [(p, examples.get(p.pk, [])) for p in patterns]


def runs_for_bank(bank: Bank):
    """The bank's runs, newest first, each with its number of calls."""
    return runs_list(bank.organization_id, bank=bank.pk)


def runs_list(organization_id: int, *, bank=None, status=None):
    """The organization's runs of its banks, newest first, each with its number of calls; filtered by a bank id or
    a status when given. Deleting a bank takes its runs out of every list (a run still reads by its id)."""
    qs = Run.objects.filter(organization_id=organization_id, bank__isnull=False)
    if bank is not None:
        qs = qs.filter(bank_id=bank)
    if status:
        qs = qs.filter(status=status)
    return (
        qs.select_related("candidate", "created_by")
        .annotate(n_calls=Count("run_calls", distinct=True))
        .order_by("-created_at", "-id")
    )


def counts_for_runs(run_list) -> dict[int, dict]:
    """Fixes, breaks, lines, how far the labels go (Labelling) and audio path agreement (a fraction, None before
    any replay compared) of a page of runs, in one query."""
    runs = {run.pk: run for run in run_list}
    rows = RunLine.objects.filter(run__in=list(runs)).values("run_id").annotate(**_counts(LIST_COUNTS))
    out = {}
    for row in map(_named, rows):
        n = row["calibration_compared"]
        row["audio_path_agreement"] = agreement = row["calibration_matched"] / n if n else None
        row["calibration_low"] = agreement is not None and agreement < config().run_calibration_warn
        row["labels"] = labelling(
            runs[row["run_id"]], row["compared"], row["differing"], row["unlabelled"], row["judge_gave_up"]
        )
        out[row["run_id"]] = row
    return out


def banks_for_call(organization, call) -> list[Bank]:
    """The banks a run from this call may go to: those its flags are in, else every bank of the organization."""
    flagged = Bank.objects.filter(organization=organization, flags__line__call=call).distinct()
    return list(flagged) or list(Bank.objects.filter(organization=organization))


def run_calls(run: Run) -> list[Call]:
    """The run's calls, in the order it was given them."""
    return list(run.calls.order_by("run_calls__position"))


def call_choices(organization, bank: Bank, selected) -> list[Call]:
    """Calls a new run offers: recorded ones with a flag in this bank first, then the latest, each with its number
    of lines (stored on the call); plus any selected call not among them."""
    flagged = Flag.objects.filter(line__call=OuterRef("pk"), bank=bank)
    base = Call.objects.filter(tenant__organization=organization).select_related("tenant", "assistant")
    offered = list(
        base.filter(recorded=True)
        .annotate(flagged=Exists(flagged))
        .order_by("-flagged", "-started_at", "-id")[:CALL_CHOICES]
    )
    missing = [pk for pk in selected if pk not in {c.pk for c in offered}]
    if missing:
        offered += list(base.filter(pk__in=missing).annotate(flagged=Exists(flagged)))
    return offered
