"""What a score keeps of its expected text's entities (lib.entities): marks encoded and read back, and counted per
category; and how a turn-table cell shows them (kept or lost said in words, not colour alone)."""

from transcriber_tests.lib import entities
from transcriber_tests.lib.cells import cell
from transcriber_tests.templatetags.scores import cell_html, entity_marks_html


def test_it_reads_back_the_marks_it_wrote():
    marks = [("Maria  Lopez", "name", True), ("10:45 am", "time", False), ("3B", "id", True)]
    stored = entities.encode(marks)
    assert entities.decode(stored) == (
        entities.Mark("Maria Lopez", "name", True),
        entities.Mark("10:45 am", "time", False),
        entities.Mark("3B", "id", True),
    )
    assert entities.encode([]) == "" and entities.decode("") == ()


def test_it_counts_the_marks_of_a_candidates_lines_per_category():
    lines = [
        entities.encode(
            [("four", "number", True), ("Tuesday", "date", True), ("ten forty five", "time", False)]
        ),
        entities.encode([("Maria Lopez", "name", False), ("4", "number", True)]),
    ]
    found = entities.tally(lines)
    assert (found.right, found.n, found.lines) == (3, 5, 2)
    assert found.accuracy == 3 / 5
    assert [(c.category, c.right, c.n) for c in found.categories] == [
        ("name", 0, 1),
        ("time", 0, 1),
        ("date", 1, 1),
        ("number", 2, 2),
    ]
    assert found.of("id").n == 0 and found.of("id").accuracy is None
    assert entities.tally([]).accuracy is None


def test_a_cell_lists_each_expected_entity_kept_or_lost_in_words():
    stored = entities.encode([("Maria Lopez", "name", False), ("10:45", "time", True)])
    html = entity_marks_html(stored)
    assert 'aria-label="Entities said: 1 of 2 kept"' in html
    assert '<span class="visually-hidden">lost: </span>Maria Lopez <span class="kind">name</span>' in html
    assert '<span class="visually-hidden">kept: </span>10:45 <span class="kind">time</span>' in html
    assert entity_marks_html("") == ""
    scored = cell(1, "maria lopes at 10:45", False, "", False, 0.25, False, "1", 1, 0, 0, None, "", stored)
    assert html in cell_html(scored, "Maria Lopez at 10:45")
    failed = cell(1, "", True, "error", False, None, False, "1", entities=stored)
    assert "entity-marks" not in cell_html(failed, "Maria Lopez at 10:45")
    assert entity_marks_html(entities.encode([("<b>", "name", True)])).count("&lt;b&gt;") == 1
