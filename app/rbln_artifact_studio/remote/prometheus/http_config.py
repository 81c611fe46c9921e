"""promtool's `--http.config.file` (Prometheus' HTTP client configuration) read into what one request needs:
basic auth, an Authorization header (a bearer token), and TLS settings."""

from __future__ import annotations

import base64
import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.shown import register_secret

FORMAT = "promtool's --http.config.file format"
# Keys of Prometheus' HTTP client configuration the studio does not act on: refused by name rather than ignored,
# so a request never goes out without what the file asks for (a proxy, OAuth 2).
UNSUPPORTED = ("oauth2", "proxy_url", "no_proxy", "proxy_from_environment", "proxy_connect_header", "http_headers")
IGNORED = ("follow_redirects", "enable_http2")  # how to talk, not what to send: the studio's own way is used
TOP = ("basic_auth", "authorization", "bearer_token", "bearer_token_file", "tls_config", *UNSUPPORTED, *IGNORED)
BASIC = ("username", "username_file", "password", "password_file")
AUTHORIZATION = ("type", "credentials", "credentials_file")
TLS = ("ca", "ca_file", "cert", "cert_file", "key", "key_file", "server_name", "insecure_skip_verify")
TLS_IGNORED = ("min_version", "max_version")


@dataclass(frozen=True)
class HttpConfig:
    """What to send with each request and how to check the server; `repr` shows no secret."""

    username: str | None = None
    password: str | None = None
    auth_type: str | None = None  # the Authorization header's scheme ("Bearer" unless the file says otherwise)
    credentials: str | None = None
    ca_file: Path | None = None
    ca_data: str | None = None
    cert_file: Path | None = None
    key_file: Path | None = None
    server_name: str | None = None
    insecure_skip_verify: bool = False
    origin: str = ""  # the file it came from, for error messages

    def __repr__(self) -> str:
        auth = "basic" if self.username is not None else (self.auth_type or "none")
        return f"HttpConfig(auth={auth}, ca_file={self.ca_file}, insecure_skip_verify={self.insecure_skip_verify})"

    @property
    def has_auth(self) -> bool:
        return self.username is not None or self.credentials is not None

    def headers(self) -> dict[str, str]:
        """The Authorization header this configuration asks for (none without credentials)."""
        if self.username is not None:
            pair = f"{self.username}:{self.password or ''}".encode()
            return {"Authorization": "Basic " + base64.b64encode(pair).decode("ascii")}
        if self.credentials is not None:
            return {"Authorization": f"{self.auth_type or 'Bearer'} {self.credentials}"}
        return {}

    def ssl_context(self) -> ssl.SSLContext:
        """The TLS context for https URLs: the system's CAs unless ca_file / ca is given, a client certificate
        when cert_file and key_file are."""
        where = self.origin or "the HTTP config"
        try:
            context = ssl.create_default_context(
                cafile=str(self.ca_file) if self.ca_file else None, cadata=self.ca_data or None
            )
            if self.cert_file is not None and self.key_file is not None:
                context.load_cert_chain(str(self.cert_file), str(self.key_file))
        except (OSError, ssl.SSLError) as exc:
            raise StudioError(
                f"{where}: its tls_config cannot be used: {exc}.",
                hint="ca_file, cert_file and key_file must name PEM files this account can read.",
            ) from None
        if self.insecure_skip_verify:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        return context


def _section(
    data: Any, key: str, allowed: tuple[str, ...], where: str, ignored: tuple[str, ...] = ()
) -> dict[str, Any]:
    value = data.get(key) if isinstance(data, dict) else None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise StudioError(f"{where}: {key} must be a mapping of settings, not {type(value).__name__}.")
    for name in value:
        if name not in allowed and name not in ignored:
            raise StudioError(
                f"{where}: {key}.{name} is not a setting of {FORMAT}.",
                hint=f"{key} takes: {', '.join(allowed)}.",
            )
    return value


def _text(section: dict[str, Any], key: str, where: str) -> str | None:
    value = section.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise StudioError(f"{where}: {key} must be text, not {type(value).__name__}.")
    return str(value)


def _path(section: dict[str, Any], key: str, where: str, base: Path) -> Path | None:
    value = _text(section, key, where)
    if value is None or not value:
        return None
    path = Path(value).expanduser()
    return path if path.is_absolute() else base / path  # as Prometheus: relative to the file's own folder


def _secret(section: dict[str, Any], key: str, where: str, base: Path, name: str, hidden: bool = True) -> str | None:
    """`key` given inline or read from `key_file` (whitespace around it dropped, as Prometheus does)."""
    inline, path = _text(section, key, where), _path(section, f"{key}_file", where, base)
    if inline is not None and path is not None:
        raise StudioError(f"{where}: {name} sets both {key} and {key}_file; give one of them.")
    if path is None:
        return _one_line(inline, f"{where}: {name}.{key}", hidden)
    try:
        value = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise StudioError(
            f"{where}: {name}.{key}_file {path} cannot be read: {reason}.",
            hint="Relative paths are taken from the config file's own folder.",
        ) from None
    return _one_line(value, f"{where}: {name}.{key}_file {path}", hidden)


