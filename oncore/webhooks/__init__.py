"""Webhooks: an organization registers endpoints (a URL, the events it wants, a signing secret shown once) in the
dashboard or over the API, and each event is sent to them from the queue, signed, with retries.

- models.py: endpoints and deliveries (one per endpoint and event, the delivery log).
- actions.py: the event types the product registers (`register_events`), `emit` (in the transaction of the
  change that caused the event; the sending waits for the commit and never blocks it), the writes of endpoints,
  "send again".
- sending.py: where a delivery may go (`resolve`, `check_url`: global unicast addresses only), its signature,
  one attempt (`attempt`: claim, sign, POST, record, back off, on oncore.queue) and the minutely round's reclaim
  of stale claims.
- transport.py: an attempt's connection: only to the addresses the check resolved (the URL's name kept for Host,
  SNI and the certificate), under one deadline from the connection to the last byte.
- tasks.py: the queue's entry points (`send`, `send_due`) and `send_later`, which hands deliveries to them;
  api.py: the API's router; views.py: the dashboard's settings pages.

A delivery is a POST of `{"id", "type", "created_at", "data"}` with the header
`OnCore-Signature: t=<unix time>,v1=<hex HMAC-SHA256 of "<t>.<body>" with the endpoint's secret>`. A 2xx answer
delivers it; anything else (or no answer) is tried again after ONCORE_WEBHOOK_BACKOFF_S, doubled each time, for
ONCORE_WEBHOOK_RETRY_HOURS. The platform knows no product: the product registers its events and emits them."""
