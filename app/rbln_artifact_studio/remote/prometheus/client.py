"""Prometheus' HTTP API (`/api/v1/query`, `/api/v1/query_range`) under one deadline for the whole operation,
with the credentials of a promtool HTTP config; every failure a StudioError saying what to do, and no URL
ever shown with the credentials it may carry (user:password@)."""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import ssl
import threading
import time
import zlib
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote, urlencode, urlsplit

from pydantic_core import from_json

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.shown import line_shown, register_secret
from rbln_artifact_studio.remote.prometheus.http_config import HttpConfig

DEFAULT_TIMEOUT = 60.0
MAX_BODY = 1 << 30  # a whole fleet's answer is tens of MiB; beyond this it is not an answer to our query
CHUNK = 1 << 20
CONFIG_HINT = "Give its credentials with --prometheus-http-config FILE (basic_auth or authorization, in promtool's "
CONFIG_HINT += "--http.config.file format)."


class PrometheusError(StudioError):
    """Prometheus could not be asked, or refused: the message names the URL (without credentials) and what to do."""


class Deadline:
    """One limit for a whole operation: each step gets what is left of it, not a fresh allowance."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + max(seconds, 0.0)

    def remaining(self) -> float:
        return max(self.end - time.monotonic(), 0.0)

    @property
    def expired(self) -> bool:
        return self.remaining() <= 0.0


@dataclass(frozen=True)
class Endpoint:
    """A Prometheus base URL split into what a connection needs; `shown` is the URL without credentials."""

    scheme: str
    host: str
    port: int
    path: str  # the route prefix, without a trailing slash ("" or "/prometheus")
    username: str | None
    password: str | None

    @property
    def shown(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.scheme == "https" else 80
        port = "" if self.port == default else f":{self.port}"
        return f"{self.scheme}://{host}{port}{self.path}"


def redact(url: str) -> str:
    """The URL with any user:password@ dropped (for anything shown: rows, errors, logs)."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return "the Prometheus URL given"
    netloc = parts.netloc.rpartition("@")[2]
    return parts._replace(netloc=netloc).geturl() if parts.scheme else url.rpartition("@")[2]


def parse_endpoint(url: str) -> Endpoint:
    """http(s)://[user:password@]HOST[:PORT][/PREFIX]; StudioError (with the URL redacted) for anything else."""
    text = url.strip()
    if "://" not in text:
        text = "http://" + text  # `prom:9090`, as promtool takes a bare host too
    shown = redact(text)
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        raise PrometheusError(
            f"{shown} is not a Prometheus URL.", hint="Give http(s)://HOST[:PORT], e.g. http://prometheus:9090."
        ) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise PrometheusError(
            f"{shown} is not a Prometheus URL.", hint="Give http(s)://HOST[:PORT], e.g. http://prometheus:9090."
        )
    if parts.query or parts.fragment:
        raise PrometheusError(
            f"{shown}: give Prometheus' base URL without ?query or #fragment.",
            hint="Narrow the series with --match instead.",
        )
    return Endpoint(
        parts.scheme,
        parts.hostname,
        port or (443 if parts.scheme == "https" else 80),
        parts.path.rstrip("/"),
        unquote(parts.username) if parts.username is not None else None,
        _secret(unquote(parts.password)) if parts.password is not None else None,
    )


def _secret(value: str) -> str:
    register_secret(value)  # a password in the URL: redacted from whatever is shown after this
    return value


class _Https(http.client.HTTPSConnection):
    """An HTTPS connection whose certificate is checked against tls_config.server_name when one is given."""

    def __init__(self, host: str, port: int, timeout: float, context: ssl.SSLContext, server_name: str | None):
        super().__init__(host, port, timeout=timeout, context=context)
        self._context = context
        self._server_name = server_name

    def connect(self) -> None:
        http.client.HTTPConnection.connect(self)
        self.sock = self._context.wrap_socket(self.sock, server_hostname=self._server_name or self.host)


@dataclass(frozen=True)
class _Answer:
    status: int
    reason: str
    content_type: str
    body: bytes
    location: str = ""  # a redirect's Location header


