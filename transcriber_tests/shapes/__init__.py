"""Every payload OnCore sends, each object's schema beside the function that fills it, so the API routers, the
webhook events and the CSV files say the same thing the same way: references to transcribers, tenants and
assistants (refs), the organization, assistants, calls and lines (calls), flags, banks with their candidates and
results (banks), the screens' figures (screens, tradeoff, trust), the turn table's rows and score cells (turns),
full-call runs (runs, run_figures), the queue (jobs), the webhook events' data (events) and the CSV files' rows
(exports). They read through the queries, the models and lib/ only (tests/test_layout.py). The API's own envelopes
stay with its routers: list pages, request bodies, error details (api/)."""
