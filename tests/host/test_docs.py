"""Every command the docs show (README.md, docs/*.md, labs/**/*.md: each line of an `sh` block and
each inline command) is checked on this host, without root and without the VM:

- what only reads specs and results runs here as shown: bbrlab's list, plot, report, export,
  compare, lab, trace and format-doc, the figure scripts' plot, list and report, `python3 -m
  bbrlab...`; a placeholder (`<run>`, DIR, FILE, ...) stands for a results directory made from
  a captured point, or a small trace, and results/ for that results root; `python3 -m pytest
  PATH` is checked by its paths, which must exist;
- what measures runs with --dry-run added: its options and its plan are checked, nothing runs;
- what needs root and the kernel, the VM, other hosts or the network is left to CI (tests/run.sh)
  and checked here as far as it goes without them: bbrlab's preflight, calibrate, clean, suite,
  merge and fetch-data by their --help, which must offer every option used (results-doc too: the
  sizes it writes depend on the real traces these tests stand in for, test_docs_numbers.py runs
  it); the repository's scripts by their
  --help or their source, which must name every option and action used (a command a script
  runs in the VM is checked as a command of its own); vagrant, ansible-playbook, apt-get and
  the commands that fetch or place a file against the Vagrantfile, ansible/, the project's
  install lists and the experiments that read the file.

A command of a kind not named here fails the test. An inline code span is a command when its
program is one of these; a span of a single word (`export`, `vagrant`) is a name, and
`bbrlab SUB` or a script alone is checked by its --help or its existence."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = sorted([REPO / "README.md", *(REPO / "docs").glob("*.md"), *(REPO / "labs").rglob("*.md")])

FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
ELIDED = "..."  # a handout's "and so on" between two commands, not a command

READ_ONLY = {"list", "plot", "report", "export", "compare", "lab", "format-doc", "run",  # run: with --dry-run
             "pack", "unpack",  # they read and write runs only: here, as shown
             "trace"}  # a synthetic trace written, or one shown
LEFT_TO_CI = {"preflight", "calibrate", "clean", "suite", "merge", "fetch-data",
              "shell",  # root and the kernel, shards, the network
              "results-doc"}  # the real traces, which these tests stand in for: test_docs_numbers.py runs it
DISPATCH = {"figure5.sh", "figure6.sh", "figure8.sh", "experiment.sh", "reproduce.sh"}
MEASURING = {"all", "bbr", "cubic"}
EXTERNAL = {"vagrant", "ansible-playbook", "apt-get", "mkdir", "tee", "echo", "wget", "git", "export", "pip", "cp",
            "cd"}
VAGRANT_COMMANDS = {"up", "ssh", "destroy", "reload", "validate", "box", "plugin", "provision", "halt", "status",
                    "cloud"}
# Placeholders of a single word: a results directory, the results root, or a value of their kind.
RUN_WORDS = {"DIR", "DIR...", "RUN_DIR", "A", "B"}
WORDS = {"EXP": "figure5", "NAME": "figure5", "LAB": "bufferbloat", "K/N": "2/4"}


def text_of(paths: list[Path]) -> str:
    return "\n".join(p.read_text(errors="replace") for p in paths if p.is_file())


# Where a name must appear to be known: variables, packages, providers.
CODE = text_of([REPO / "Vagrantfile", *(REPO / "vm").glob("*.sh"), *(REPO / "mininet").rglob("*.py")])
INSTALLS = text_of([*(REPO / "vm").glob("*.sh"), REPO / "tests" / "run.sh", REPO / "setup.sh",
                    *(REPO / "ansible").rglob("*.yml")])
VAGRANTFILE = (REPO / "Vagrantfile").read_text()
PROVIDERS = set(re.findall(r'vm\.provider "(\w+)"', VAGRANTFILE))


@dataclass
class Simple:
    """One simple command: its words after sudo, nice and VAR=value prefixes, and those variables."""
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)

    @property
    def options(self) -> list[str]:
        return [a.split("=", 1)[0] for a in self.argv[1:] if a.startswith("-")]


def parse(line: str) -> tuple[list[list[Simple]], list[str]]:
    """A command line as its pipelines (split at && and ;) of simple commands (split at |),
    and the files it redirects output into. `VAR=$(CMD)` is CMD."""
    line = re.sub(r"^\w+=\$\((.*)\)$", r"\1", line)
    lex = shlex.shlex(line, posix=True, punctuation_chars="|&;<>")
    lex.whitespace_split = True
    chains, pipe, words, written = [], [], [], []
    tokens = iter(lex)
    for tok in tokens:
        if tok in ("&&", ";", "|"):
            pipe.append(words)
            words = []
            if tok != "|":
                chains.append(pipe)
                pipe = []
        elif tok in (">", ">>"):
            written.append(next(tokens, ""))
        else:
            words.append(tok)
    chains.append(pipe + [words])
    return [[simple(w) for w in p] for p in chains], written


def simple(words: list[str]) -> Simple:
    env = {}
    while words:
        if words[0] == "sudo":
            words = words[1:]
        elif words[0] == "nice" and words[1:2] == ["-n"]:
            words = words[3:]
        elif re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", words[0]):
            key, value = words[0].split("=", 1)
            env[key] = value
            words = words[1:]
        else:
            break
    return Simple(words, env)


def kind(argv: list[str]) -> str | None:
    """What sort of command this is, or None when this test knows no way to check it."""
    if not argv:
        return None
    program = argv[0]
    if program in ("bbrlab", "./bbrlab"):
        return "bbrlab"
    if program == "python3" and argv[1:2] == ["-m"] and argv[2:3] and argv[2].startswith("bbrlab"):
        return "module"
    if program in ("python3", "/usr/bin/python3") and argv[1:3] == ["-m", "pytest"]:
        return "pytest"
    if program == "python3" and argv[1:2] and (REPO / argv[1]).is_file():
        return "script"
    path = REPO / program.removeprefix("./")
    if ("/" in program or program.endswith(".sh")) and path.is_file() and os.access(path, os.X_OK):
        return "script"
    if program == "export" and not re.fullmatch(r"export [A-Z_][A-Z0-9_]*=\S*", " ".join(argv)):
        return None  # bbrlab's export named in prose, not the shell's
    return program if program in EXTERNAL else None


def commands_of(text: str) -> tuple[list[str], list[str]]:
    """The doc's commands: every line of its sh blocks, and its inline spans that are commands."""
    fenced = [line.strip() for lang, body in FENCE.findall(text) if lang == "sh" for line in body.splitlines()]
    fenced = [re.sub(r"(^|\s+)#.*$", "", line) for line in fenced]  # a comment says what the command does
    fenced = [line for line in fenced if line and line != ELIDED]
    inline = []
    for span in re.findall(r"`([^`]+)`", FENCE.sub("", text)):
        if "\n\n" in span:
            continue
        span = " ".join(span.split())
        try:
            first = parse(span)[0][0][0]
        except (ValueError, IndexError):
            continue
        if kind(first.argv) and (len(first.argv) > 1 or kind(first.argv) in ("bbrlab", "script")):
            inline.append(span)
    return fenced, inline


