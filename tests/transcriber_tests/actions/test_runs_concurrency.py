"""Two starts at the same moment, on PostgreSQL: the partial unique index lets exactly one run in."""

# ruff: noqa: F811 (tests take the imported fixtures as parameters)

import threading

import pytest
from django.db import connection

from transcriber_tests.actions import runs as run_actions
from transcriber_tests.errors import RunInProgress
from transcriber_tests.models import Run

from ..support import Say


def _start_together(bank, candidate, call_ids):
    """Start one run per call id, each in its own thread and database connection, released together."""
    barrier = threading.Barrier(len(call_ids))
    results = []

    def start(call_id):
        try:
            barrier.wait(timeout=10)
            results.append(
                ("started", run_actions.do_start_run(bank, [call_id], candidate=candidate, confirmed=True).pk)
            )
        except RunInProgress as exc:
            results.append(("refused", exc))
        except Exception as exc:  # reported by the assertion below, with its message
            results.append(("error", repr(exc)))
        finally:
            connection.close()

    threads = [threading.Thread(target=start, args=(call_id,)) for call_id in call_ids]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    return results


@pytest.mark.django_db(transaction=True)
def test_it_lets_exactly_one_of_two_concurrent_starts_through(org, world, no_judge):
    if connection.vendor != "postgresql":
        pytest.skip(
            "needs PostgreSQL (CI runs it): SQLite serializes writers, so two starts cannot race; "
            "run with DATABASE_URL=postgres://... to check the constraint under concurrency"
        )
    from transcriber_tests import actions

    cand = world.candidate("cand")
    bank = actions.do_create_bank(org, name="English", controls_per_flag=0)
    actions.do_add_candidate(bank, cand, confirmed=True)
    calls = [world.call([Say(f"call {i} line")]) for i in range(2)]
    for _ in range(3):
        results = _start_together(bank, cand, [c.pk for c in calls])
        assert sorted(kind for kind, _ in results) == ["refused", "started"], results
        started = next(value for kind, value in results if kind == "started")
        refused = next(value for kind, value in results if kind == "refused")
        assert refused.detail["run"] == started and f"Run {started}" in refused.message
        assert Run.objects.filter(status__in=Run.ACTIVE).count() == 1
        run_actions.do_cancel_run(Run.objects.get(pk=started))
    assert Run.objects.count() == 3
