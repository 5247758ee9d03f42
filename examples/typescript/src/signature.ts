// The webhook signature check of docs/api.md ("Webhooks"), in TypeScript: OnCore-Signature is
// `t=<unix time>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" with the endpoint's secret>`. Check it in constant time
// before trusting the body, and refuse a timestamp more than five minutes away (a replay).

import { createHmac, timingSafeEqual } from "node:crypto";

export const SIGNATURE_TOLERANCE_S = 300;

export function verify(
  secret: string,
  header: string,
  body: Buffer,
  toleranceS: number = SIGNATURE_TOLERANCE_S,
  nowS: number = Date.now() / 1000,
): boolean {
  const parts = new Map<string, string>();
  for (const item of header.split(",")) {
    const at = item.indexOf("=");
    if (at > 0) parts.set(item.slice(0, at), item.slice(at + 1));
  }
  const timestamp = parts.get("t") ?? "";
  const given = parts.get("v1") ?? "";
  if (!/^[0-9]+$/.test(timestamp) || Math.abs(nowS - Number(timestamp)) > toleranceS) return false;
  const expected = createHmac("sha256", secret)
    .update(Buffer.concat([Buffer.from(`${timestamp}.`), body]))
    .digest("hex");
  // timingSafeEqual compares equal lengths only; the length of a hex SHA-256 is no secret.
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}
