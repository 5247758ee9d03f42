"""Full-call runs over the API: estimate, start after confirming, one at a time, detail, lines, review, cancel,
retry, the CSV, and another organization's 404."""

# ruff: noqa: F811 (tests take the imported fixtures as parameters)

import pytest

from tests.fixtures import assert_error
from tests.llm_server import error
from tests.transcriber_tests.support import Say, add_lines_a_run_leaves_out, caller_lines, scripted_judge
from transcriber_tests import actions
from transcriber_tests.models import Run, RunLine, Transcription
from transcriber_tests.work import tasks as run_tasks

pytestmark = pytest.mark.django_db


def _start(api, bank, calls, **body):
    return api.post(f"/banks/{bank.pk}/runs", {"call_ids": [c.pk for c in calls], **body})


def test_it_estimates_and_starts_a_run_only_when_confirmed(api, run_setup, no_judge):
    bank, cand, call_a, call_b = run_setup
    estimate = api.post(f"/banks/{bank.pk}/runs/estimate", {"call_ids": [call_a.pk, call_b.pk]}).json()
    assert (
        estimate["candidate_id"] == cand.pk
        and estimate["lines"] == 6  # to transcribe: the flagged line is transcribed already
        and estimate["already_transcribed"] == 1
    )
    assert estimate["judge_configured"] is False and float(estimate["total_cost"]) > 0
    error = assert_error(_start(api, bank, [call_a, call_b]), 409, "estimate_not_confirmed")
    assert error["detail"]["lines"] == 6 and error["detail"]["total_cost"] == estimate["total_cost"]
    assert not Run.objects.exists()
    response = _start(api, bank, [call_a, call_b], confirm=True)
    assert response.status_code == 201, response.content
    run = response.json()
    assert run["status"] == "queued" and run["call_ids"] == [call_a.pk, call_b.pk]
    assert run["candidate"]["id"] == cand.pk and run["counts"]["lines"] == 7 and run["estimate"]["lines"] == 6
    error = assert_error(_start(api, bank, [call_b], confirm=True), 409, "run_in_progress")
    assert error["detail"]["run"] == run["id"]


def test_it_refuses_runs_it_cannot_start(api, org, run_setup, world, no_judge):
    bank, cand, call_a, call_b = run_setup
    for path in (f"/banks/{bank.pk}/runs", f"/banks/{bank.pk}/runs/estimate"):  # the same refusals
        assert_error(api.post(path, {"call_ids": []}), 400, "no_calls")
        too_many = assert_error(api.post(path, {"call_ids": list(range(1, 12))}), 400, "too_many_calls")
        assert too_many["detail"] == {"calls": 11, "limit": 10}
    assert_error(_start(api, bank, [call_a], candidate_id=world.live.pk, confirm=True), 404, "not_found")
    error = assert_error(
        api.post(f"/banks/{bank.pk}/runs", {"call_ids": [call_a.pk, 10**9], "confirm": True}),
        404,
        "not_found",
    )
    assert error["detail"]["calls"] == [10**9]
    unrecorded = world.call([Say("hello")], recorded=False)
    assert_error(_start(api, bank, [unrecorded], confirm=True), 409, "line_not_recorded")
    empty = actions.do_create_bank(org, name="Empty")
    assert_error(_start(api, empty, [call_a], confirm=True), 409, "no_candidate")
    assert_error(api.post(f"/banks/{empty.pk}/runs/estimate", {"call_ids": [call_a.pk]}), 409, "no_candidate")
    assert not Run.objects.exists()


