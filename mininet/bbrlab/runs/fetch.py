"""`bbrlab fetch-data`: Mahimahi's LTE traces and ReBBR's published numbers, from their
public repositories at pinned commits, into the folders bbrlab reads them from
(schema/datasets.py: data/traces and data/reference in the checkout, or the folders
$BBRLAB_TRACES and $BBRLAB_REFERENCE name).

Every file's bytes are checked against the sha256 pinned in datasets.py before it is
written (whole, or not at all); a file bbrlab already reads with the right bytes is left as
it is, so a second fetch downloads nothing. The base URL ($BBRLAB_DATA_URL, or --from) may be
any with the same layout, BASE/OWNER/REPO/COMMIT/PATH: a mirror, or a file:// folder.
"""

from __future__ import annotations

import hashlib
import os
import urllib.request
from dataclasses import dataclass

from ..schema import datasets
from ..store.results import write_atomic

TIMEOUT = 60  # s per file
LIMIT = 16 << 20  # bytes: the largest file is 0.4 MB; anything far larger is not it


@dataclass(frozen=True)
class Outcome:
    line: str  # what happened to one file, said in one line
    ok: bool


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def base_url(given: str | None = None, environ=None) -> str:
    """--from, else $BBRLAB_DATA_URL, else GitHub's raw files."""
    env = os.environ if environ is None else environ
    return given or env.get(datasets.URL_VARIABLE) or datasets.BASE_URL


def download(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=TIMEOUT) as response:
        data = response.read(LIMIT + 1)
    if len(data) > LIMIT:
        raise OSError(f"larger than {LIMIT >> 20} MB")
    return data


def one(kind: str, name: str, base: str, environ=None, fetch=download) -> Outcome:
    """Make sure the file NAME of KIND is where bbrlab reads it, with its pinned bytes."""
    source = datasets.KINDS[kind].files[name]
    have = datasets.find(kind, name, environ)
    if have is not None and sha256(have.read_bytes()) == source.sha256:
        return Outcome(f"have {name} ({datasets.shown(have.parent)})", True)
    url = source.url(base)
    try:
        data = fetch(url)
    except (OSError, ValueError) as exc:  # URLError is an OSError; ValueError: not a URL
        return Outcome(f"{url}: {getattr(exc, 'reason', None) or exc}", False)
    got = sha256(data)
    if got != source.sha256:
        return Outcome(f"{url}: sha256 {got[:16]}..., expected {source.sha256[:16]}... (not written)", False)
    folder = datasets.destination(kind, environ)
    try:
        write_atomic(folder / name, data)  # a reader never sees half a file
    except OSError as exc:
        return Outcome(f"{folder / name}: cannot write ({exc.strerror or exc})", False)
    return Outcome(f"fetched {name} into {datasets.shown(folder)} ({len(data)} bytes, sha256 checked)", True)


def fetch_all(base: str, environ=None, fetch=download) -> list[Outcome]:
    """Every pinned file of every kind, one outcome each (one failure does not stop the rest)."""
    return [one(kind, name, base, environ, fetch) for kind, k in datasets.KINDS.items() for name in k.files]


def lines(outcomes: list[Outcome]) -> tuple[list[str], list[str]]:
    """(what was done, with where the data is now; what failed, with how many) in lines."""
    errors = [o.line for o in outcomes if not o.ok]
    if errors:
        return [o.line for o in outcomes if o.ok], errors + [f"{len(errors)} of {len(outcomes)} files not fetched"]
    where = ", ".join(f"{kind} in {datasets.shown(datasets.destination(kind))}" for kind in datasets.KINDS)
    return [o.line for o in outcomes] + [f"data: {where}"], []