class PrometheusClient:
    """One Prometheus server: instant and range queries, each request within what is left of the caller's Deadline."""

    def __init__(self, url: str, http_config: HttpConfig | None = None) -> None:
        self.endpoint = parse_endpoint(url)
        self.config = http_config or HttpConfig()
        self.url = self.endpoint.shown

    def _headers(self) -> dict[str, str]:
        # gzip: a thousand nodes' answer is ~13 MB of JSON, ~1 MB compressed, for a Prometheus across a network.
        headers = {"Accept": "application/json", "Accept-Encoding": "gzip", "User-Agent": "rbln-studio"}
        if self.config.has_auth:
            headers.update(self.config.headers())
        elif self.endpoint.username is not None:  # user:password@ in the URL, as Prometheus' clients take it
            headers.update(HttpConfig(username=self.endpoint.username, password=self.endpoint.password).headers())
        if "Authorization" in headers:
            register_secret(headers["Authorization"].partition(" ")[2])  # no message ever shows it, whatever fails
        return headers

    def _connection(self, timeout: float) -> http.client.HTTPConnection:
        e = self.endpoint
        if e.scheme == "https":
            return _Https(e.host, e.port, timeout, self.config.ssl_context(), self.config.server_name)
        return http.client.HTTPConnection(e.host, e.port, timeout=timeout)

    def _fetch(self, target: str, deadline: Deadline) -> _Answer:
        """GET target; the socket's own timeouts end a stalled read, and the deadline ends the whole request
        even when the server trickles bytes (its socket is shut down from here)."""
        if deadline.expired:
            raise self._late(deadline)
        conn = self._connection(deadline.remaining())
        box: dict[str, Any] = {}
        done = threading.Event()

        def work() -> None:
            try:
                conn.request("GET", target, headers=self._headers())
                response = conn.getresponse()
                chunks, size = [], 0
                while True:
                    if conn.sock is not None:
                        conn.sock.settimeout(max(deadline.remaining(), 0.001))
                    chunk = response.read(CHUNK)
                    if not chunk:
                        break
                    size += len(chunk)
                    if size > MAX_BODY:
                        raise PrometheusError(f"{self.url} answered more than {MAX_BODY >> 20} MiB for one query.")
                    chunks.append(chunk)
                body = b"".join(chunks)
                if (response.getheader("Content-Encoding") or "").lower() == "gzip":
                    body = self._gunzip(body)
                box["answer"] = _Answer(
                    response.status,
                    response.reason,
                    response.getheader("Content-Type") or "",
                    body,
                    response.getheader("Location") or "",
                )
            except BaseException as exc:  # handed to the caller's thread, which says what it means
                box["error"] = exc
            finally:
                done.set()

        threading.Thread(target=work, name="prometheus-request", daemon=True).start()
        try:
            if not done.wait(deadline.remaining()):
                raise self._late(deadline)
        finally:
            if not done.is_set():
                self._abort(conn)
            else:
                conn.close()
        if "error" in box:
            raise self._failure(box["error"], deadline)
        answer: _Answer = box["answer"]
        return answer

    def _gunzip(self, body: bytes) -> bytes:
        inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)  # the gzip wrapper
        try:
            out = inflate.decompress(body, MAX_BODY)
        except zlib.error:
            raise PrometheusError(
                f"{self.url} answered with a gzip body that does not decompress.",
                hint="A proxy in between may have cut it short; try again, or give Prometheus' own address.",
            ) from None
        if inflate.unconsumed_tail:
            raise PrometheusError(f"{self.url} answered more than {MAX_BODY >> 20} MiB for one query.")
        return out

    @staticmethod
    def _abort(conn: http.client.HTTPConnection) -> None:
        sock = conn.sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)  # wakes the worker's blocked read; close() alone may not
        conn.close()

    def _late(self, deadline: Deadline) -> PrometheusError:
        return PrometheusError(
            f"Prometheus at {self.url} did not answer within {deadline.seconds:g} s.",
            hint="Check the URL (is something there that never answers?), or give it longer with --timeout SECONDS.",
        )

    def _failure(self, exc: BaseException, deadline: Deadline) -> StudioError:
        if isinstance(exc, StudioError):
            return exc
        if isinstance(exc, (socket.timeout, TimeoutError)) or deadline.expired:
            return self._late(deadline)
        if isinstance(exc, ssl.SSLCertVerificationError):
            return PrometheusError(
                f"Prometheus at {self.url}: its certificate is not trusted ({exc.verify_message}).",
                hint="Give its CA with tls_config.ca_file in --prometheus-http-config FILE.",
            )
        if isinstance(exc, ssl.SSLError):
            return PrometheusError(
                f"Prometheus at {self.url}: TLS failed ({exc.reason or exc}).",
                hint="Check the scheme (http or https) and the tls_config of --prometheus-http-config.",
            )
        if isinstance(exc, http.client.HTTPException):
            return PrometheusError(
                f"{self.url} is not a Prometheus: it did not answer HTTP ({type(exc).__name__}).",
                hint="Give the address of Prometheus' web UI and API, e.g. http://HOST:9090.",
            )
        if isinstance(exc, OSError):
            reason = exc.strerror or str(exc) or type(exc).__name__
            if isinstance(exc, socket.gaierror):
                reason = f"its host name does not resolve ({reason})"
            return PrometheusError(
                f"Cannot reach Prometheus at {self.url}: {reason}.",
                hint="Check the URL's host and port, and that Prometheus runs there and this machine may reach it.",
            )
        return PrometheusError(f"Asking Prometheus at {self.url} failed: {type(exc).__name__}: {line_shown(str(exc))}")

    def get(self, api: str, params: dict[str, str], deadline: Deadline) -> Any:
        """`data` of a successful API answer; PrometheusError for every other outcome, saying what to do."""
        target = quote(self.endpoint.path + api) + "?" + urlencode(params)
        answer = self._fetch(target, deadline)
        where = f"{self.url}{api}"
        if answer.status in (401, 403):
            denied = "refused the credentials given" if self._headers().get("Authorization") else "asks for credentials"
            hint = CONFIG_HINT if answer.status == 401 else "The account given may not query; ask for one that may."
            return self._raise(f"Prometheus at {self.url} {denied} ({answer.status} {answer.reason}).", hint)
        if 300 <= answer.status < 400:  # not followed: the credentials would go wherever it points
            where_to = line_shown(redact(answer.location)) if answer.location else "no Location given"
            return self._raise(
                f"Prometheus at {self.url} answered {answer.status} {answer.reason}, a redirect to {where_to}.",
                "Give the URL it redirects to with --prometheus (the studio does not follow redirects, so "
                "credentials never go where a redirect points).",
            )
        data = self._json(answer)
        if data is None and answer.status == 503:
            return self._raise(
                f"Prometheus at {self.url} is not ready ({answer.status} {answer.reason}).",
                "It may be starting or replaying its write-ahead log (or a proxy's backend is down): try again soon.",
            )
        if data is None or not isinstance(data, dict) or data.get("status") not in ("success", "error"):
            kind = "an HTML page" if "html" in answer.content_type.lower() else (answer.content_type or "no JSON")
            return self._raise(
                f"{self.url} is not a Prometheus: {where} answered {answer.status} {answer.reason} ({kind}).",
                "Give the address Prometheus' API is on (e.g. http://HOST:9090), with its route prefix if it has "
                "one (e.g. http://HOST/prometheus).",
            )
        if data["status"] == "error":
            error_type, error = data.get("errorType", "error"), data.get("error", "no reason given")
            hint = 'Check --match: it takes label matchers such as hostname=~"node-.*",job="rbln".'
            if error_type in ("timeout", "canceled"):
                hint = "Narrow the series with --match, or shorten --window."
            return self._raise(f"Prometheus at {self.url} refused the query: {error_type}: {error}", hint)
        return data.get("data")

    @staticmethod
    def _raise(message: str, hint: str) -> Any:
        raise PrometheusError(message, hint=hint)

    @staticmethod
    def _json(answer: _Answer) -> Any:
        if not answer.body.lstrip().startswith(b"{"):
            return None
        # pydantic_core's parser (a dependency already) reads a fleet's 40,000 series in half json's time, the
        # more so as it keeps one copy of each repeated label value; json reads what it will not (e.g. UTF-16).
        try:
            return from_json(answer.body, cache_strings="all")
        except ValueError:
            pass
        try:
            return json.loads(answer.body)
        except ValueError:
            return None

    def query(self, promql: str, at: float, deadline: Deadline) -> list[dict[str, Any]]:
        """An instant query's vector at `at` (Unix seconds): each series as {"metric": labels, "value": [t, v]}."""
        data = self.get("/api/v1/query", {"query": promql, "time": f"{at:.3f}"}, deadline)
        return self._result(data, "vector")

    def query_range(
        self, promql: str, start: float, end: float, step: float, deadline: Deadline
    ) -> list[dict[str, Any]]:
        """A range query's matrix: each series as {"metric": labels, "values": [[t, v], ...]}."""
        params = {"query": promql, "start": f"{start:.3f}", "end": f"{end:.3f}", "step": f"{step:g}"}
        return self._result(self.get("/api/v1/query_range", params, deadline), "matrix")

    def _result(self, data: Any, kind: str) -> list[dict[str, Any]]:
        if not isinstance(data, dict) or data.get("resultType") != kind or not isinstance(data.get("result"), list):
            raise PrometheusError(
                f"{self.url} answered the query without a {kind}: is it a Prometheus?",
                hint="Give the address of Prometheus itself, e.g. http://HOST:9090.",
            )
        result: list[dict[str, Any]] = data["result"]
        return result
