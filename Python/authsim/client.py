"""A typed client for the inspector's JSON API (``authsim serve``'s ``/api/v1``).

Standard library only (``urllib``), so that it adds nothing to a test environment. Every call
raises :class:`AuthsimAPIError` with the API's own message when the answer is not 2xx.

    client = AuthsimClient("http://127.0.0.1:4000/api/v1")
    push = client.wait_for_push(token=device_token, timeout=10)
    assert push.status == 200 and push.push_type == "background"
"""

from __future__ import annotations

import http.client
import json
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

__all__ = ["AuthsimAPIError", "AuthsimClient", "Device", "Email", "Push", "SMS", "User"]


class AuthsimAPIError(Exception):
    """An answer that was not 2xx, with the API's message, or no answer at all."""

    def __init__(self, status: Optional[int], message: str, url: str):
        super().__init__(f"{url}: {status if status is not None else 'no answer'}: {message}")
        self.status = status
        self.message = message
        self.url = url


@dataclass(frozen=True)
class Push:
    """One request push-receiver answered (``components/schemas/Push`` of the OpenAPI document)."""

    id: int
    time: str
    environment: str
    apns_id: str
    device_token: str
    status: int
    topic: Optional[str]
    push_type: Optional[str]
    priority: Optional[int]
    reason: Optional[str]
    detail: Optional[str]
    payload: str
    injected: bool
    dropped: bool
    raw: dict = field(repr=False, compare=False)

    @property
    def accepted(self) -> bool:
        return self.status == 200

    def payload_json(self) -> Any:
        """The payload, parsed."""
        return json.loads(self.payload)

    @classmethod
    def from_json(cls, d: dict) -> "Push":
        return cls(id=d["id"], time=d["time"], environment=d["environment"], apns_id=d["apnsID"],
                   device_token=d["deviceToken"], status=d["status"], topic=d.get("topic"),
                   push_type=d.get("pushType"), priority=d.get("priority"), reason=d.get("reason"),
                   detail=d.get("detail"), payload=d.get("payload", ""), injected=d.get("injected", False),
                   dropped=d.get("dropped", False), raw=d)


@dataclass(frozen=True)
class Device:
    token: str
    environment: str
    bundle_id: str
    state: str
    label: Optional[str] = None

    @classmethod
    def from_json(cls, d: dict) -> "Device":
        return cls(token=d["token"], environment=d["environment"], bundle_id=d["bundleID"], state=d["state"],
                   label=d.get("label"))


@dataclass(frozen=True)
class SMS:
    phone_number: str
    code: str
    session_info: Optional[str]
    language_code: Optional[str]
    text: Optional[str]
    sent_at: Optional[str]

    @classmethod
    def from_json(cls, d: dict) -> "SMS":
        return cls(phone_number=d.get("phoneNumber", ""), code=d.get("code", ""), session_info=d.get("sessionInfo"),
                   language_code=d.get("languageCode"), text=d.get("text"), sent_at=d.get("sentAt"))


@dataclass(frozen=True)
class Email:
    """An email the backend sent (``components/schemas/Email``): its single-use code and link."""

    email: str
    code: str
    request_type: str
    link: str
    sent_at: str
    used: bool
    new_email: Optional[str] = None

    @classmethod
    def from_json(cls, d: dict) -> "Email":
        return cls(email=d["email"], code=d["code"], request_type=d["requestType"], link=d["link"], sent_at=d["sentAt"],
                   used=bool(d["used"]), new_email=d.get("newEmail"))


@dataclass(frozen=True)
class User:
    """A user as Identity Toolkit answers it (``components/schemas/User``); ``raw`` has every field."""

    uid: str
    phone_number: Optional[str]
    email: Optional[str]
    disabled: bool
    display_name: Optional[str] = None
    custom_claims: dict = field(default_factory=dict)
    raw: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, d: dict) -> "User":
        claims = d.get("customAttributes")
        return cls(uid=d.get("uid") or d.get("localId", ""), phone_number=d.get("phoneNumber"), email=d.get("email"),
                   disabled=bool(d.get("disabled", False)), display_name=d.get("displayName"),
                   custom_claims=json.loads(claims) if claims else {}, raw=d)


# The Users screen's fields, as the API names them.
_USER_FIELDS = {"uid": "localId", "email": "email", "password": "password", "phone_number": "phoneNumber",
                "display_name": "displayName", "photo_url": "photoUrl", "email_verified": "emailVerified",
                "disabled": "disabled", "custom_claims": "customClaims"}


def _user_body(fields: dict) -> dict:
    unknown = sorted(set(fields) - set(_USER_FIELDS))
    if unknown:
        raise TypeError(f"unknown user field(s) {', '.join(unknown)}; fields: {', '.join(_USER_FIELDS)}")
    return {_USER_FIELDS[name]: value for name, value in fields.items()}


