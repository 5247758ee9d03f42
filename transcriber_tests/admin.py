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


class CandidateInline(admin.TabularInline):
    model = Candidate
    extra = 0


@admin.register(Bank)
class BankAdmin(admin.ModelAdmin):
    list_display = ["name", "organization", "language_label", "threshold", "controls_per_flag", "created_at"]
    list_filter = ["organization"]
    inlines = [CandidateInline]


@admin.register(Candidate)
class CandidateAdmin(admin.ModelAdmin):
    list_display = ["bank", "transcriber", "position"]
    list_filter = ["bank"]


@admin.register(Flag)
class FlagAdmin(admin.ModelAdmin):
    list_display = ["id", "organization", "bank", "line", "expected_text", "tags", "created_at"]
    list_filter = ["organization", "bank"]
    raw_id_fields = ["line", "created_by"]


@admin.register(ControlLine)
class ControlLineAdmin(admin.ModelAdmin):
    list_display = ["id", "flag", "line", "expected_text"]
    raw_id_fields = ["flag", "line"]


@admin.register(Transcription)
class TranscriptionAdmin(admin.ModelAdmin):
    list_display = ["id", "organization", "line", "transcriber", "status", "attempts", "cost", "updated_at"]
    list_filter = ["status", "transcriber"]
    raw_id_fields = ["line"]


@admin.register(Score)
class ScoreAdmin(admin.ModelAdmin):
    list_display = ["id", "flag", "control", "transcriber", "source", "failed", "match", "wer", "normalizer_version"]
    list_filter = ["source", "match", "failed", "transcriber"]
    raw_id_fields = ["flag", "control"]


@admin.register(JudgePick)
class JudgePickAdmin(admin.ModelAdmin):
    list_display = ["id", "flag", "control", "chosen", "error", "prompt_version", "cost", "picked_at"]
    raw_id_fields = ["flag", "control"]


class RunCallInline(admin.TabularInline):
    model = RunCall
    extra = 0
    can_delete = False
    raw_id_fields = ["call"]


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    """Runs are never deleted, so the admin offers no delete."""

    list_display = ["id", "organization", "bank_name", "candidate", "status", "judge_status", "created_at"]
    list_filter = ["status", "judge_status", "organization"]
    raw_id_fields = ["bank", "created_by"]
    inlines = [RunCallInline]

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(RunLine)
class RunLineAdmin(admin.ModelAdmin):
    list_display = ["id", "run", "line", "differs", "label", "label_source", "calibration", "in_review",
                    "review_agrees"]
    list_filter = ["label", "label_source", "in_review"]
    raw_id_fields = ["run", "line", "flag", "pattern", "reviewed_by"]

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(RunPattern)
class RunPatternAdmin(admin.ModelAdmin):
    list_display = ["id", "run", "name", "count"]
    raw_id_fields = ["run"]
