"""The dashboard's pages: under the `tt:` namespace, and the full-call runs' under `runs:` (each page in views/,
one module per screen)."""

from django.urls import include, path

from .views import banks, calls, flags, results, runs, trust, turns, vocabularies

tt_patterns = [
    path("", calls.home, name="home"),
    path("calls/", calls.calls, name="calls"),
    path("calls/<int:pk>/", calls.call_page, name="call"),
    path("lines/<int:pk>/audio.wav", calls.line_audio, name="line_audio"),
    path("lines/<int:pk>/flag/", flags.flag_line, name="flag_line"),
    path("flags/unbanked/", flags.unbanked_flags, name="unbanked_flags"),
    path("flags/<int:pk>/edit/", flags.edit_flag, name="edit_flag"),
    path("flags/<int:pk>/results/", flags.flag_results, name="flag_results"),
    path("flags/<int:pk>/history/", flags.flag_history, name="flag_history"),
    path("flags/<int:pk>/move/", flags.move_flag, name="move_flag"),
    path("flags/<int:pk>/delete/", flags.delete_flag, name="delete_flag"),
    path("banks/", banks.banks, name="banks"),
    path("banks/new/", banks.bank_new, name="bank_new"),
    path("banks/<int:pk>/", results.bank_results, name="bank"),
    path("banks/<int:pk>/edit/", banks.bank_edit, name="bank_edit"),
    path("banks/<int:pk>/delete/", banks.bank_delete, name="bank_delete"),
    path("banks/<int:pk>/controls/redraw/", banks.bank_redraw_controls, name="bank_redraw_controls"),
    path("banks/<int:pk>/candidates/", banks.bank_candidates, name="bank_candidates"),
    path("banks/<int:pk>/candidates/<int:transcriber_pk>/move/", banks.candidate_move, name="candidate_move"),
    path(
        "banks/<int:pk>/candidates/<int:transcriber_pk>/remove/",
        banks.candidate_remove,
        name="candidate_remove",
    ),
    path("banks/<int:pk>/turns/", turns.turn_table, name="turn_table"),
    path("banks/<int:pk>/results.csv", results.export_results, name="export_results"),
    path("banks/<int:pk>/turns.csv", turns.export_turns, name="export_turns"),
    path("banks/<int:pk>/trust/", trust.bank_trust, name="bank_trust"),
    path("banks/<int:pk>/confusions.csv", trust.export_confusions, name="export_confusions"),
    path("vocabularies/", vocabularies.vocabularies, name="vocabularies"),
    path("vocabularies/new/", vocabularies.vocabulary_form, name="vocabulary_new"),
    path("vocabularies/<int:pk>/", vocabularies.vocabulary_form, name="vocabulary_edit"),
    path("vocabularies/<int:pk>/delete/", vocabularies.vocabulary_delete, name="vocabulary_delete"),
]

run_patterns = [
    path("banks/<int:pk>/runs/", runs.bank_runs, name="bank_runs"),
    path("banks/<int:pk>/runs/new/", runs.run_new, name="new"),
    path("calls/<int:pk>/run/", runs.run_from_call, name="from_call"),
    path("runs/<int:pk>/", runs.run_page, name="detail"),
    path("runs/<int:pk>/cancel/", runs.run_cancel, name="cancel"),
    path("runs/<int:pk>/retry-judge/", runs.run_retry_judge, name="retry_judge"),
    path("runs/<int:pk>/review/", runs.run_review, name="review"),
    path("runs/<int:pk>/review/<int:line_pk>/", runs.run_review_line, name="review_line"),
    path("runs/<int:pk>/lines.csv", runs.run_export, name="export"),
]

urlpatterns = [
    path("", include((tt_patterns, "tt"))),
    path("", include((run_patterns, "runs"))),
]
