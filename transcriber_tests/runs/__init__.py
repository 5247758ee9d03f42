"""Full-call runs: one candidate replayed over every caller line with audio timing of up to ten calls (assistant
lines never), compared with the live transcript, the lines labelled, the candidate's breaks grouped into patterns
and a verdict written. A run never changes a score, a flag or an assistant.

    actions.py   every write a person asks for: do_start_run (after its estimate), do_cancel_run, do_retry_judge,
                 do_review_line; which caller lines a run replays and which it leaves out, and why (split_lines)
    pipeline.py  the steps the queue runs (advance: begin, compare, the judge step), calibration, the review sample
    queries.py   the read side the pages and the API share: summaries, counts, line and review filters
    views.py     the pages, under the `runs:` namespace (urls.py, included from transcriber_tests/urls.py)
    tasks.py     the django-q2 entry points, and drain_run for commands, demos and tests

States, each move a conditional UPDATE ... WHERE status = ... (so a step delivered twice does nothing):

    queued --begin--> transcribing --compare--> judging --judge--> done
    queued / transcribing / judging --cancel--> cancelled;   an unexpected error in a step --> failed

- begin: queue a Transcription for the candidate on every line and for each call's live transcriber on the
  calibration sample. Transcription rows are unique per line and transcriber, so a line already
  transcribed is not paid for again, and the per-organization queue (jobs.pump) runs them.
- compare: once none of those transcriptions is waiting, copy the texts onto the run's lines, compare
  them with the live transcript (normalized equality), score flagged lines against what was said and
  label them mechanically (scoring.compare_line), and check the calibration sample.
- judge: label every other line that differs, in batches that each fit in one task; then the patterns,
  the verdict and the review sample. Without ANTHROPIC_API_KEY the judge step records "not configured"
  and the run is done with its comparisons. An LLMError keeps what was labelled, records the message and
  finishes the run; do_retry_judge picks up where it stopped.

`pipeline.advance(run_id)` does whichever step is next and is what the queue runs (tasks.advance): after start,
after compare, after each judge batch, once a minute for every active run (tasks.advance_all), and when the run's
last transcription finishes (tasks.transcription_finished).
The judge's review sample holds judge labels only: a flagged line's label comes from what a person typed.
One run per organization may be queued or running: the partial unique index `one_active_run_per_org` holds
it, and a second start gets RunInProgress naming the run in progress.

Settings (settings.ONCORE, which oncore/settings.py reads from these environment variables):
    RUN_CALIBRATION_LINES   ONCORE_RUN_CALIBRATION_LINES   lines replayed through the live transcriber (20)
    RUN_CALIBRATION_WARN    ONCORE_RUN_CALIBRATION_WARN    audio path agreement below this warns (0.8)
    RUN_REVIEW_LINES        ONCORE_RUN_REVIEW_LINES        judge-labelled lines set aside for review (120, at most 120)
"""
