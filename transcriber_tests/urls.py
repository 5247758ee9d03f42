from django.urls import include, path

from .views import banks as views
from .views import history as history_views
from .views import trust as trust_views

# The dashboard pages under the `tt:` namespace, and the full-call run pages under `runs:`.
tt_patterns = [
    path("", views.home, name="home"),
    path("calls/", views.calls, name="calls"),
    path("calls/<int:pk>/", views.call_page, name="call"),
    path("lines/<int:pk>/audio.wav", views.line_audio, name="line_audio"),
    path("lines/<int:pk>/flag/", views.flag_line, name="flag_line"),
    path("flags/unbanked/", views.unbanked_flags, name="unbanked_flags"),
    path("flags/<int:pk>/edit/", views.edit_flag, name="edit_flag"),
    path("flags/<int:pk>/results/", views.flag_results, name="flag_results"),
    path("flags/<int:pk>/history/", history_views.flag_history, name="flag_history"),
    path("flags/<int:pk>/move/", views.move_flag, name="move_flag"),
    path("flags/<int:pk>/delete/", views.delete_flag, name="delete_flag"),
    path("banks/", views.banks, name="banks"),
    path("banks/new/", views.bank_new, name="bank_new"),
    path("banks/<int:pk>/", views.bank_results, name="bank"),
    path("banks/<int:pk>/edit/", views.bank_edit, name="bank_edit"),
    path("banks/<int:pk>/delete/", views.bank_delete, name="bank_delete"),
    path("banks/<int:pk>/controls/redraw/", views.bank_redraw_controls, name="bank_redraw_controls"),
    path("banks/<int:pk>/candidates/", views.bank_candidates, name="bank_candidates"),
    path("banks/<int:pk>/candidates/<int:transcriber_pk>/move/", views.candidate_move, name="candidate_move"),
    path(
        "banks/<int:pk>/candidates/<int:transcriber_pk>/remove/",
        views.candidate_remove,
        name="candidate_remove",
    ),
    path("banks/<int:pk>/turns/", views.turn_table, name="turn_table"),
    path("banks/<int:pk>/results.csv", views.export_results, name="export_results"),
    path("banks/<int:pk>/turns.csv", views.export_turns, name="export_turns"),
    path("banks/<int:pk>/trust/", trust_views.bank_trust, name="bank_trust"),
    path("banks/<int:pk>/confusions.csv", trust_views.export_confusions, name="export_confusions"),
]

urlpatterns = [
    path("", include((tt_patterns, "tt"))),
    path("", include("transcriber_tests.runs.urls")),
]