class AuthsimClient:
    """The inspector's API at ``api_url`` (``http://host:port/api/v1``)."""

    def __init__(self, api_url: str, timeout: float = 10.0):
        self.api_url = api_url.rstrip("/")
        self.timeout = timeout

    # -- pushes

    def pushes(self, token: Optional[str] = None, *, topic: Optional[str] = None, environment: Optional[str] = None,
               status: Optional[int] = None, reason: Optional[str] = None, since: Optional[str] = None,
               after: Optional[int] = None, limit: Optional[int] = None) -> list[Push]:
        """Pushes in view, oldest first, filtered as ``GET /api/v1/pushes`` filters."""
        query = _query(token=token, topic=topic, environment=environment, status=status, reason=reason, since=since,
                       after=after, limit=limit)
        return [Push.from_json(p) for p in self._request("GET", "/pushes" + query)]

    def rejections(self, token: Optional[str] = None, **filters: Any) -> list[Push]:
        """Pushes answered with an error status."""
        return [Push.from_json(p) for p in self._request("GET", "/rejections" + _query(token=token, **filters))]

    def clear_pushes(self) -> None:
        self._request("DELETE", "/pushes")

    def wait_for_push(self, token: Optional[str] = None, *, timeout: float = 10.0, topic: Optional[str] = None,
                      environment: Optional[str] = None, status: Optional[int] = None,
                      reason: Optional[str] = None, after: Optional[int] = None) -> Push:
        """The first push matching the filters: one already in view, or the next one to come.

        Listens to the live stream (``/api/v1/events``) before it looks at what is in view, so a
        push that arrives between the two is not missed. Raises :class:`TimeoutError` after
        ``timeout`` seconds, naming the filters and the pushes that did come.
        """
        filters = dict(token=token, topic=topic, environment=environment, status=status, reason=reason)
        deadline = time.monotonic() + timeout
        seen: list[Push] = []
        with self._events(timeout) as events:
            for push in self.pushes(after=after, **filters):
                return push
            for batch in events.batches(deadline):
                for push in batch:
                    if after is not None and push.id <= after:
                        continue
                    if _matches(push, filters):
                        return push
                    seen.append(push)
        wanted = ", ".join(f"{k}={v}" for k, v in filters.items() if v is not None) or "any"
        came = "; ".join(f"{p.device_token[:8]}… {p.status} {p.reason or ''}".strip() for p in seen[-5:]) or "none"
        raise TimeoutError(f"no push ({wanted}) within {timeout} s; other pushes that came: {came}")

    # -- faults

    def faults(self) -> list[str]:
        return self._request("GET", "/faults")["faults"]

    def set_fault(self, *faults: str) -> list[str]:
        """Replaces the fault rules (``push-receiver --fault`` syntax, e.g. ``reject=BadDeviceToken,count=1``)."""
        return self._request("PUT", "/faults", {"faults": list(faults)})["faults"]

    def clear_faults(self) -> None:
        self._request("DELETE", "/faults")

    # -- devices

    def devices(self) -> list[Device]:
        return [Device.from_json(d) for d in self._request("GET", "/devices")]

    def register_device(self, bundle_id: str, environment: str = "sandbox", token: Optional[str] = None,
                        label: Optional[str] = None) -> Device:
        """Registers a device token (a random one when ``token`` is None)."""
        body: dict[str, Any] = {"environment": environment, "bundleID": bundle_id}
        if token is not None:
            body["token"] = token
        if label is not None:
            body["label"] = label
        return Device.from_json(self._request("POST", "/devices", body))

    def invalidate_device(self, token: str, environment: str = "sandbox", as_: str = "unregistered") -> None:
        """From now on the token answers 410 ``Unregistered`` (or ``ExpiredToken`` with ``as_="expired"``)."""
        self._request("POST", f"/devices/{environment}/{token}/invalidate" + _query(**{"as": as_}))

    # -- the backend's

    def sms(self, phone_number: Optional[str] = None) -> list[SMS]:
        """Every SMS the backend sent, oldest first (only those to ``phone_number`` when given)."""
        messages = [SMS.from_json(m) for m in self._request("GET", "/sms")]
        return [m for m in messages if phone_number is None or m.phone_number == phone_number]

    def emails(self, email: Optional[str] = None, request_type: Optional[str] = None) -> list[Email]:
        """Every email the backend sent, oldest first (only those to ``email``, or of ``request_type``
        such as ``PASSWORD_RESET`` or ``VERIFY_EMAIL``, when given)."""
        sent = [Email.from_json(m) for m in self._request("GET", "/emails")]
        return [m for m in sent if (email is None or m.email == email.lower()) and (request_type is None or m.request_type == request_type)]

    def users(self, search: Optional[str] = None) -> list[User]:
        """Every user, in order of their IDs (those whose ID, email, phone number or display name
        contains ``search``, in any case, when given)."""
        return [User.from_json(u) for u in self._request("GET", "/users" + _query(q=search))]

    def add_user(self, **fields: Any) -> User:
        """Adds a user as the Users screen does: ``email``, ``password``, ``phone_number``,
        ``display_name``, ``photo_url``, ``email_verified``, ``disabled``, ``custom_claims`` (a dict),
        ``uid``. A taken email, number or ID raises with status 409."""
        return User.from_json(self._request("POST", "/users", _user_body(fields)))

    def update_user(self, uid: str, **fields: Any) -> User:
        """Changes only the fields given (as :meth:`add_user` names them); ``""`` removes a display
        name, photo URL or phone number, ``custom_claims={}`` the claims."""
        return User.from_json(self._request("PATCH", f"/users/{urllib.parse.quote(uid, safe='')}", _user_body(fields)))

    def delete_user(self, uid: str) -> None:
        self._request("DELETE", f"/users/{urllib.parse.quote(uid, safe='')}")

    def export_users(self) -> dict:
        """Every user as the Auth Emulator's ``accounts.json`` (``{"kind": …, "users": [...]}``)."""
        return self._request("GET", "/accounts.json")

    def import_users(self, accounts: dict, overwrite: bool = False) -> dict:
        """Imports an ``accounts.json`` whole or not at all; users whose IDs exist raise with status
        409 unless ``overwrite``. Answers ``{"imported": N, "replaced": M}``."""
        return self._request("POST", "/accounts.json" + _query(overwrite="true" if overwrite else None), accounts)

    # -- plumbing

    def _request(self, method: str, path: str, body: Any = None) -> Any:
        url = self.api_url + path
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(url, data=data, method=method,
                                         headers={"Content-Type": "application/json"} if data is not None else {})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                text = response.read()
        except urllib.error.HTTPError as error:
            raw = error.read()
            try:
                message = json.loads(raw)["error"]["message"]
            except (ValueError, KeyError, TypeError):
                message = raw.decode(errors="replace") or error.reason
            raise AuthsimAPIError(error.code, message, url) from None
        except (urllib.error.URLError, OSError) as error:
            raise AuthsimAPIError(None, str(getattr(error, "reason", error)), url) from None
        return json.loads(text) if text else None

    def _events(self, timeout: float) -> "_EventStream":
        return _EventStream(self.api_url + "/events", timeout)


