"""scripts/api_walkthrough.py waits for one event after another: one that came while another was awaited counts
(bank.leader_changed can arrive before the flag.scored it waits for first; it then waited 90 s and said none
came)."""

import importlib.util
import queue
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "api_walkthrough.py"


def walkthrough():
    spec = importlib.util.spec_from_file_location("api_walkthrough", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class FakeReceiver:
    def __init__(self, events):
        self.events = queue.Queue()
        for event in events:
            self.events.put(event)
        self.earlier = []


def test_an_event_that_came_while_another_was_awaited_is_found_afterwards(capsys):
    script = walkthrough()
    leader = {
        "id": "e1",
        "type": "bank.leader_changed",
        "data": {
            "bank": {"id": 7, "name": "B"},
            "leader": None,
            "previous_leader": None,
            "leader_accuracy": None,
            "window_days": 30,
        },
    }
    scored = {"id": "e2", "type": "flag.scored", "data": {"flag": {"id": 3, "bank_id": 7}}}
    receiver = FakeReceiver([leader, scored])

    got = script.wait_for(None, receiver, {}, lambda e: e["type"] == "flag.scored", 5, None)
    assert got is scored
    again = script.wait_for(None, receiver, {}, lambda e: e["type"] == "bank.leader_changed", 0.1, None)
    assert again is leader and receiver.earlier == []
    assert "received earlier bank.leader_changed e1" in capsys.readouterr().out
