"""The dashboard's pages, one module per screen (urls.py names them): calls, flags, banks, results, turns, trust,
runs, and the health check. A view parses (a form), finds the object through its organization-scoped lookup
(queries/lookups.py), calls the action a person asked for (actions/) or the screen's reads (queries/), and
renders; no view reads or writes a table itself."""