def test_it_reads_a_finished_run_its_lines_and_review_and_takes_a_review(api, run_setup, llm_server):
    bank, cand, call_a, call_b = run_setup
    llm_server.responder = scripted_judge
    run_id = _start(api, bank, [call_a, call_b], confirm=True).json()["id"]
    assert run_tasks.drain_run(run_id, max_seconds=60) == Run.DONE

    run = api.get(f"/runs/{run_id}").json()
    assert run["status"] == "done" and run["judge"]["status"] == "done" and run["finished_at"]
    assert (run["counts"]["fixes"], run["counts"]["breaks"], run["counts"]["same_meaning"]) == (2, 2, 1)
    assert run["calibration"]["sampled"] == 7 and run["calibration"]["matched"] == 6
    assert (
        run["calibration"]["audio_path_agreement"] == pytest.approx(6 / 7) and not run["calibration"]["low"]
    )
    assert run["patterns"][0]["name"] == "drops digits" and run["verdict"].startswith("It would fix")
    assert run["review"]["sample"] == 4 and run["review"]["reviewed"] == 0

    lines = api.get(f"/runs/{run_id}/lines").json()
    assert lines["count"] == 7 and [ln["position"] for ln in lines["items"]] == list(range(7))
    first = lines["items"][0]
    assert first["label"] == "candidate_right" and first["label_source"] == "flag" and first["flag_id"]
    # Both breaks are in the review sample, not reviewed yet: the review is blind, so no filter tells them.
    assert api.get(f"/runs/{run_id}/lines", {"label": "production_right"}).json()["count"] == 0
    assert api.get(f"/runs/{run_id}/lines", {"pattern": run["patterns"][0]["id"]}).json()["count"] == 0
    assert api.get(f"/runs/{run_id}/lines", {"label": "calibration"}).json()["count"] == 7

    sample = api.get(f"/runs/{run_id}/review").json()
    assert sample["count"] == 4
    # Blind: the sample shows the two texts, not the label they got, until the reviewer gives theirs.
    assert {(i["label"], i["label_source"], i["reasoning"]) for i in sample["items"]} == {(None, None, "")}
    item = sample["items"][0]
    stored = RunLine.objects.get(pk=item["id"]).label
    given = "production_right" if stored == RunLine.LIVE_RIGHT else stored  # a break, in the API's words
    other = next(label for label in ("both_wrong", "same_meaning") if label != given)
    reviewed = api.post(f"/runs/{run_id}/review/{item['id']}", {"label": other}).json()
    assert reviewed["human_label"] == other and reviewed["label"] == given
    assert reviewed["review_agrees"] is False and reviewed["reviewed_at"]
    assert api.get(f"/runs/{run_id}/review").json()["items"][0]["label"] == given  # shown once reviewed
    assert api.get(f"/runs/{run_id}/review", {"show": "todo"}).json()["count"] == 3
    assert api.get(f"/runs/{run_id}").json()["review"] == {
        "sample": 4,
        "reviewed": 1,
        "agrees": 0,
        "judge_human_agreement": 0.0,
        "by_prompt_version": [{"prompt_version": "judge-3", "reviewed": 1, "agrees": 0, "kappa": 0.0}],
    }
    assert_error(api.post(f"/runs/{run_id}/review/{item['id']}", {"label": "yes"}), 422, "validation_error")
    for rest in sample["items"][1:]:
        api.post(f"/runs/{run_id}/review/{rest['id']}", {"label": "same_meaning"})
    breaks = api.get(f"/runs/{run_id}/lines", {"label": "production_right"}).json()  # reviewed: shown again
    assert breaks["count"] == 2 and all(ln["reasoning"] for ln in breaks["items"])
    by_pattern = api.get(f"/runs/{run_id}/lines", {"pattern": run["patterns"][0]["id"]}).json()
    assert by_pattern["count"] == 2
    assert_error(
        api.post(f"/runs/{run_id}/review/{first['id']}", {"label": "both_wrong"}), 409, "not_in_review_sample"
    )
    assert_error(api.post(f"/runs/{run_id}/cancel"), 409, "run_not_active")
    assert_error(api.post(f"/runs/{run_id}/retry-judge"), 409, "judge_not_failed")

    listed = api.get(f"/banks/{bank.pk}/runs").json()
    assert listed["count"] == 1 and listed["items"][0]["fixes"] == 2 and listed["items"][0]["calls"] == 2
    assert listed["items"][0]["audio_path_agreement"] == pytest.approx(6 / 7)

    response = api.get(f"/runs/{run_id}/lines.csv")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    rows = b"".join(response.streaming_content).decode().splitlines()
    assert len(rows) == 8 and rows[0].lstrip("\ufeff").startswith("run_id,")


def test_it_cancels_a_run_and_keeps_it_readable_after_its_bank_is_deleted(api, run_setup, no_judge):
    bank, cand, call_a, call_b = run_setup
    run_id = _start(api, bank, [call_a], confirm=True).json()["id"]
    cancelled = api.post(f"/runs/{run_id}/cancel").json()
    assert cancelled["status"] == "cancelled" and cancelled["finished_at"]
    assert _start(api, bank, [call_b], confirm=True).status_code == 201
    assert run_id in [r["id"] for r in api.get("/runs").json()["items"]]
    api.delete(f"/banks/{bank.pk}")
    run = api.get(f"/runs/{run_id}").json()
    assert run["bank_id"] is None and run["bank_name"] == "English"
    # Deleting the bank took its runs out of every list; each still reads by its id.
    assert api.get("/runs").json() == {
        "count": 0,
        "limit": 50,
        "offset": 0,
        "has_more": False,
        "next_after": None,
        "items": [],
    }
    assert api.get("/runs", {"status": "cancelled"}).json()["count"] == 0