def _one_line(value: str | None, what: str, hidden: bool) -> str | None:
    """A value as it may go into a header: one line without control characters. A hidden one (a password, a
    token) is registered (never shown by any message) before it is checked; the message names where it is,
    never what it holds."""
    if value is None:
        return None
    if hidden:
        register_secret(value)
    lines = len(value.splitlines())
    if lines > 1:
        raise StudioError(
            f"{what} holds {lines} lines; a credential is one line.",
            hint="Keep the token or password alone in it, on one line.",
        )
    if not value.isprintable():
        raise StudioError(f"{what} holds a control character; a credential is printable text on one line.")
    return value


def parse_http_config(data: Any, where: str, base: Path) -> HttpConfig:
    """A parsed YAML document as an HttpConfig; StudioError naming the setting that is wrong or unsupported."""
    if data is None:
        return HttpConfig(origin=where)
    if not isinstance(data, dict):
        raise StudioError(f"{where} is not a mapping of settings ({FORMAT}).")
    for name in data:
        if name not in TOP:
            raise StudioError(
                f"{where}: {name} is not a setting of {FORMAT}.",
                hint="It takes basic_auth, authorization and tls_config (see docs/servers.md).",
            )
    for name in UNSUPPORTED:
        if data.get(name) not in (None, "", [], {}):
            raise StudioError(
                f"{where}: {name} is not supported by the studio.",
                hint="Use basic_auth, authorization (a bearer token) and tls_config; reach Prometheus directly.",
            )
    basic = _section(data, "basic_auth", BASIC, where)
    auth = _section(data, "authorization", AUTHORIZATION, where)
    tls = _section(data, "tls_config", TLS, where, TLS_IGNORED)
    bearer = _secret(data, "bearer_token", where, base, "the file")  # the older spelling of authorization
    if sum(bool(s) for s in (basic, auth, bearer)) > 1:
        raise StudioError(
            f"{where}: give one of basic_auth and authorization (bearer_token), not several.",
            hint="Prometheus' own clients refuse this file too.",
        )
    config: dict[str, Any] = {"origin": where}
    if basic:
        username = _secret(basic, "username", where, base, "basic_auth", hidden=False)
        if not username:
            raise StudioError(f"{where}: basic_auth has no username.")
        config.update(username=username, password=_secret(basic, "password", where, base, "basic_auth") or "")
    if auth:
        kind = _text(auth, "type", where) or "Bearer"
        if kind.lower() == "basic":
            raise StudioError(f"{where}: authorization.type cannot be Basic; use basic_auth instead.")
        credentials = _secret(auth, "credentials", where, base, "authorization")
        if not credentials:
            raise StudioError(f"{where}: authorization has no credentials (or credentials_file).")
        config.update(auth_type=kind, credentials=credentials)
    if bearer:
        config.update(auth_type="Bearer", credentials=bearer)
    if tls:
        skip = tls.get("insecure_skip_verify", False)
        if not isinstance(skip, bool):
            raise StudioError(f"{where}: tls_config.insecure_skip_verify must be true or false.")
        cert, key = _path(tls, "cert_file", where, base), _path(tls, "key_file", where, base)
        if (cert is None) != (key is None):
            raise StudioError(f"{where}: tls_config needs both cert_file and key_file for a client certificate.")
        if tls.get("cert") or tls.get("key"):
            raise StudioError(f"{where}: tls_config.cert and .key inline are not supported; use cert_file, key_file.")
        config.update(
            ca_file=_path(tls, "ca_file", where, base),
            ca_data=_text(tls, "ca", where),
            cert_file=cert,
            key_file=key,
            server_name=_text(tls, "server_name", where),
            insecure_skip_verify=skip,
        )
    return HttpConfig(**config)


def load_http_config(path: str | Path) -> HttpConfig:
    """Read FILE (promtool's --http.config.file YAML); StudioError saying what to fix when it cannot be used."""
    # deferred: PyYAML (~14 ms), read only for a --http.config.file; a Prometheus without one never loads it
    import yaml

    file = Path(path).expanduser()
    where = str(file)
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise StudioError(f"The HTTP config {where} cannot be read: {reason}.") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" (line {mark.line + 1})" if mark is not None else ""
        raise StudioError(f"The HTTP config {where} is not YAML{line}.", hint=f"It takes {FORMAT}.") from None
    return parse_http_config(data, where, file.resolve().parent)
