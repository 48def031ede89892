"""Issue 18, item 7: the key shapes the backstop did not know (compared with
detect-secrets on key types placed in free text), each anchored on fixed text; and a
password in any URL found in text, which ``mask()`` replaced but the scan did not
flag, so ``save()`` wrote it.

Each key is placed where a provider puts free text — an assistant message, an error
body, an SSE delta — and must stop the write, be named by kind, and be masked
whole. The project's real recordings must still scan clean (no false positive).
"""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

import pytest

from pytest_agentreplay.cassettes.cassette import Cassette
from pytest_agentreplay.cassettes.io import save
from pytest_agentreplay.redact import Scrubber, SecretLeakError
from tests.redact._helpers import interaction, response

_RNG = random.Random(20261201)
ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
ROOT = Path(__file__).resolve().parents[2]


def _r(n: int, alphabet: str = ALNUM) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n - 1)) + _RNG.choice("0123456789")


KEYS = {
    "gitlab-token": "glpat-" + _r(20, ALNUM + "_-"),
    "gitlab-pipeline-token": "glptt-" + _r(40, HEX),
    "gitlab-runner-token": "GR1348941" + _r(20, ALNUM + "_-"),
    "npm-token": "npm_" + _r(36),
    "pypi-token": "pypi-AgEIcHlwaS5vcmc" + _r(70, ALNUM + "_-"),
    "sendgrid-key": "SG." + _r(22, ALNUM + "_-") + "." + _r(43, ALNUM + "_-"),
    "slack-webhook": "https://hooks.slack.com/services/T0" + _r(8) + "/B0" + _r(8) + "/" + _r(24),
    "square-secret": "sq0csp-" + _r(43, ALNUM + "_-"),
    "square-token": "sq0atp-" + _r(22, ALNUM + "_-"),
    "twilio-key": "SK" + _r(32, HEX),
    "replicate-token": "r8_" + _r(37),
    "databricks-token": "dapi" + _r(32, HEX),
    "azure-storage-key": "AccountKey=" + _r(86, B64) + "==",
    "telegram-bot-token": f"{_RNG.randrange(10**8, 10**10)}:AA" + _r(33, ALNUM + "_-"),
    "mailchimp-key": _r(32, HEX) + "-us21",
    "discord-bot-token": "MT" + _r(24, ALNUM) + "." + _r(6, ALNUM) + "." + _r(38, ALNUM + "_-"),
    "aws-secret-access-key": "aws_secret_access_key = " + _r(40, B64),
    "aws-secret-in-json": '"SecretAccessKey": "' + _r(40, B64) + '"',
    "url-password": "postgres://admin:Hu" + _r(12) + "@db.internal:5432/app",
}
SECRET_PART = {  # the part of each sample that is the secret, when not all of it is
    "azure-storage-key": lambda k: k.removeprefix("AccountKey="),
    "aws-secret-access-key": lambda k: k.rpartition(" ")[2],
    "aws-secret-in-json": lambda k: k.split('"')[3],
    "url-password": lambda k: k.split(":")[2].split("@")[0],
    "slack-webhook": lambda k: k.removeprefix("https://hooks.slack.com/services/"),
}


def _secret(name: str) -> str:
    return SECRET_PART.get(name, lambda k: k)(KEYS[name])


def _places(text: str) -> dict[str, Cassette]:
    """``text`` where providers put free text: an assistant message, an error body, a
    stream's delta."""
    message = {"role": "assistant", "content": f"Use {text} for that."}
    delta = json.dumps({"type": "content_block_delta", "delta": {"text": f"set {text}\n"}})
    return {
        "message": Cassette(interactions=[interaction(resp=response(json_body=message))]),
        "error": Cassette(
            interactions=[interaction(resp=response(status=401, body=f"bad key: {text}"))]
        ),
        "delta": Cassette(interactions=[interaction(resp=response(events=[delta]))]),
    }


@pytest.mark.parametrize("name", sorted(KEYS))
@pytest.mark.parametrize("place", ["message", "error", "delta"])
def test_each_missing_shape_stops_the_write(name: str, place: str, tmp_path: Path) -> None:
    target = tmp_path / "c.yaml"
    with pytest.raises(SecretLeakError) as leak:
        save(target, _places(KEYS[name])[place], scrubber=Scrubber(env={}))
    assert not target.exists()
    assert _secret(name) not in str(leak.value)


@pytest.mark.parametrize("name", sorted(KEYS))
def test_each_missing_shape_is_masked_whole(name: str) -> None:
    secret = _secret(name)
    masked = Scrubber(env={}).mask(f"error: {KEYS[name]} was rejected")
    assert not [secret[n : n + 6] for n in range(len(secret) - 5) if secret[n : n + 6] in masked]
    assert "REDACTED" in masked


@pytest.mark.parametrize(
    "text",
    [
        "postgres://user:REDACTED@db/app",
        "redis://:password@localhost:6379",
        "https://user:${DB_PASSWORD}@db.example/x",
        "see https://example.com/a:b@c",  # no userinfo: a path with ':' and '@'
        "en-us21 and a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8-us21",  # not 32 hex then -usNN
        "SKILL" + "0" * 40,
    ],
)
def test_look_alikes_are_not_keys(text: str) -> None:
    assert Scrubber(env={}).scan(text) == []


def _recordings() -> list[Path]:
    roots = [ROOT / "tests" / "corpus" / "real", ROOT / "cassettes", ROOT / "examples"]
    suffixes = {".yaml", ".yml", ".json", ".jsonl", ".sse", ".txt"}
    return sorted(p for r in roots for p in r.rglob("*") if p.is_file() and p.suffix in suffixes)


def test_the_projects_real_recordings_scan_clean() -> None:
    found = {str(p.relative_to(ROOT)): Scrubber(env={}).scan(p.read_text()) for p in _recordings()}
    assert len(found) > 80
    assert {path: hits for path, hits in found.items() if hits} == {}