def test_it_hides_another_organizations_runs(api, other_api, run_setup, no_judge):
    bank, cand, call_a, call_b = run_setup
    run_id = _start(api, bank, [call_a], confirm=True).json()["id"]
    line_id = Run.objects.get(pk=run_id).lines.first().pk
    for response in (
        other_api.get(f"/banks/{bank.pk}/runs"),
        other_api.post(f"/banks/{bank.pk}/runs/estimate", {"call_ids": [call_a.pk]}),
        other_api.post(f"/banks/{bank.pk}/runs", {"call_ids": [call_a.pk], "confirm": True}),
        other_api.get(f"/runs/{run_id}"),
        other_api.post(f"/runs/{run_id}/cancel"),
        other_api.post(f"/runs/{run_id}/retry-judge"),
        other_api.get(f"/runs/{run_id}/lines"),
        other_api.get(f"/runs/{run_id}/review"),
        other_api.post(f"/runs/{run_id}/review/{line_id}", {"label": "same_meaning"}),
        other_api.get(f"/runs/{run_id}/lines.csv"),
    ):
        assert_error(response, 404, "not_found")
    assert Run.objects.get(pk=run_id).status == "queued"


def test_it_retries_a_failed_judge(api, run_setup, llm_server, settings):
    settings.ANTHROPIC_MAX_RETRIES = 0
    bank, cand, call_a, call_b = run_setup
    answers = iter([scripted_judge, lambda body: error(500)])
    llm_server.responder = lambda body: next(answers)(body)
    run_id = _start(api, bank, [call_a, call_b], confirm=True).json()["id"]
    assert run_tasks.drain_run(run_id, max_seconds=60) == Run.DONE
    failed = api.get(f"/runs/{run_id}").json()
    assert (
        failed["judge"]["status"] == "failed"
        and "the judge's service failed (500)" in failed["judge"]["error"]
    )
    assert failed["counts"]["unlabelled"] == 2 and failed["counts"]["judge_requests"] == 1
    retried = api.post(f"/runs/{run_id}/retry-judge").json()
    assert retried["status"] == "judging" and retried["judge"]["status"] == "pending"


def test_it_lists_runs_in_fixed_queries(api, run_setup, no_judge, django_assert_max_num_queries):
    bank, cand, call_a, call_b = run_setup
    for calls in ([call_a], [call_b], [call_a, call_b]):
        run_id = _start(api, bank, calls, confirm=True).json()["id"]
        api.post(f"/runs/{run_id}/cancel")
    with django_assert_max_num_queries(5):  # key, bank, count, page, counts
        body = api.get(f"/banks/{bank.pk}/runs").json()
    assert body["count"] == 3 and [r["status"] for r in body["items"]] == ["cancelled"] * 3
    assert [r["calls"] for r in body["items"]] == [2, 1, 1]


def test_it_answers_labels_in_the_apis_words_and_still_reads_the_old_one(api, client, done_run):
    first, second = api.get(f"/runs/{done_run.pk}/review").json()["items"][:2]
    reviewed = api.post(f"/runs/{done_run.pk}/review/{first['id']}", {"label": "production_right"}).json()
    assert reviewed["human_label"] == "production_right"
    assert (
        RunLine.objects.get(pk=first["id"]).human_label == RunLine.LIVE_RIGHT
    )  # the dashboard's word, stored
    again = api.post(f"/runs/{done_run.pk}/review/{second['id']}", {"label": "live_right"}).json()
    assert again["human_label"] == "production_right"
    assert again["review_agrees"] == (again["label"] == "production_right")
    for rest in api.get(f"/runs/{done_run.pk}/review", {"show": "todo"}).json()["items"]:
        api.post(f"/runs/{done_run.pk}/review/{rest['id']}", {"label": "same_meaning"})

    # Reviewed (the review is blind until then), the lines show their labels.
    lines = api.get(f"/runs/{done_run.pk}/lines").json()["items"]
    by_text = {ln["production_text"]: ln for ln in lines}
    assert by_text["my number is 0 8 7 1 2"]["label"] == "production_right"  # a break, in the API's words
    assert "live_right" not in {ln["label"] for ln in lines}
    breaks = api.get(f"/runs/{done_run.pk}/lines", {"label": "production_right"}).json()
    assert {ln["production_text"] for ln in breaks["items"]} == {"my number is 0 8 7 1 2", "under Fitzgerald"}
    # A client written before December 2026 still filters with the old word and gets the same lines.
    old = api.get(f"/runs/{done_run.pk}/lines", {"label": "live_right"}).json()
    assert old["count"] == 2 and {ln["label"] for ln in old["items"]} == {"production_right"}

    # The schema offers the API's words only.
    schema = client.get("/api/v1/openapi.json").json()["components"]["schemas"]
    assert schema["RunLineOut"]["properties"]["label"]["anyOf"][0]["enum"] == [
        "candidate_right",
        "production_right",
        "same_meaning",
        "both_wrong",
    ]
    assert schema["ReviewIn"]["properties"]["label"]["enum"] == [
        "candidate_right",
        "production_right",
        "same_meaning",
        "both_wrong",
    ]