@dataclass
class Shown:
    text: str
    docs: list[str]
    inline: bool  # only ever shown inline: a span naming a subcommand is a mention


def shown() -> list[Shown]:
    found: dict[str, Shown] = {}
    for doc in DOCS:
        fenced, inline = commands_of(doc.read_text())
        name = str(doc.relative_to(REPO))
        for text, is_inline in [(c, False) for c in fenced] + [(c, True) for c in inline]:
            one = found.setdefault(text, Shown(text, [], is_inline))
            one.inline = one.inline and is_inline
            if name not in one.docs:
                one.docs.append(name)
    return list(found.values())


SHOWN = shown()


def siblings_of(docs: list[str]) -> list[Simple]:
    """Every simple command of these docs: what a command's neighbours create or use."""
    out = []
    for doc in docs:
        for line in sum(commands_of((REPO / doc).read_text()), []):
            chains, _ = parse(line)
            out += [s for pipe in chains for s in pipe]
    return out


class Checker:
    def __init__(self, sh, results: Path, tmp: Path, shown: Shown):
        self.sh, self.results, self.tmp, self.shown = sh, results, tmp, shown
        self.run = next((results / "figure5").iterdir())
        self.mine = tmp / "mylab.yaml"
        self.siblings = siblings_of(shown.docs)

    def line(self, text: str) -> None:
        text = re.sub(r"results/figure\d/<run( [AB])?>", str(self.run), text)
        chains, written = parse(text)
        self.written = written
        for pipe in chains:
            if len(pipe) > 1 and pipe[0].argv[:1] == ["echo"]:  # text into the next command
                pipe = pipe[1:]
            for one in pipe:
                self.command(one)

    def command(self, one: Simple) -> None:
        what = kind(one.argv)
        assert what, f"{one.argv}: a command of a kind this test does not know how to check"
        for key, value in one.env.items():
            if key == "PYTHONPATH":
                assert (REPO / value).is_dir(), value
            else:
                assert key in CODE, f"{key}: a variable nothing in the Vagrantfile, vm/ or bbrlab reads"
        getattr(self, "check_" + what.replace("-", "_"))(one.argv)

    # --- run here -----------------------------------------------------------------------

    def value(self, word: str) -> str:
        if word in RUN_WORDS:
            return str(self.run)
        if word in WORDS:
            return WORDS[word]
        if word == "FILE":
            trace = self.tmp / "trace.up"
            trace.write_text("1\n2\n")
            return str(trace)
        if re.fullmatch(r"ROOT/EXP/STAMP(/.*)?", word):
            return str(self.run) + word[len("ROOT/EXP/STAMP"):]
        if word in ("ROOT", "RUN...", "results") or word.startswith("results/"):  # the results root
            return str(self.results) + ("" if word in ("ROOT", "RUN...") else word[len("results"):])
        if word in ("experiments/mylab.yaml", "path/to/mine.yaml"):
            return self.own_copy()
        if word.startswith(("labs/", "experiments/")):
            return str(REPO / word)  # the kit's files, from here
        return word

    def own_copy(self) -> str:
        """The user's copy of figure5.yaml, edited as the docs say (name: mylab), and the
        fixture's run standing for a run of it."""
        if not self.mine.exists():
            figure5 = (REPO / "experiments" / "figure5.yaml").read_text()
            self.mine.write_text(figure5.replace("name: figure5", "name: mylab"))
            theirs = self.results / "mylab" / self.run.name
            shutil.copytree(self.run, theirs)
            ran = theirs / "spec.yaml"
            ran.write_text(ran.read_text().replace("name: figure5", "name: mylab"))
        return str(self.mine)

    def check_bbrlab(self, argv: list[str]) -> None:
        args = argv[1:]
        i = 0
        while i < len(args) and args[i].startswith("-"):  # options before the subcommand
            i += 2 if args[i] == "--results" else 1
        sub = args[i] if i < len(args) else None
        path = args[i:i + 2] if sub in ("lab", "trace") else args[i:i + 1]
        rest = args[i + len(path):]
        if sub is None or sub in LEFT_TO_CI or (self.shown.inline and not rest):
            self.offered("bbrlab", path, Simple(argv).options)
            return
        assert sub in READ_ONLY, f"bbrlab {sub}: neither read-only here nor left to CI"
        args = [self.value(a) for a in args]
        if sub == "run" and "--dry-run" not in args:
            args.append("--dry-run")
        if "--results" not in args:  # the fixture's runs, never this checkout's results/
            args = ["--results", str(self.results), *args]
        if path == ["lab", "check"]:
            self.stand_in_runs(self.value(rest[0]), [Path(self.value(a)) for a in rest[1:]])
        proc = self.sh("bbrlab", *args, cwd=self.tmp)
        if path == ["lab", "check"]:  # nothing ran here: the check says so, one line per run, exit 1
            failed = [line for line in proc.stdout.splitlines() if "FAIL" in line]
            assert proc.returncode == 1 and "not accepted" in proc.stdout and failed, proc.stdout + proc.stderr
            assert all("missing" in line or "incomplete: 0 of" in line for line in failed), proc.stdout
            return
        assert proc.returncode == 0, (args, proc.stdout[-2000:], proc.stderr[-2000:])

    def stand_in_runs(self, number: str, dirs: list[Path]) -> None:
        """The runs a lab check names (results/NAME/STAMP) stand for a student's: here each is
        a run of the lab's experiment interrupted before its first point."""
        from bbrlab.runs import lab
        from bbrlab.schema import experiment as spec
        from bbrlab.store.results import MEASUREMENT, write_json

        files = {spec.load(r.file, quick=True).name: r.file for r in lab.find(number).runs}
        for folder in [d for d in dirs if not d.exists() and d.parent.name in files]:
            exp = spec.load(files[folder.parent.name], quick=True)
            folder.mkdir(parents=True)
            (folder / "spec.yaml").write_text(exp.source)
            write_json(folder / "run.json", {"experiment": exp.name, "status": "interrupted",
                                             "spec_hash": exp.identity, "measurement": MEASUREMENT})

    def offered(self, script: str, path: list[str], options: list[str]) -> None:
        """SCRIPT PATH --help runs and offers every option of the command."""
        proc = self.sh(script, *path, "--help", cwd=self.tmp)
        assert proc.returncode == 0, proc.stderr
        for option in options:
            assert option in proc.stdout, f"{script} {' '.join(path)} --help does not offer {option}"

    def check_module(self, argv: list[str]) -> None:
        args = [self.value(a) for a in argv[3:]] or ["--help"]
        env = dict(os.environ, PYTHONPATH=str(REPO / "mininet"))
        proc = subprocess.run([sys.executable, "-m", argv[2], *args], capture_output=True, text=True, env=env,
                              cwd=self.tmp, timeout=120)
        assert proc.returncode == 0, (argv, proc.stderr[-2000:])

    def check_pytest(self, argv: list[str]) -> None:
        """Tests named by path: each path exists (a test's ::name after it is pytest's)."""
        args = argv[3:]
        paths = [a for i, a in enumerate(args) if not a.startswith("-") and (i == 0 or args[i - 1] not in ("-k", "-p"))]
        assert paths, f"{argv}: no tests named"
        for path in paths:
            assert (REPO / path.split("::")[0]).exists(), path

    def check_script(self, argv: list[str]) -> None:
        if argv[0] == "python3":  # a benchmark: it needs root and the kernel
            argv = argv[1:]
        name = argv[0].removeprefix("./")
        script = REPO / name
        assert script.is_file(), name
        args = argv[1:]
        if name in DISPATCH:
            self.dispatch(name, args)
            return
        source = script.read_text()
        if name == "vm/vm.sh" and args[:1] == ["run"]:  # a command run in the VM: checked as one
            assert re.search(r"\brun\)", source)
            self.line(shlex.join(args[1:]))
            return
        if "--help)" in source and not self.shown.inline:
            self.offered(name, [], Simple(argv).options)
            return
        for option in Simple(argv).options:
            assert re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", source), f"{name} takes no {option}"
        for action in args[:1]:
            if re.fullmatch(r"[a-z][a-z-]*", action):
                assert re.search(rf"\b{action}\)", source) or f"|{action}|" in source, f"{name} has no {action}"

    def dispatch(self, name: str, args: list[str]) -> None:
        """The figure scripts and their siblings: what reads runs here, what measures with
        --dry-run; the suite (reproduce.sh all) and a mention by --help."""
        action = next((a for a in args if a in MEASURING | {"plot", "list", "report"}), None)
        if action is None or (name == "reproduce.sh" and action == "all"):
            self.offered(name, [], [o for o in Simple([name, *args]).options if o != "--help"])
            return
        args = [self.value(a) for a in args]
        if action in MEASURING and "--dry-run" not in args:
            args.append("--dry-run")
        args += ["--results", str(self.results)]
        proc = self.sh(name, *args, cwd=self.tmp)
        assert proc.returncode == 0, (args, proc.stdout[-2000:], proc.stderr[-2000:])

    # --- left to CI, checked against what they use ----------------------------------------

    def check_vagrant(self, argv: list[str]) -> None:
        assert argv[1] in VAGRANT_COMMANDS, f"vagrant {argv[1]}: not a Vagrant command"
        for i, word in enumerate(argv):
            if word.startswith("--provider"):
                provider = word.split("=", 1)[1] if "=" in word else argv[i + 1]
                assert provider in PROVIDERS, f"{provider}: not a provider of the Vagrantfile"
        if argv[1:3] == ["plugin", "install"]:
            assert argv[3].removeprefix("vagrant-").replace("-", "_") in PROVIDERS, argv[3]
        if argv[1:3] == ["box", "add"]:
            assert argv[argv.index("--name") + 1] in VAGRANTFILE, "a box the Vagrantfile does not choose"
        if argv[1] == "ssh" and "-c" in argv:  # what runs in the guest is a command of its own
            self.line(argv[argv.index("-c") + 1])

    def check_cd(self, argv: list[str]) -> None:
        assert argv[1:] == ["/vagrant"] and 'synced_folder ".", "/vagrant"' in VAGRANTFILE, argv

    def check_ansible_playbook(self, argv: list[str]) -> None:
        playbooks = [a for a in argv[1:] if a.endswith(".yml")]
        assert playbooks and all((REPO / p).is_file() for p in playbooks), playbooks
        roles = text_of(list((REPO / "ansible").rglob("*.yml")))
        for i, word in enumerate(argv):
            if word == "-e":
                assert re.search(rf"\b{argv[i + 1].split('=')[0]}\b", roles), f"ansible/ defines no {argv[i + 1]}"
            if word == "-i":  # written by the line itself, or the user's copy of the example
                assert argv[i + 1] in self.written or (REPO / "ansible" / "inventory.example").is_file()

    def check_apt_get(self, argv: list[str]) -> None:
        assert argv[1] == "install", argv
        packages = [a for a in argv[2:] if not a.startswith("-")]
        assert packages or self.shown.inline, argv
        for package in packages:
            assert re.search(rf"(?<![\w-]){re.escape(package)}(?![\w-])", INSTALLS), \
                f"{package}: not a package the project's own scripts install"

    def written_by_siblings(self) -> list[str]:
        out = []
        for one in self.siblings:
            if one.argv[:1] == ["tee"]:
                out += [a for a in one.argv[1:] if not a.startswith("-")]
            if one.argv[:1] == ["wget"] and "-O" in one.argv:
                out.append(one.argv[one.argv.index("-O") + 1])
        return out

    def check_mkdir(self, argv: list[str]) -> None:
        for folder in [a for a in argv[1:] if not a.startswith("-")]:
            assert any(Path(f).parent == Path(folder) for f in self.written_by_siblings()), \
                f"{folder}: no command beside it puts a file there"

    def check_tee(self, argv: list[str]) -> None:
        made = [Path(a) for s in self.siblings if s.argv[:1] == ["mkdir"] for a in s.argv[1:] if a[0] != "-"]
        for target in [a for a in argv[1:] if not a.startswith("-")]:
            assert Path(target).parent in made, f"{target}: its folder is made by no command beside it"

    def check_echo(self, argv: list[str]) -> None:
        raise AssertionError(f"{argv}: echo only feeds the next command of a pipe")

    def check_wget(self, argv: list[str]) -> None:
        target = argv[argv.index("-O") + 1]
        url = [a for a in argv if a.startswith("https://")]
        assert url and Path(url[0]).name == Path(target).name, argv
        self.check_tee(["tee", target])
        read = text_of([*(REPO / "experiments").glob("*.yaml"), *(REPO / "labs").rglob("*.yaml")])
        assert Path(target).name in read, f"{target}: no experiment reads it"

    def check_git(self, argv: list[str]) -> None:
        assert argv[1] == "clone" and argv[2].startswith("https://"), argv
        exported = [s.argv[1].split("=", 1)[1] for s in self.siblings if s.argv[:1] == ["export"]]
        assert any(v.startswith(argv[3] + "/") for v in exported), f"{argv[3]}: nothing beside it uses the clone"

    def check_export(self, argv: list[str]) -> None:
        key = argv[1].split("=", 1)[0]
        assert re.search(rf"\b{key}\b", CODE), f"{key}: a variable bbrlab does not read"

    def check_pip(self, argv: list[str]) -> None:
        assert argv[1:] == ["install", "."], argv
        project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
        module = project["scripts"]["bbrlab"].split(":")[0]
        assert (REPO / "mininet" / (module.replace(".", "/") + ".py")).is_file(), module

    def check_cp(self, argv: list[str]) -> None:  # the user's copy: in a scratch directory, not in experiments/
        assert argv[1:] == ["experiments/figure5.yaml", "experiments/mylab.yaml"], argv
        assert "name: figure5" in (REPO / argv[1]).read_text()  # what the copy's edit renames
        self.own_copy()


