"""
Schemathesis hooks of `npm run fuzz` (scripts/fuzz.ts loads this module through
SCHEMATHESIS_HOOKS): real ids for the generated requests, and the check that a
request answered 4xx wrote nothing.

Environment (set by scripts/fuzz.ts):
  FUZZ_API_URL       the API under test (only requests to it are accounted)
  FUZZ_AWS_ENDPOINT  the local cloud's AWS endpoint (its /_local/stats counters)
  FUZZ_FIXTURES      JSON: path-parameter name -> ids the seeding created (the fuzz caller's own)
  FUZZ_OTHERS        JSON: the same for another customer's records (each must answer 404 to the caller)
  FUZZ_SHOP_TOKEN    the fuzz caller's shop token, sent on every route a shop token may call
  FUZZ_ADMIN_TOKEN   the operator's token, sent on the routes only an admin may call (read from the
                     document's security requirements)
  FUZZ_TRACE         optional: a file to which every request is appended (a JSON line:
                     request, status, item writes, milliseconds spent waiting and answering)

Why the 4xx check is sound. The local cloud counts every DynamoDB item write
per table (`writes.<table>.itemWrites` of /_local/stats). Schemathesis runs
one request at a time (workers=1), and every request it sends, whatever sends
it (a generated case, a check's own control request, a probe), goes through
`requests.Session.send`, which is wrapped here:
  1. Before a request the cloud is made quiescent: no saga execution running,
     no function invocation busy or queued, and no counter moving for
     QUIET_MS. Waiting costs time, so it is done only when the previous
     request wrote something (or a saga still runs): work
     that happens after a response (stream projectors, the outbox, a 202's
     saga) is always started by a write, so a cloud that was quiescent before
     a request that wrote nothing is still quiescent after it.
  2. The counters read just before the request and just after its response
     differ only by what that request wrote, synchronously (a handler answers
     after its writes).
  3. A write that showed up later without any request in flight (one a
     handler left running past its answer) is noticed before the next request
     and charged to the request before it: the check fails on the next
     response, naming that request.
One write a 4xx may make, by the contract (shared/api.md, Conventions): a POST
with an `Idempotency-Key` that the command refused (404, or 409 other than
IDEMPOTENCY_KEY_REUSED) has its refusal remembered, so that a repeat answers
the same even if the world changed: a creation's as one item at the first
version of the aggregate it would have made, in that service's events table
(functions/shared/idempotency.ts), restock's as Powertools' record in the
idempotency table. That record, and nothing else, is allowed; bad input (400,
413, 415) and a 429 write nothing.

The reservation sweeper writes only when a reservation expires (15 minutes by
default, longer than any run), so it does not disturb (1)-(3).
"""

from __future__ import annotations

import json
import os
import re
import time
import urllib.parse
import urllib.request
import uuid
import zlib
from typing import Any

import requests
import schemathesis
from hypothesis import strategies as st

API_URL = os.environ["FUZZ_API_URL"].rstrip("/")
AWS_ENDPOINT = os.environ["FUZZ_AWS_ENDPOINT"].rstrip("/")
FIXTURES: dict[str, list[str]] = json.loads(os.environ.get("FUZZ_FIXTURES", "{}"))
OTHERS: dict[str, list[str]] = json.loads(os.environ.get("FUZZ_OTHERS", "{}"))
OTHERS_IDS = {i for ids in OTHERS.values() for i in ids}
SHOP_TOKEN = os.environ.get("FUZZ_SHOP_TOKEN", "")
ADMIN_TOKEN = os.environ.get("FUZZ_ADMIN_TOKEN", "")
ADMIN_SCOPE = "commerce/admin"

# The idempotency table and the services' events tables, by their logical ids (the local cloud's tables
# are named by theirs).
IDEMPOTENCY_TABLE = re.compile(r"^Idempotency[0-9A-F]{8}$")
EVENTS_TABLE = re.compile(r"^[A-Za-z]+EventsTable[0-9A-F]{8}$")
# The refusals a keyed POST remembers (functions/shared/idempotency.ts).
REMEMBERED_REFUSALS = {404, 409}

TRACE_FILE = os.environ.get("FUZZ_TRACE")

QUIET_MS = 100
QUIESCENCE_TIMEOUT_S = 60
POLL_S = 0.025