class _EventStream:
    """``/api/v1/events``: ``event: pushes`` with ``{"pushes": [...], "skipped": N}``."""

    def __init__(self, url: str, timeout: float):
        self.url = url
        self.timeout = timeout
        self.connection: Optional[http.client.HTTPConnection] = None
        self.response: Optional[http.client.HTTPResponse] = None

    def __enter__(self) -> "_EventStream":
        parts = urllib.parse.urlsplit(self.url)
        try:
            self.connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=self.timeout)
            self.connection.request("GET", parts.path, headers={"Accept": "text/event-stream"})
            self.response = self.connection.getresponse()
        except OSError as error:
            raise AuthsimAPIError(None, str(error), self.url) from None
        if self.response.status != 200:
            raise AuthsimAPIError(self.response.status, self.response.read().decode(errors="replace"), self.url)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.connection is not None:
            self.connection.close()

    def batches(self, deadline: float) -> Iterator[list[Push]]:
        """Each event's pushes, until ``deadline`` (``time.monotonic()``) passes."""
        assert self.connection is not None and self.response is not None
        data: list[str] = []
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self.connection.sock is None:
                return
            # The socket's timeout bounds each read: a quiet stream ends the wait at the deadline.
            self.connection.sock.settimeout(remaining)
            try:
                line = self.response.readline()
            except (socket.timeout, TimeoutError):
                return
            if not line:
                return
            text = line.decode().rstrip("\r\n")
            if text.startswith("data:"):
                data.append(text[5:].lstrip())
            elif text == "" and data:
                payload = json.loads("\n".join(data))
                data = []
                yield [Push.from_json(p) for p in payload.get("pushes", [])]


def _query(**params: Any) -> str:
    pairs = [(k, str(v)) for k, v in params.items() if v is not None]
    return "?" + urllib.parse.urlencode(pairs) if pairs else ""


def _matches(push: Push, filters: dict) -> bool:
    token = filters.get("token")
    if token is not None and push.device_token.lower() != token.lower():
        return False
    for key, attribute in (("topic", "topic"), ("environment", "environment"), ("status", "status"), ("reason", "reason")):
        if filters.get(key) is not None and getattr(push, attribute) != filters[key]:
            return False
    return True
