"""The admin shows the product's rows. Those whose writes go through the actions, the queue or the run pipeline
(flags and their controls, scores, candidates, transcriptions, the judge's picks, runs) are read-only here: a write
in the admin would skip the scores, the queue and the results cache those keep. Banks stay editable."""

from django.contrib import admin

from .models import (
    Bank,
    Candidate,
    ControlLine,
    Flag,
    JudgePick,
    Run,
    RunCall,
    RunLine,
    RunPattern,
    Score,
    Transcription,
)


class ReadOnly:
    """Shown, never added, changed or deleted in the admin."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class CandidateInline(ReadOnly, admin.TabularInline):
    model = Candidate
    extra = 0


@admin.register(Bank)
class BankAdmin(admin.ModelAdmin):
    list_display = ["name", "organization", "language_label", "threshold", "controls_per_flag", "created_at"]
    list_filter = ["organization"]
    inlines = [CandidateInline]


@admin.register(Candidate)
class CandidateAdmin(ReadOnly, admin.ModelAdmin):
    list_display = ["bank", "transcriber", "position"]
    list_filter = ["bank"]


@admin.register(Flag)
class FlagAdmin(ReadOnly, admin.ModelAdmin):
    list_display = ["id", "organization", "bank", "line", "expected_text", "tags", "created_at"]
    list_filter = ["organization", "bank"]
    raw_id_fields = ["line", "created_by"]


@admin.register(ControlLine)
class ControlLineAdmin(ReadOnly, admin.ModelAdmin):
    list_display = ["id", "flag", "line", "expected_text"]
    raw_id_fields = ["flag", "line"]


@admin.register(Transcription)
class TranscriptionAdmin(ReadOnly, admin.ModelAdmin):
    list_display = ["id", "organization", "line", "transcriber", "status", "attempts", "cost", "updated_at"]
    list_filter = ["status", "transcriber"]
    raw_id_fields = ["line"]


@admin.register(Score)
class ScoreAdmin(ReadOnly, admin.ModelAdmin):
    list_display = [
        "id",
        "flag",
        "control",
        "transcriber",
        "source",
        "failed",
        "match",
        "wer",
        "normalizer_version",
    ]
    list_filter = ["source", "match", "failed", "transcriber"]
    raw_id_fields = ["flag", "control"]


@admin.register(JudgePick)
class JudgePickAdmin(ReadOnly, admin.ModelAdmin):
    list_display = ["id", "flag", "control", "chosen", "error", "prompt_version", "cost", "picked_at"]
    raw_id_fields = ["flag", "control"]


class RunCallInline(ReadOnly, admin.TabularInline):
    model = RunCall
    extra = 0
    raw_id_fields = ["call"]


@admin.register(Run)
class RunAdmin(ReadOnly, admin.ModelAdmin):
    list_display = ["id", "organization", "bank_name", "candidate", "status", "judge_status", "created_at"]
    list_filter = ["status", "judge_status", "organization"]
    raw_id_fields = ["bank", "created_by"]
    inlines = [RunCallInline]


@admin.register(RunLine)
class RunLineAdmin(ReadOnly, admin.ModelAdmin):
    list_display = [
        "id",
        "run",
        "line",
        "differs",
        "label",
        "label_source",
        "calibration",
        "in_review",
        "review_agrees",
    ]
    list_filter = ["label", "label_source", "in_review"]
    raw_id_fields = ["run", "line", "flag", "pattern", "reviewed_by"]


@admin.register(RunPattern)
class RunPatternAdmin(ReadOnly, admin.ModelAdmin):
    list_display = ["id", "run", "name", "count"]
    raw_id_fields = ["run"]
