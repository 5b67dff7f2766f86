"""The shipped experiment files under random `--set` and `--only` values, valid and hostile:
for every input, `bbrlab run --dry-run` either refuses it (exit 2, one line, no traceback)
or plans exactly what was written, read back from the emulation plan (the tc commands,
the flows' plans), not from the spec object. A value spelled as the format documents must
be planned as written or refused with a reason (a bound); a misspelling must be refused."""

import re
from collections import Counter
from pathlib import Path

import pytest

from bbrlab import cli
from bbrlab.emulation import topo
from bbrlab.schema import experiment as spec
from bbrlab.schema import selection
from seeding import seeded

hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies

REPO = Path(__file__).resolve().parents[2]
# a trace's files come from ../shared (fetch-data): the files that need none
FILES = sorted(p for p in (REPO / "experiments").glob("*.yaml") if "trace" not in spec.load_raw(p).get("link", {}))
TALLY: Counter = Counter()  # outcomes, printed at the end (pytest -s shows them)
REASONS: Counter = Counter()  # why inputs spelled as documented were refused
UNIT = {"kbit": 1e3, "Mbit": 1e6, "Gbit": 1e9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "%": 1e-2, "pkt": 1}


def spelled(numbers, units):
    """(text, value in base units) of a number with one of UNITS, as the format documents it."""
    return st.tuples(numbers, st.sampled_from(units)).map(lambda nu: (f"{nu[0]}{nu[1]}", nu[0] * UNIT[nu[1]]))


# key -> (values spelled as documented: (text, expected), misspellings that must be refused)
KEYS = {
    "rate": (spelled(st.integers(1, 999), ["kbit", "Mbit"]),
             ["10", "1e7", "10Mbps", "10kbps", "-5Mbit", "0.5bit", "fast", "true", "10 Mbit/s", "10Tbit"]),
    "rtt": (spelled(st.integers(1, 400), ["ms"]),
            ["40", "10h", "-1ms", "0ms", "soon", "false", "40msec"]),
    "loss": (spelled(st.sampled_from([0.001, 0.01, 0.5, 1, 2, 5, 10, 20]), ["%"]),
             ["101%", "-1%", "lossy", "true", "1 %%", "0.01"]),
    "duration": (spelled(st.integers(1, 60), ["s"]),
                 ["30", "2.5s", "-1s", "0s", "1h", "ever", "100000s"]),
    "flows.0.count": (st.integers(1, 6).map(lambda n: (str(n), n)),
                      ["0", "-1", "1.5", "two", "300", "true"]),
    "cc": (st.sampled_from(["bbr", "cubic"]).map(lambda c: (c, c)),
           ["cubci", "BBR", "bbr2", "5", "true", "bbr cubic", "../bbr"]),
    "flows.0.ecn": (st.booleans().map(lambda b: (str(b).lower(), b)), ["yes", "1", "on", "ecn"]),
    "buffer": (spelled(st.integers(2, 900), ["pkt"]),
               ["100", "-3pkt", "0pkt", "lots", "1.5pkt", "true", "5000000000pkt"]),
}


def bottleneck_tokens(plan) -> list[str]:
    return [w for argv in plan.bottleneck.tc for w in argv]


def after(tokens: list[str], word: str) -> list[str]:
    return [tokens[i + 1] for i, w in enumerate(tokens[:-1]) if w == word]


def seconds(text: str) -> float:
    number, unit = re.fullmatch(r"([\d.]+)(us|ms|s)", text).groups()
    return float(number) * UNIT[unit]


