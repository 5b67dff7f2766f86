"""The data bbrlab reads but does not ship: Mahimahi's LTE traces and ReBBR's published
numbers. Where it looks for them, which files `bbrlab fetch-data` gets from where, and the
one line said when one is missing.

Read order, for each kind (traces, reference):

1. the folder $BBRLAB_TRACES (or $BBRLAB_REFERENCE) names, when it is set: that one alone;
2. otherwise `data/traces` (`data/reference`) in the checkout, where fetch-data writes
   (gitignored);
3. then `shared/traces` (`shared/reference`) beside the checkout: the layout of the
   machines that develop and test bbrlab (CI reads these).

An experiment names such a file through the variable (`$BBRLAB_TRACES/Verizon-LTE-short.up`);
a relative or absolute path is read as it is. Every file is pinned: its repository, commit
and path, and the sha256 of its bytes, which fetch-data checks before it writes a file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import SpecError
from .root import PACKAGE, ROOT

# From a checkout the command is the checkout's own script; installed, the console script.
FETCH = "./bbrlab fetch-data" if PACKAGE.parent.name == "mininet" else "bbrlab fetch-data"
BASE_URL = "https://raw.githubusercontent.com"  # + /OWNER/REPO/COMMIT/PATH
URL_VARIABLE = "BBRLAB_DATA_URL"  # another base with the same layout (a mirror, file://)
DATA = ROOT / "data"
SHARED = ROOT.parent / "shared"
MAHIMAHI = "ravinet/mahimahi"
REBBR = "jervisfm/rebbr"
REBBR_DATA = "01001609b009fe07ced7b497aaf5b3d3bfba39c7"


@dataclass(frozen=True)
class Source:
    """One public file at a pinned commit, and the sha256 of its bytes."""

    repo: str  # owner/name on GitHub
    commit: str
    path: str  # in the repository
    sha256: str

    def url(self, base: str = BASE_URL) -> str:
        return f"{base.rstrip('/')}/{self.repo}/{self.commit}/{self.path}"


@dataclass(frozen=True)
class Kind:
    folder: str  # the folder's name under data/ and shared/
    variable: str
    what: str  # how a message names one of its files
    files: dict[str, Source]  # name in the folder -> where it comes from


KINDS = {
    "traces": Kind("traces", "BBRLAB_TRACES", "trace", {
        # Winstein et al., NSDI 2013 (Saturator); Mahimahi's licence (GPL-3.0)
        "Verizon-LTE-short.up": Source(MAHIMAHI, "1a775777d2f8e667c59447bf0ff268178b6ff4ad",
                                       "traces/Verizon-LTE-short.up",
                                       "f6cd9049f58d70f12545772a3482ded085b6d50f06a2f4ff4afcfb6fe7976dcc"),
        "Verizon-LTE-short.down": Source(MAHIMAHI, "1a775777d2f8e667c59447bf0ff268178b6ff4ad",
                                         "traces/Verizon-LTE-short.down",
                                         "c918436fbd6246af134c76585d9395881fdd27203c59a8902b9a7c675b8a8e3e"),
        "README.mahimahi": Source(MAHIMAHI, "4d3d0c7647bb5e6841b54f063cd2f4d0984bc561", "traces/README",
                                  "33ad52c97bfafe64f9f6acb69e943e932c561a4f47284c6bc01d0e3e51108071"),
    }),
    "reference": Kind("reference", "BBRLAB_REFERENCE", "reference file", {
        # ReBBR (Stanford CS244, 2017): its experiments 1-4 and its figure 8, as it published them
        "rebbr/experiment1.csv": Source(REBBR, REBBR_DATA, "mahimahi/data/experiment1.csv",
                                        "730ac08b424e24fdc70bd0dfc7c29d98f4acc2274221f4cc0e35bdb18ff7e449"),
        "rebbr/experiment2.csv": Source(REBBR, REBBR_DATA, "mahimahi/data/experiment2.csv",
                                        "24fccd9b6a2de07f9117498060d3884b6d8e6c4637ecd5d7ff3aac984e7d74bb"),
        "rebbr/experiment3.csv": Source(REBBR, REBBR_DATA, "mahimahi/data/experiment3.csv",
                                        "d511b4df32ef2ecbdc683ea0948e0b137192342cc58dd19daceaca92e8c66382"),
        "rebbr/experiment4.csv": Source(REBBR, REBBR_DATA, "mahimahi/data/experiment4.csv",
                                        "82d47cdd5053caa10eea5c75c41c5a939369c9988549248ac0ef357947ea9284"),
        "rebbr/figure8.csv": Source(REBBR, "a15c6b391a908e52e2f26d3f646c0e5b5dd3da5c",
                                    "mahimahi/data_20170604_jmuindi/figure8.csv",
                                    "74f8dc829df48e26b664948c33025ba5faee9554db5977bdd2ee83f490e8cd3c"),
    }),
}
VARIABLES = {k.variable: name for name, k in KINDS.items()}


class MissingData(SpecError):
    """A file fetch-data provides is in none of the folders bbrlab reads it from."""

    def __init__(self, key: str, kind: str, name: str, folders: tuple[Path, ...], environ=None):
        self.key, self.kind, self.name, self.folders = key, kind, name, folders
        self.needs = (f"needs {KINDS[kind].what} {name} (not in {where(kind, environ)}): "
                      f"run `{FETCH}`")
        super().__init__(f"{key}: {self.needs}")


def _env(environ) -> dict:
    return dict(os.environ if environ is None else environ)


def folders(kind: str, environ=None) -> tuple[Path, ...]:
    """The folders KIND's files are read from, in order (see above)."""
    env, k = _env(environ), KINDS[kind]
    if env.get(k.variable):
        return (Path(env[k.variable]).expanduser(),)
    return DATA / k.folder, SHARED / k.folder


def destination(kind: str, environ=None) -> Path:
    """Where fetch-data writes KIND's files: the variable's folder, else data/ in the checkout."""
    return folders(kind, environ)[0]


def shown(folder: Path) -> str:
    """FOLDER as a message names it: from the checkout when it is in it or beside it."""
    for base, prefix in ((ROOT, ""), (ROOT.parent, "../")):
        try:
            return prefix + str(folder.relative_to(base))
        except ValueError:
            continue
    return str(folder)


def where(kind: str, environ=None) -> str:
    env, k = _env(environ), KINDS[kind]
    places = " or ".join(shown(f) for f in folders(kind, env))
    return f"${k.variable}={places}" if env.get(k.variable) else places


def find(kind: str, name: str, environ=None) -> Path | None:
    """The file NAME of KIND as bbrlab reads it (the first folder that has it), or None."""
    return next((f / name for f in folders(kind, environ) if (f / name).is_file()), None)


def check(path: Path, kind: str, key: str, environ=None) -> Path:
    """PATH, or MissingData when it is a file fetch-data provides, in a folder of KIND's read
    order, and not there (any other missing file is its reader's to report)."""
    if path.is_file():
        return path
    looked = folders(kind, environ)
    for folder in looked:
        try:
            name = path.relative_to(folder).as_posix()
        except ValueError:
            continue
        if name in KINDS[kind].files:
            raise MissingData(key, kind, name, looked, environ)
    return path
