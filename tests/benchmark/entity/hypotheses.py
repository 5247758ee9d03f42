"""Two systems' hypotheses on the fixture, with what the matcher should find in them, checked by hand.

Tier A spans: MLCommons epa, maria cantwell, boston city council, clean air act (n=4); Belebele/FLEURS
Neil Armstrong, Apollo 11, July 20, 1969, Siobhan O'Neill, St. Louis, United Nations, World War II (n=7).
Tier B: seattle, david (MLCommons), Moon (Belebele/FLEURS).
"""

import json

ALPHA = [
    # epa, maria cantwell, seattle found
    {
        "clip_id": "ml-0001",
        "hypothesis": "The E.P.A. met with Senator Maria Cantwell in Seattle on March 4th.",
    },
    # david, clean air act found; boston city council missed
    {"clip_id": "ml-0002", "hypothesis": "David asked the Boston council about the Clean Air Act."},
    {"clip_id": "ml-0003", "hypothesis": "we will now take a short recess and come back in ten minutes"},
    # a line for the clip excluded at import: ignored, with a note
    {"clip_id": "ml-0004", "hypothesis": "the mayor of springfield opened the meeting"},
    # all four found ("eleven" = 11, "twentieth" = 20th, "nineteen sixty nine" = 1969)
    {
        "clip_id": "bf-0001",
        "hypothesis": (
            "Neil Armstrong walked on the moon during Apollo eleven on July twentieth, nineteen sixty nine."
        ),
    },
    # Siobhan O'Neill missed; Saint = St., "World War Two" = World War II
    {
        "clip_id": "bf-0002",
        "hypothesis": "Doctor Shivon O'Neill of Saint Louis spoke to the United Nations about World War Two.",
    },
]
ALPHA_TIER_A = {"MLCommons_TestPortion": (3, 4), "Belebele_Fleurs_TestPortion": (6, 7)}

BETA = [
    # maria cantwell missed
    {
        "clip_id": "ml-0001",
        "hypothesis": "the epa met with senator mario cantwell in seattle on march fourth",
    },
    {"clip_id": "ml-0002", "hypothesis": "david asked the boston city council about the clean air act"},
    # ml-0003 has no line; bf-0001 failed (null): its four spans count as missed
    {"clip_id": "bf-0001", "hypothesis": None},
    {
        "clip_id": "bf-0002",
        "hypothesis": "Dr. Siobhan O'Neill of St. Louis spoke to the United Nations about World War II.",
    },
]
BETA_TIER_A = {"MLCommons_TestPortion": (3, 4), "Belebele_Fleurs_TestPortion": (4, 7)}


def write_jsonl(path, lines, system, model, formatting=None):
    with open(path, "w") as fh:
        for line in lines:
            item = {**line, "system": system, "model": model}
            if formatting is not None:
                item["formatting"] = formatting
            fh.write(json.dumps(item) + "\n")
    return path