def read_back(key: str, plan, path: str, raw: dict):
    """KEY's effective value in PLAN, or None where this plan does not carry it alone."""
    groups = raw["flows"]
    if key == "rate":
        return [float(v.removesuffix("bit")) for v in after(bottleneck_tokens(plan), "rate")][:1] or None
    if key in ("rtt", "loss"):
        if any(isinstance(g, dict) and g.get(key) is not None for g in groups) or raw["link"].get("jitter"):
            return None
        if key == "rtt" and raw["link"].get("delay_variation"):  # netem's delay then centres the variation
            return None
        data = [i for link in plan.links for i in (link.end1, link.end2) if i.role == "delay-data"]
        ack = [i for link in plan.links for i in (link.end1, link.end2) if i.role == "delay-ack"]
        if not data:  # Mahimahi's chain (figure8-emulators): its shells carry delay and loss
            return None
        words = [[w for argv in intf.tc for w in argv] for intf in data[:1] + ack[:1]]
        if key == "rtt":
            return [sum(seconds(after(w, "delay")[0]) for w in words)]
        loss = after(words[0], "random")
        return [float(loss[0].rstrip("%")) / 100 if loss else 0.0]
    if key == "buffer":
        return sorted({float(v) for v in after(bottleneck_tokens(plan), "limit")}) or None
    if path == "cc":  # the groups that take the top-level cc
        return sorted({f.cc for f in plan.flows if "cc" not in groups[f.group]}) or None
    group = int(path.split(".")[1])
    flows = [f for f in plan.flows if f.group == group]
    if key == "flows.0.ecn":
        return sorted({plan.sysctls[f.sender].get("net.ipv4.tcp_ecn") == "1" for f in flows}) or None
    if key == "flows.0.count":
        return [len(flows)] if flows else None
    if key == "duration":
        return sorted({f.duration for f in flows}) or None
    return sorted({f.cc for f in flows}) or None  # flows.N.cc


@st.composite
def inputs(draw):
    path = draw(st.sampled_from(FILES))
    key = draw(st.sampled_from(sorted(KEYS)))
    good, bad = KEYS[key]
    valid = draw(st.booleans())
    text, expected = draw(good) if valid else (draw(st.sampled_from(bad)), None)
    exp = spec.load(path, quick=True)
    only = []
    if exp.axes and draw(st.booleans()):
        axis = draw(st.sampled_from(sorted(exp.axes)))
        value = draw(st.sampled_from([*map(str, exp.axes[axis]), "nonesuch", "", "=", "TRUE"]))
        only = ["--only", f"{axis}={value}"]
    return path, key, text, expected, only


@pytest.fixture(scope="module", autouse=True)
def tally():
    yield
    print(f"\n{sum(TALLY.values())} inputs: " + ", ".join(f"{n} {what}" for what, n in sorted(TALLY.items())))
    print("refused though spelled as documented, by where: " + ", ".join(f"{w} {n}" for w, n in REASONS.most_common()))


@seeded(examples=120)
@hypothesis.given(inputs())
def test_a_dry_run_refuses_in_one_line_or_plans_what_was_written(capsys, case):
    path, key, text, expected, only = case
    argv = ["run", str(path), "--quick", "--dry-run", "--set", f"{key}={text}", *only]
    capsys.readouterr()  # what drawing the case printed (inputs() loads files: their warnings), not the command's
    code = cli.main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err, (argv, err)
    if code == 2:
        assert out == "" and len(err.strip().splitlines()) == 1 and err.startswith("bbrlab: "), (argv, err)
        TALLY["refused, a misspelling" if expected is None else "refused, spelled as documented"] += 1
        if expected is not None:
            REASONS[err.strip()[8:120]] += 1
        return
    assert code == 0, (argv, code, err)
    assert expected is not None, f"a misspelling was planned: {argv}"
    raw = spec.load_raw(path)
    exp = spec.load(path, [f"{key}={text}"], quick=True)
    resolved = spec.resolve_key(raw, key)
    read = 0
    for point in selection.select(exp, selection.parse_only(only[1:])):
        have = read_back(key, topo.build_plan(point), resolved, raw)
        if have is not None:
            read += 1
            assert have == (pytest.approx([expected]) if not isinstance(expected, str) else [expected]), (argv, have)
    TALLY[("planned as written" if read else "planned, not read back") + (", warned" if "warning" in err else "")] += 1


@pytest.mark.parametrize("key, text", [(k, t) for k, (_, bad) in sorted(KEYS.items()) for t in bad])
def test_every_misspelling_is_refused_where_its_key_is_plain(capsys, key, text):
    """Each misspelling above on figure 5, where every key names one value: refused, one line."""
    code = cli.main(["run", "figure5", "--quick", "--dry-run", "--set", f"{key}={text}"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, (key, text, out[:300], err)
