#!/usr/bin/env python3
"""The example internal service in Python: receives the gateway's webhook deliveries and
verifies each (Standard Webhooks) with the standard library only (hmac, hashlib, base64).

    python3 examples/receiver/receiver.py whsec_...    (or EDGEPAY_RECEIVER_SECRET=whsec_...)
    EDGEPAY_RECEIVER_PORT=8789 (default; 0 picks a free port), always on 127.0.0.1

Verified delivery -> one printed line and 204. A webhook-id seen before -> 204, not handled
again. Bad or missing signature, or a timestamp more than 5 minutes away -> a warning and 401.
"""

import base64
import binascii
import hashlib
import hmac
import json
import os
import sys
import threading
import time
from collections import OrderedDict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# How far webhook-timestamp may be from our clock, in seconds: the gateway stamps every
# attempt with its own time, so only a replayed (captured) request is ever this old.
TOLERANCE_SEC = 5 * 60
# The largest body read, in bytes; larger deliveries are answered 413.
MAX_BODY_BYTES = 1024 * 1024
# How many webhook-ids are remembered for deduplication (a real service keeps them in its
# database, written in the same transaction as what the event changes).
REMEMBERED_IDS = 10_000


class VerificationError(Exception):
    """The delivery is not signed with our secret, or not now."""


def secret_key(secret):
    """The HMAC key: the base64 part of a `whsec_...` secret, decoded."""
    encoded = secret[len("whsec_") :] if secret.startswith("whsec_") else secret
    key = base64.b64decode(encoded, validate=True)
    if not key:
        raise ValueError("the secret is empty")
    return key


def verify(key, headers, body, now=None):
    """Checks a delivery's Standard Webhooks signature over the exact body bytes.

    The signed content is `{webhook-id}.{webhook-timestamp}.{body}`; webhook-signature holds
    one or more space-separated `v1,<base64 HMAC-SHA256>` (two while a rotated-out secret
    still signs), and one matching is enough. Raises VerificationError otherwise.
    """
    webhook_id = headers.get("webhook-id")
    timestamp = headers.get("webhook-timestamp")
    signatures = headers.get("webhook-signature")
    if not webhook_id or not timestamp or not signatures:
        raise VerificationError("missing webhook-id, webhook-timestamp or webhook-signature")
    if not (timestamp.isascii() and timestamp.isdigit()):
        raise VerificationError("webhook-timestamp is not unix seconds")
    now = time.time() if now is None else now
    if abs(now - int(timestamp)) > TOLERANCE_SEC:
        raise VerificationError("webhook-timestamp is more than 5 minutes away")
    signed = f"{webhook_id}.{timestamp}.".encode() + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest())
    for candidate in signatures.split(" "):
        version, _, signature = candidate.partition(",")
        # Constant time, so the answer's timing says nothing about the right signature.
        if version == "v1" and hmac.compare_digest(signature.encode(), expected):
            return
    raise VerificationError("no v1 signature matches")


class SeenIds:
    """The last REMEMBERED_IDS webhook-ids, oldest forgotten first (thread-safe)."""

    def __init__(self):
        self._ids = OrderedDict()
        self._lock = threading.Lock()

    def add(self, webhook_id):
        """Remembers the id; False when it was already there."""
        with self._lock:
            if webhook_id in self._ids:
                return False
            self._ids[webhook_id] = None
            if len(self._ids) > REMEMBERED_IDS:
                self._ids.popitem(last=False)
            return True

    def forget(self, webhook_id):
        with self._lock:
            self._ids.pop(webhook_id, None)


def describe(event):
    """The line printed for a verified delivery (the TypeScript receiver prints the same)."""
    data = event.get("data") if isinstance(event.get("data"), dict) else {}
    reference = data.get("reference")
    reference = reference if isinstance(reference, str) else "-"
    return (
        f"receiver: verified {event.get('event_type', '?')} {event.get('event_id', '?')} "
        f"reference={reference}"
    )


def handler_for(key, seen):
    class DeliveryHandler(BaseHTTPRequestHandler):
        def do_POST(self):
            length = self.headers.get("Content-Length", "")
            if not (length.isascii() and length.isdigit()):
                return self.answer(411)
            if int(length) > MAX_BODY_BYTES:
                self.close_connection = True
                return self.answer(413)
            body = self.rfile.read(int(length))
            try:
                verify(key, self.headers, body)
            except VerificationError as error:
                print(f"receiver: rejected a delivery: {error}", file=sys.stderr, flush=True)
                return self.answer(401)
            webhook_id = self.headers["webhook-id"]
            # At least once: a retry or an admin replay carries the same webhook-id.
            if not seen.add(webhook_id):
                print(f"receiver: duplicate {webhook_id}, already handled", flush=True)
                return self.answer(204)
            try:
                event = json.loads(body)
            except ValueError:
                seen.forget(webhook_id)
                return self.answer(400)
            # Answer fast (the gateway waits 15 s at most): hand slow work to a queue.
            print(describe(event), flush=True)
            self.answer(204)

        def answer(self, status):
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format, *args):
            # One line per delivery is printed above; no access log besides.
            pass

    return DeliveryHandler


def main(argv):
    secret = argv[1] if len(argv) > 1 else os.environ.get("EDGEPAY_RECEIVER_SECRET", "")
    if not secret:
        print(
            "usage: python3 examples/receiver/receiver.py <whsec_...> (or EDGEPAY_RECEIVER_SECRET)",
            file=sys.stderr,
        )
        return 2
    try:
        key = secret_key(secret)
    except (binascii.Error, ValueError) as error:
        print(f"receiver: the secret is not whsec_<base64>: {error}", file=sys.stderr)
        return 2
    port = int(os.environ.get("EDGEPAY_RECEIVER_PORT", "8789"))
    server = ThreadingHTTPServer(("127.0.0.1", port), handler_for(key, SeenIds()))
    print(f"receiver: listening on http://127.0.0.1:{server.server_address[1]}/", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