def _admin(path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    """The local cloud's admin API: a GET, or a POST of `body`."""
    # urllib, not requests: the accounting below must not see its own calls.
    request = urllib.request.Request(
        f"{AWS_ENDPOINT}/_local/{path}",
        data=None if body is None else json.dumps(body).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


def _stats() -> dict[str, Any]:
    return _admin("stats")


def _writes(stats: dict[str, Any]) -> dict[str, int]:
    return {table: t["itemWrites"] for table, t in stats.get("writes", {}).items()}


def _running(stats: dict[str, Any]) -> int:
    return int(stats.get("stepFunctions", {}).get("running", 0))


def _diff(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    return {t: after.get(t, 0) - before.get(t, 0) for t in set(before) | set(after) if after.get(t, 0) != before.get(t, 0)}


def _activity() -> tuple[dict[str, Any], Any, bool]:
    """The counters, what moves while the cloud works, and whether anything is in flight now."""
    stats = _stats()
    pools = _admin("sandboxes")
    # Every function's invocations (a projector, the outbox, a saga step, a sweeper), and item writes.
    moving = (
        sorted(_writes(stats).items()),
        sorted((fn, p.get("invocations", 0)) for fn, p in pools.items()),
    )
    # A stream mapping gathering a batch over its window (or delivering one) has records on their way.
    pending = any(m.get("pending", False) for m in stats.get("streams", {}).values())
    in_flight = (
        _running(stats) > 0
        or pending
        or any(p.get("busy", 0) + p.get("queued", 0) + p.get("paused", 0) for p in pools.values())
    )
    return stats, moving, in_flight


def _described(writes: dict[str, int]) -> str:
    return ", ".join(f"{table} +{n}" for table, n in sorted(writes.items()))


def _quiescent() -> dict[str, Any]:
    """
    Waits until no saga runs, no function is busy or queued, and no counter
    moves for QUIET_MS (the moment between a write and the invocation of the
    stream consumer it pokes); returns the counters then.
    """
    deadline = time.monotonic() + QUIESCENCE_TIMEOUT_S
    _, moving, _ = _activity()
    still_since = time.monotonic()
    while True:
        time.sleep(POLL_S)
        stats, latest, in_flight = _activity()
        if in_flight or latest != moving:
            still_since = time.monotonic()
        elif (time.monotonic() - still_since) * 1000 >= QUIET_MS:
            return stats
        if time.monotonic() > deadline:
            raise RuntimeError(f"the local cloud did not become quiescent within {QUIESCENCE_TIMEOUT_S} s")
        moving = latest


class _Ledger:
    """The accounting of steps (1)-(3) above, across the run's requests."""

    def __init__(self) -> None:
        self.quiescent = False
        self.last_writes: dict[str, int] = {}
        self.last_request: requests.PreparedRequest | None = None
        self.last_status = 0
        # Writes that showed up after a 4xx's answer (step 3), each described; the check reports them.
        self.late_writes: list[str] = []

    def before(self) -> dict[str, int]:
        if not self.quiescent:
            return _writes(_quiescent())
        stats = _stats()
        writes = _writes(stats)
        late = _diff(self.last_writes, writes)
        if late and self.last_request is not None and 400 <= self.last_status < 500:
            # Written after the answer, with nothing else in flight: the previous request's doing.
            self.late_writes.append(
                f"{self.last_request.method} {self.last_request.url} answered {self.last_status}, "
                f"then DynamoDB items were written: {_described(late)}"
            )
        if late or _running(stats) > 0:
            return _writes(_quiescent())
        return writes

    def after(self, request: requests.PreparedRequest, status: int, before: dict[str, int]) -> None:
        stats = _stats()
        writes = _writes(stats)
        request.fuzz_item_writes = _diff(before, writes)  # type: ignore[attr-defined]
        self.quiescent = not request.fuzz_item_writes and _running(stats) == 0  # type: ignore[attr-defined]
        self.last_writes = writes
        self.last_request = request
        self.last_status = status


LEDGER = _Ledger()
_send = requests.Session.send


def _admin_only_operations() -> list[tuple[str, re.Pattern[str]]]:
    """
    The operations whose security requirements name the admin scope alone, read
    from the document the API serves: their cases go with the operator's token
    (with a shop token every one would be the gateway's 403, and the fuzz would
    test nothing of them). Every other operation is fuzzed as the shop caller.
    """
    with urllib.request.urlopen(f"{API_URL}/openapi.json", timeout=30) as response:
        document = json.load(response)
    found = []
    for path, item in document.get("paths", {}).items():
        for method, operation in item.items():
            if not isinstance(operation, dict):
                continue
            requirements = operation.get("security", document.get("security", []))
            scopes = {scope for requirement in requirements for names in requirement.values() for scope in names}
            if scopes == {ADMIN_SCOPE}:
                pattern = re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(path))
                found.append((method.upper(), re.compile(f"^{pattern}$")))
    return found


ADMIN_ONLY = _admin_only_operations() if SHOP_TOKEN else []


# Fields of a registration only an admin may set (api.md, "Identity and access").
REGISTRATION_ADMIN_FIELDS = ("creditLimitCents", "ownerSub")


def _unregistered_caller_token() -> str:
    """A shop token of a caller that has no customer record yet (the local issuer's, for a new sub)."""
    return _admin("token", {"sub": f"fuzz-registrant-{uuid.uuid4()}", "scope": "commerce/shop"})["access_token"]


def _registration_token(request: requests.PreparedRequest) -> str | None:
    """
    Who sends a registration (POST /customers). The fuzz caller has its record
    already, so as that caller a valid body could only ever answer 409 and the
    201 would go untested. So a body that is an object without the admin's
    fields goes as a caller not registered yet. One with them goes as the
    operator, who may set them, or as the shop caller, who must get 403: half
    each, by the body's checksum, so that a seed replays the same. Any other
    body stays the fuzz caller's (400).
    """
    raw = request.body.encode() if isinstance(request.body, str) else request.body or b""
    try:
        body = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(body, dict):
        return None
    if any(field in body for field in REGISTRATION_ADMIN_FIELDS):
        return ADMIN_TOKEN if zlib.crc32(raw) % 2 == 0 else None
    return _unregistered_caller_token()


def _with_token(request: requests.PreparedRequest) -> None:
    """The operator's token in place of the caller's on the admin-only routes, and a registration's
    sender (above). Schemathesis sends the caller's (its --header); a case without any, or with another
    (a bad one), goes out as it is."""
    if not SHOP_TOKEN or request.headers.get("Authorization") != f"Bearer {SHOP_TOKEN}":
        return
    path = urllib.parse.urlsplit(request.url or "").path
    token = None
    if any(method == request.method and pattern.match(path) for method, pattern in ADMIN_ONLY):
        token = ADMIN_TOKEN
    elif request.method == "POST" and path == "/customers":
        token = _registration_token(request)
    if token is not None:
        request.headers["Authorization"] = f"Bearer {token}"


def _accounted_send(self: requests.Session, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
    if not (request.url or "").startswith(API_URL):
        return _send(self, request, **kwargs)
    _with_token(request)
    started = time.monotonic()
    before = LEDGER.before()
    sent = time.monotonic()
    try:
        response = _send(self, request, **kwargs)
    except Exception:
        LEDGER.quiescent = False
        raise
    LEDGER.after(request, response.status_code, before)
    if TRACE_FILE:
        _trace(request, response, wait_ms=(sent - started) * 1000, answer_ms=(time.monotonic() - sent) * 1000)
    return response


def _trace(request: requests.PreparedRequest, response: requests.Response, wait_ms: float, answer_ms: float) -> None:
    body = request.body.decode("utf-8", "replace") if isinstance(request.body, bytes) else request.body
    line = {
        "method": request.method,
        "url": request.url,
        "headers": {k: v for k, v in request.headers.items() if k.lower() in ("idempotency-key", "prefer", "content-type")},
        "body": (body or "")[:500],
        "status": response.status_code,
        "answer": response.text[:300],
        "writes": getattr(request, "fuzz_item_writes", None),
        "waitMs": round(wait_ms),
        "answerMs": round(answer_ms),
    }
    with open(TRACE_FILE, "a", encoding="utf-8") as trace:
        trace.write(json.dumps(line) + "\n")


requests.Session.send = _accounted_send  # type: ignore[method-assign]


@schemathesis.check
def client_error_wrote_nothing(ctx: Any, response: Any, case: Any) -> None:
    """A request answered 4xx (bad input, unknown id, conflict, throttled) changed no table."""
    if LEDGER.late_writes:
        late, LEDGER.late_writes = LEDGER.late_writes, []
        raise AssertionError("an earlier request wrote after its 4xx answer: " + "; ".join(late))
    if not 400 <= response.status_code < 500:
        return None
    request = response.request
    writes = getattr(request, "fuzz_item_writes", None)
    if writes is None:
        raise AssertionError("this request was not accounted for (it did not go through the wrapped send)")
    if writes and _remembered_refusal(request, response, writes):
        return None
    if writes:
        raise AssertionError(
            f"answered {response.status_code} but wrote DynamoDB items: {_described(writes)}"
        )
    return None


def _remembered_refusal(request: requests.PreparedRequest, response: Any, writes: dict[str, int]) -> bool:
    """The remembered refusal of a keyed POST, and no other write (see the module's docstring)."""
    if request.method != "POST" or not request.headers.get("Idempotency-Key"):
        return False
    if response.status_code not in REMEMBERED_REFUSALS:
        return False
    try:
        code = json.loads(response.content)["error"]["code"]
    except (ValueError, KeyError, TypeError):
        return False
    if code == "IDEMPOTENCY_KEY_REUSED":
        return False
    refused_creation = len(writes) == 1 and all(
        EVENTS_TABLE.match(table) and count == 1 for table, count in writes.items()
    )
    return refused_creation or all(IDEMPOTENCY_TABLE.match(table) for table in writes)


def _names_others_record(request: requests.PreparedRequest) -> str | None:
    """The id of another customer's record the request names, in its path or its body's customerId."""
    path = urllib.parse.urlsplit(request.url or "").path
    for segment in path.split("/"):
        if urllib.parse.unquote(segment) in OTHERS_IDS:
            return urllib.parse.unquote(segment)
    if request.method == "POST" and path == "/orders" and request.body:
        try:
            customer = json.loads(request.body).get("customerId")
        except (ValueError, AttributeError):
            return None
        # A generated body may carry any JSON there (an object is unhashable): only a string names a record.
        if isinstance(customer, str) and customer in OTHERS_IDS:
            return customer
    return None


@schemathesis.check
def others_records_not_found(ctx: Any, response: Any, case: Any) -> None:
    """
    A shop caller naming another customer's record is answered as for an
    unknown id (api.md, "Identity and access"): a read 404, and never a 2xx.
    A request refused before the record is looked up (400 bad input, 429)
    says nothing about it and passes.
    """
    request = response.request
    if request.headers.get("Authorization") != f"Bearer {SHOP_TOKEN}":
        return None
    other = _names_others_record(request)
    if other is None:
        return None
    status = response.status_code
    if 200 <= status < 300:
        raise AssertionError(f"another customer's record {other} answered {status} to a shop caller")
    if request.method == "GET" and status not in (404, 429):
        raise AssertionError(f"another customer's record {other} answered {status}, not 404 as an unknown id")
    return None


def _valid_id(value: Any) -> bool:
    """
    Whether a generated id is valid as the document says ids are (1 to 128
    characters): only such a value is swapped for a real id, so a case
    Schemathesis generated invalid on purpose stays invalid (swapping an empty
    id for a real one made its negative-data check see a valid order accepted).
    """
    return isinstance(value, str) and 1 <= len(value) <= 128


def _with_real_ids(generated: Any, name: str) -> Any:
    """
    The generated value or one of the seeded ids for `name` (the caller's own or
    another customer's), chosen by Hypothesis (so a seed replays it).
    """
    ids = [*FIXTURES.get(name, []), *OTHERS.get(name, [])]
    if not ids or not _valid_id(generated):
        return st.just(generated)
    return st.sampled_from([generated, *ids])


@schemathesis.hook
def flatmap_path_parameters(ctx: Any, path_parameters: Any) -> Any:
    if not isinstance(path_parameters, dict) or not path_parameters:
        return st.just(path_parameters)
    return st.fixed_dictionaries({name: _with_real_ids(value, name) for name, value in path_parameters.items()})


@schemathesis.hook
def flatmap_body(ctx: Any, body: Any) -> Any:
    """Real customer and product ids in a body that names them (POST /orders), kept as generated otherwise."""
    if not isinstance(body, dict):
        return st.just(body)
    strategies = {key: st.just(value) for key, value in body.items()}
    if isinstance(body.get("customerId"), str):
        strategies["customerId"] = _with_real_ids(body["customerId"], "customerId")
    items = body.get("items")
    products = FIXTURES.get("productId", [])
    if products and isinstance(items, list) and all(isinstance(i, dict) and isinstance(i.get("productId"), str) for i in items):
        # Each real product at most once: an order names distinct products, which JSON Schema cannot say.
        strategies["items"] = st.tuples(
            st.permutations(products), st.lists(st.booleans(), min_size=len(items), max_size=len(items))
        ).map(
            lambda drawn: [
                {**item, "productId": drawn[0][n]}
                if drawn[1][n] and n < len(products) and _valid_id(item["productId"])
                else item
                for n, item in enumerate(items)
            ]
        )
    return st.fixed_dictionaries(strategies)


@schemathesis.hook
def flatmap_headers(ctx: Any, headers: Any) -> Any:
    """
    A valid Idempotency-Key as generated or a fresh one: the generator repeats
    its favourite keys ("0", the document's example), and a reused key answers
    409 IDEMPOTENCY_KEY_REUSED before the command runs, so without fresh keys
    few POSTs would reach their commands.
    """
    if not isinstance(headers, dict):
        return st.just(headers)
    key = headers.get("Idempotency-Key")
    if not isinstance(key, str) or not 1 <= len(key) <= 128:
        return st.just(headers)
    return st.sampled_from([key, None]).map(
        lambda chosen: {**headers, "Idempotency-Key": chosen or f"fuzz-{uuid.uuid4()}"}
    )
