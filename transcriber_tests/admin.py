from django.contrib import admin

from .models import Bank, Candidate, ControlLine, Flag, Score, Transcription


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