def test_the_docs_show_commands():
    texts = {c.text for c in SHOWN}
    assert "sudo ./figure5.sh all" in texts and "sudo tests/run.sh" in texts
    assert any(t.startswith("bbrlab export") for t in texts) and any("experiment.sh" in t for t in texts)
    assert any(t.startswith("./bbrlab lab check") for t in texts)
    assert {doc for c in SHOWN for doc in c.docs} >= {"README.md", "docs/experiments.md", "labs/README.md"}


@pytest.fixture(scope="module")
def stand_ins(tmp_path_factory) -> tuple[Path, Path]:
    """The traces and ReBBR's numbers are not the project's to ship: synthetic traces under
    the names the experiments use, and an empty folder for the reference numbers."""
    from bbrlab.schema import traces

    folder = tmp_path_factory.mktemp("traces")
    for name in ("Verizon-LTE-short.up", "Verizon-LTE-short.down"):
        traces.write(folder / name, traces.synthesize("walk", 140.0, 6e6, step=0.5, seed=12))
    return folder, tmp_path_factory.mktemp("reference")


@pytest.fixture(autouse=True)
def with_stand_ins(stand_ins, monkeypatch):
    """Set before `sh` copies the environment: never the real files beside a checkout."""
    monkeypatch.setenv("BBRLAB_TRACES", str(stand_ins[0]))
    monkeypatch.setenv("BBRLAB_REFERENCE", str(stand_ins[1]))


