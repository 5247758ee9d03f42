"""The payloads OnCore sends: each object's API schema and the function that fills it, in one place, so the API
routers, the webhook events and the CSV writers say the same thing the same way: references (refs), flags,
banks with their candidates and results, the turn table's rows and score cells (turns), full-call runs (runs).
These import models and queries only."""
