"""The arithmetic of a full-call run's estimate, pure: the estimate itself (RunEstimate: what a run would transcribe,
label and cost, as the estimate page, the API and the run's stored estimate show it, in one shape: estimate_dict)
and the caller lines a run leaves out, and why (LeftOutLine, left_out_summary). The actions fill the estimate
(actions/runs.py), the queries read a stored one back (queries/runs.py), the shapes answer with it (shapes/runs.py)."""

from collections import Counter
from dataclasses import asdict, dataclass, fields
from decimal import Decimal

from oncore.formats import money

# Why a full-call run leaves a caller line out (LeftOutLine.reason).
NO_TIMING = "no_timing"
TOO_LONG = "too_long"
PAST_RECORDING_END = "past_recording_end"


@dataclass(frozen=True)
class LeftOutLine:
    """A caller line of a run's calls that the run does not replay, and why."""

    call_id: int
    line_id: int
    line_number: int  # as the screens count it, from 1 ("line 3" on the call page)
    reason: str  # NO_TIMING, TOO_LONG or PAST_RECORDING_END
    why: str  # the reason in words, with the figures: "130 s long: lines longer than 120 s are not replayed"
    start_s: float | None
    end_s: float | None


REASON_WORDS = {
    NO_TIMING: "with no audio timing",
    TOO_LONG: "longer than the line limit",
    PAST_RECORDING_END: "past the end of the recording",
}


def left_out_summary(left_out) -> str:
    """Left-out lines counted by reason: "3 caller lines left out: 2 with no audio timing, 1 longer than the line
    limit"; "" for none."""
    if not left_out:
        return ""
    counts = Counter(line.reason for line in left_out)
    parts = [f"{counts[reason]} {words}" for reason, words in REASON_WORDS.items() if counts[reason]]
    n = len(left_out)
    return f"{n} caller line{'s' if n != 1 else ''} left out: {', '.join(parts)}"


@dataclass(frozen=True)
class RunEstimate:
    candidate_id: int
    calls: int
    lines: int  # lines the candidate would transcribe, and be paid for
    already_transcribed: int  # lines it already has: replayed for free, not counted in `lines`
    audio_seconds: float
    price_per_minute: Decimal
    audio_cost: Decimal
    calibration_lines: int
    calibration_audio_seconds: float
    calibration_cost: Decimal
    judge_configured: bool
    flagged_lines: int
    # Calls whose live transcriber is the candidate: on them the run replays the transcriber they ran on, so it
    # measures only the recording path (calibration), not what a switch would change.
    calls_already_on_candidate: int
    differ_rate: float | None  # share of the bank's control lines where the candidate differed; None: unknown
    rule_share: float | None  # share of those differing lines the rule labels (free); None: unknown
    expected_rule_lines: int  # lines expected to be labelled by rule: no judge tokens
    expected_judged_lines: int
    judge_requests: int  # label requests expected (several lines of one call each)
    judge_input_tokens: int
    judge_output_tokens: int
    judge_cost: Decimal
    max_judge_input_tokens: int
    max_judge_output_tokens: int
    max_judge_cost: Decimal
    left_out: tuple[LeftOutLine, ...] = ()  # caller lines of the calls the run does not replay, and why

    @property
    def run_lines(self) -> int:
        """Every line the run replays: those to transcribe and those already transcribed."""
        return self.lines + self.already_transcribed

    @property
    def left_out_lines(self) -> int:
        return len(self.left_out)

    @property
    def audio_minutes(self) -> float:
        return self.audio_seconds / 60

    @property
    def calibration_minutes(self) -> float:
        return self.calibration_audio_seconds / 60

    @property
    def total_cost(self) -> Decimal:
        return self.audio_cost + self.calibration_cost + self.judge_cost

    @property
    def max_total_cost(self) -> Decimal:
        return self.audio_cost + self.calibration_cost + self.max_judge_cost

    def as_dict(self) -> dict:
        """The estimate as the API shows it: the estimate endpoint, estimate_not_confirmed's detail and the
        run's stored estimate (see estimate_dict)."""
        return estimate_dict(
            {
                **asdict(self),
                "left_out": [asdict(line) for line in self.left_out],
                "left_out_lines": self.left_out_lines,
                "audio_minutes": self.audio_minutes,
                "total_cost": self.total_cost,
                "max_total_cost": self.max_total_cost,
            }
        )


_ZERO = {int: 0, float: 0.0, Decimal: Decimal(0), bool: False}


MONEY_FIELDS = {f.name for f in fields(RunEstimate) if f.type is Decimal} | {"total_cost", "max_total_cost"}


ROUNDED_FIELDS = {
    "audio_seconds": 3,
    "audio_minutes": 3,
    "calibration_audio_seconds": 3,
    "differ_rate": 4,
    "rule_share": 4,
}


def estimate_dict(values: dict) -> dict:
    """A run estimate in one shape and rounding wherever it is shown: money as six-place decimal strings,
    seconds and minutes to 3 places, rates to 4. Also reads an estimate stored by an older version (a field it
    lacks counts as zero, or unknown): one stored before runs said what they left out has no `left_out` (null:
    not recorded), and its `lines` counted the lines already transcribed too, which are taken out of it here."""
    data = {f.name: _ZERO.get(f.type) for f in fields(RunEstimate)}
    data.update(left_out_lines=None, audio_minutes=0.0, total_cost=Decimal(0), max_total_cost=Decimal(0))
    data.update((key, value) for key, value in values.items() if key in data)
    if "left_out" not in values:  # stored before December 2026: `lines` were every line the run replayed
        data["lines"] = max(0, (data["lines"] or 0) - (data["already_transcribed"] or 0))
    for key in MONEY_FIELDS:
        data[key] = money(data[key] or 0)
    for key, places in ROUNDED_FIELDS.items():
        if data[key] is not None:
            data[key] = round(float(data[key]), places)
    return data