@pytest.mark.parametrize("command", SHOWN, ids=[c.text for c in SHOWN])
def test_a_docs_command_runs_as_shown(command, sh, results, tmp_path):
    Checker(sh, results, tmp_path, command).line(command.text)


LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


@pytest.mark.parametrize("doc", DOCS, ids=[str(d.relative_to(REPO)) for d in DOCS])
def test_every_relative_link_points_at_a_file(doc):
    links = [t.split("#")[0] for t in LINK.findall(FENCE.sub("", doc.read_text()))]
    missing = [t for t in links if t and not re.match(r"\w+:", t) and not (doc.parent / t).exists()]
    assert not missing, f"{doc.relative_to(REPO)}: {missing}"


TOP = ("mininet/", "docs/", "labs/", "tests/", "vm/", "ansible/", "experiments/", "benchmarks/", ".ci/")
LAYERS = ("schema/", "emulation/", "traffic/", "store/", "analysis/", "verdicts/", "output/", "runs/")


@pytest.mark.parametrize("doc", DOCS, ids=[str(d.relative_to(REPO)) for d in DOCS])
def test_every_path_the_docs_name_exists(doc):
    """A code span naming a file of the repository (or of the package, by its layer folder)."""
    missing = []
    for span in re.findall(r"`([^`\s]+)`", FENCE.sub("", doc.read_text())):
        path = span.removeprefix("./")
        words = set(re.split(r"[/.]", path)) - {"README"}
        if re.search(r"[<>*$]", path) or any(re.fullmatch(r"[A-Z][A-Z_]*", w) for w in words) \
                or path == "experiments/mylab.yaml":
            continue  # a placeholder, a pattern or a variable, or the user's own copy
        if path.startswith(TOP):
            where = REPO / path
        elif path.startswith(LAYERS) and path.endswith(".py"):
            where = REPO / "mininet" / "bbrlab" / path
        else:
            continue
        if not where.exists():
            missing.append(span)
    assert not missing, f"{doc.relative_to(REPO)}: {missing}"