def test_it_says_which_caller_lines_a_run_leaves_out_and_why(api, org, world, no_judge):
    cand = world.candidate("cand")
    bank = actions.do_create_bank(org, name="Left out", controls_per_flag=0)
    actions.do_add_candidate(bank, cand, confirmed=True)
    call = world.call([Say("a table for two"), Say("at eight")])
    untimed, long, late = add_lines_a_run_leaves_out(call)

    body = {"call_ids": [call.pk], "candidate_id": cand.pk}
    estimate = api.post(f"/banks/{bank.pk}/runs/estimate", body).json()
    assert estimate["lines"] == 2 and estimate["left_out_lines"] == 3
    assert [(i["call_id"], i["line_id"], i["line_number"], i["reason"]) for i in estimate["left_out"]] == [
        (call.pk, untimed.pk, 5, "no_timing"),
        (call.pk, long.pk, 6, "too_long"),
        (call.pk, late.pk, 7, "past_recording_end"),
    ]
    by_reason = {i["reason"]: i["why"] for i in estimate["left_out"]}
    assert by_reason["too_long"] == "130 s long: lines longer than 120 s are not replayed"
    assert by_reason["no_timing"] == "no audio timing, so its audio cannot be cut"
    assert by_reason["past_recording_end"].startswith("starts at 500.0 s, after the end of its recording (")

    refused = assert_error(_start(api, bank, [call], candidate_id=cand.pk), 409, "estimate_not_confirmed")
    assert refused["detail"]["left_out"] == estimate["left_out"]
    assert (
        "3 caller lines left out: 1 with no audio timing, 1 longer than the line limit, 1 past the end of the "
        "recording" in refused["message"]
    )

    run = _start(api, bank, [call], candidate_id=cand.pk, confirm=True).json()
    assert run["counts"]["lines"] == 2
    assert run_tasks.drain_run(run["id"], max_seconds=60) == Run.DONE
    read_again = api.get(f"/runs/{run['id']}").json()
    assert read_again["estimate"]["left_out_lines"] == 3
    assert read_again["estimate"]["left_out"] == estimate["left_out"]


def test_it_refuses_a_run_with_every_line_left_out_saying_why(api, org, world, no_judge):
    cand = world.candidate("cand")
    bank = actions.do_create_bank(org, name="Nothing", controls_per_flag=0)
    actions.do_add_candidate(bank, cand, confirmed=True)
    call = world.call([])
    add_lines_a_run_leaves_out(call)
    refused = assert_error(
        api.post(f"/banks/{bank.pk}/runs/estimate", {"call_ids": [call.pk], "candidate_id": cand.pk}),
        409,
        "run_has_no_lines",
    )
    assert (
        "(3 caller lines left out: 1 with no audio timing, 1 longer than the line limit" in refused["message"]
    )
    assert [i["line_number"] for i in refused["detail"]["left_out"]] == [1, 2, 3]


def test_it_means_the_same_lines_in_the_run_estimate_as_in_the_candidate_estimate(api, org, world, no_judge):
    # Three caller lines, each flagged into a bank with no candidate yet; another transcriber already has one.
    bank = actions.do_create_bank(org, name="Same lines", controls_per_flag=0)
    call = world.call([Say("a table for two"), Say("at eight"), Say("under Kelly")])
    for line in caller_lines(call):
        actions.do_flag_line(line, f"{line.text}, please", bank=bank)
    other = world.candidate("other")
    Transcription.objects.create(
        organization=org, line=caller_lines(call)[0], transcriber=other, status=Transcription.DONE, text="hi"
    )

    adding = api.get(f"/banks/{bank.pk}/candidates/estimate", {"transcriber_id": other.pk}).json()
    assert (adding["lines"], adding["already_transcribed"]) == (2, 1)
    runs = actions.do_create_bank(org, name="Runs", controls_per_flag=0)
    actions.do_add_candidate(runs, other, confirmed=True)  # no flags: nothing to transcribe on adding it
    running = api.post(
        f"/banks/{runs.pk}/runs/estimate", {"call_ids": [call.pk], "candidate_id": other.pk}
    ).json()
    # The lines that would be transcribed and paid for, and beside them those already transcribed (free).
    assert (running["lines"], running["already_transcribed"]) == (2, 1)
    refused = assert_error(_start(api, runs, [call], candidate_id=other.pk), 409, "estimate_not_confirmed")
    assert (refused["detail"]["lines"], refused["detail"]["already_transcribed"]) == (2, 1)
    assert refused["message"].startswith(f"This run transcribes 2 lines with {other} (")
    assert ") and replays 1 it already transcribed, free;" in refused["message"]
