"""On-disk corpus of findings, one directory per bug signature (the names: layout.py).

Why the care: campaigns run for hours, several may share a corpus, and any of them can be killed at any instant.
So every mutation happens under an exclusive fcntl.flock on <root>/.lock, files are written to a `.tmp-` sibling,
fsync'd and os.replace'd, and example directories are built completely under a `.tmp-` name and then renamed.
A reader therefore sees either the old or the new state, never a half-written one, and anything named `.tmp-`
is by construction garbage once the lock is free (writers only create temp entries while holding it).
"""
import fcntl
import json
import os
import shutil
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

from gfxhound.atomic import install_dir, write_atomic, write_synced

from .drafted_with import DraftedWith
from .finding import CorpusError, Finding
from .layout import (ALIASES_DIR, ALIASES_FILE, BISECT_FILE, DRAFT_DIR, DRAFT_FILE, DRAFTED_WITH_FILE, EXAMPLES,
                     FINDING_FILE, IR_DIR, LOCK_FILE, CAUSE_FILE, MINIMAL_FILE, NAME, REDUCED, TOOLCHAINS, VERIFY_FILE,
                     Example, Reduction, is_temp)
from .merge import merge

_REQUIRED = ("signature", "verdict", "stage", "spec_hash", "target", "toolchain")


def _numbered(name: str, n) -> str:
    """bisect.json -> bisect.<n>.json: where an earlier record is kept when a newer one replaces it."""
    stem, ext = name.rsplit(".", 1)
    return f"{stem}.{n}.{ext}"


def _check_name(kind, name):
    """Signatures and spec hashes become path components: refuse anything that could escape or collide."""
    if not isinstance(name, str) or not NAME.fullmatch(name) or is_temp(name):
        raise CorpusError(f"invalid {kind} {name!r}: must be a plain file name")
    return name


class Corpus:
    """A corpus directory; nothing is created until the first write, so pointing at a typo'd path costs nothing."""

    def __init__(self, root: "str | Path"):
        self.root = Path(root)
        self._check_root()

    def _check_root(self):
        if self.root.exists() and not self.root.is_dir():
            raise CorpusError(f"corpus at {self.root}: exists but is not a directory")
        return self.root.exists()

    @contextmanager
    def _locked(self, blocking=True):
        """Exclusive lock on <root>/.lock; yields False instead of waiting when blocking=False and it is held."""
        self._check_root()
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.root / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:  # a user's path: one line that says what to do, not a traceback
            raise CorpusError(f"cannot write the corpus at {self.root} ({exc.strerror}); give a writable --corpus")
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
            except BlockingIOError:
                yield False
                return
            yield True
        finally:
            os.close(fd)  # closing the descriptor releases the flock

    def path(self, signature: str) -> Path:
        return self.root / _check_name("signature", signature)

    def _disk_examples(self, signature):
        d = self.path(signature) / EXAMPLES
        if not d.is_dir():
            return []
        return sorted(p.name for p in d.iterdir() if p.is_dir() and not p.name.startswith("."))

    def example_dirs(self, signature: str) -> "list[Path]":
        """Listed examples in insertion order, then any complete dir a killed writer renamed in but never listed."""
        f = self._load(signature)
        listed = f.examples if f else []
        disk = self._disk_examples(signature)
        names = [e for e in listed if e in disk] + [e for e in disk if e not in listed]
        return [self.path(signature) / EXAMPLES / e for e in names]

    def examples(self, signature: str) -> "list[Example]":
        """The finding's examples (example_dirs' order) as views of what each stored."""
        return [Example(d) for d in self.example_dirs(signature)]

    def example_path(self, signature: str, spec_hash: str) -> Path:
        return self.path(signature) / EXAMPLES / _check_name("spec hash", spec_hash)

    def reduction(self, signature: str, level: str) -> Reduction:
        """What `gfxhound reduce` left at `level` (spec, llvm-ir, ttgir, ttir); check `.exists`."""
        return Reduction(self.path(signature) / REDUCED / _check_name("reduction level", level))

    def alias_reduction(self, signature: str, alias: str, level: str) -> Reduction:
        """A reduction that came with a finding folded into `signature` (kept under aliases/<alias>/)."""
        return Reduction(self.path(signature) / ALIASES_DIR / _check_name("alias", alias) / REDUCED / level)

    def cause(self, signature: str) -> str:
        """A person's analysis of the cause (cause.md), or ''."""
        path = self.path(signature) / CAUSE_FILE
        return path.read_text().strip() if path.exists() else ""

    def minimal(self, signature: str) -> Path:
        """A repro a person minimised by hand and put in the finding's folder (it may not exist)."""
        return self.path(signature) / MINIMAL_FILE

    def repros(self, signature: str) -> "list[Path]":
        """Every repro script of a finding, best first: the hand-minimised one, the reduced one, the examples'."""
        found = [self.minimal(signature), self.reduction(signature, "spec").repro]
        found += [e.repro for e in self.examples(signature)]
        return [p for p in found if p.exists()]

    def bisections(self, signature: str) -> "list[dict]":
        """The finding's bisection records, newest first (bisect.json, then bisect.<n>.json from the highest n)."""
        folder = self.path(signature)
        older = sorted(folder.glob(_numbered(BISECT_FILE, "*")), reverse=True, key=lambda p: int(p.suffixes[0][1:]))
        out = []
        for path in [folder / BISECT_FILE, *older]:
            try:
                out.append(json.loads(path.read_text()))
            except (FileNotFoundError, ValueError):
                pass
        return out

    def draft_dir(self, signature: str) -> Path:
        return self.path(signature) / DRAFT_DIR

    def drafted(self, signature: str) -> bool:
        """A draft was written for this bug: under its id, under an id it was folded from (aliases/<old>/), or,
        where drafted_with.json says the bug is reported in another finding's draft, that draft."""
        pointer = self.drafted_with(signature)
        return self._own_draft(signature) or bool(pointer and self._own_draft(pointer.draft))

    def _own_draft(self, signature: str) -> bool:
        folder = self.path(signature)
        return (folder / DRAFT_DIR / DRAFT_FILE).is_file() or any(
            (p / DRAFT_DIR / DRAFT_FILE).is_file() for p in (folder / ALIASES_DIR).glob("*"))

    def drafted_with(self, signature: str) -> "DraftedWith | None":
        """The finding whose draft reports this one's bug, and why (drafted_with.json); None when it has none."""
        path = self.path(signature) / DRAFTED_WITH_FILE
        try:
            text = path.read_text()
        except FileNotFoundError:
            return None
        try:
            return DraftedWith.from_json(json.loads(text), str(path))
        except ValueError as exc:
            raise CorpusError(f"{path} is not JSON ({exc}); move it aside or delete it") from None

    def drafted_here(self, signature: str) -> "list[str]":
        """The findings whose drafted_with.json points at this one: their bugs are reported in its draft."""
        if not self._check_root():
            return []
        return sorted(p.parent.name for p in self.root.glob(f"*/{DRAFTED_WITH_FILE}")
                      if not is_temp(p.parent.name) and self.drafted_with(p.parent.name).draft == signature)

    def write_drafted_with(self, signature: str, draft: str, why: str) -> Path:
        """Record that `signature`'s bug is reported in `draft`'s draft (both full ids of findings here). One hop
        only: a finding that others point at, or one that points elsewhere, cannot be pointed through."""
        _check_name("signature", draft)
        if draft == signature:
            raise CorpusError(f"{signature[:8]} cannot be drafted with itself")
        if not why.strip():
            raise CorpusError(f"say why {signature[:8]} is drafted with {draft[:8]} (one line)")
        with self._locked():
            for sig in (signature, draft):
                if self._load(sig) is None:
                    raise CorpusError(f"no finding {sig} in corpus at {self.root}")
            onward = self.drafted_with(draft)
            if onward:
                raise CorpusError(f"{draft[:8]} is itself drafted with {onward.draft[:8]}: point {signature[:8]} "
                                  f"there")
            behind = self.drafted_here(signature)
            if behind:
                many = len(behind) > 1
                raise CorpusError(f"{', '.join(s[:8] for s in behind)} {'are' if many else 'is'} drafted with "
                                  f"{signature[:8]}: point {'them' if many else 'it'} at {draft[:8]} first")
            path = self.path(signature) / DRAFTED_WITH_FILE
            write_atomic(path, json.dumps(DraftedWith(draft, " ".join(why.split())).to_json(), indent=1) + "\n")
            return path

    def toolchain_files(self) -> "list[Path]":
        return sorted((self.root / TOOLCHAINS).glob("*.json"))

    def _load(self, signature):
        p = self.path(signature) / FINDING_FILE
        if not p.is_file():
            return None
        try:
            return Finding.from_json(json.loads(p.read_text()))
        except (ValueError, TypeError, UnicodeDecodeError) as e:
            raise CorpusError(f"corpus at {self.root}: finding {p.parent.name} has a corrupt finding.json ({p}: "
                              f"{str(e).splitlines()[0] if str(e) else type(e).__name__}); move it aside or delete it")
        except CorpusError as e:
            raise CorpusError(f"corpus at {self.root}: {p}: {e}") from None

    def findings(self) -> "list[Finding]":
        """All findings sorted by first_seen; temp entries and dirs with no finding.json yet are skipped."""
        if not self._check_root():
            return []
        try:
            self.clean_temp()  # opportunistic: a no-op while a writer holds the lock
        except OSError:
            pass  # read-only corpus: temp entries are skipped below anyway
        out = []
        for p in sorted(self.root.iterdir()):
            if p.name.startswith(".") or is_temp(p.name) or not p.is_dir() or not NAME.fullmatch(p.name):
                continue
            f = self._load(p.name)
            if f is not None and not f.absorbed_into:  # a tombstone's bug is listed under the finding it joined
                out.append(f)
        return sorted(out, key=lambda f: (f.first_seen, f.signature))

    def aliases(self) -> dict:
        """{old id: the id it was folded into}, chains followed (gfxhound/corpus_store/fold.py writes it)."""
        try:
            table = json.loads((self.root / ALIASES_FILE).read_text()).get("aliases", {})
        except (FileNotFoundError, ValueError):
            return {}
        resolved = {}
        for old in table:
            new, seen = table[old], {old}
            while new in table and new not in seen:
                seen.add(new)
                new = table[new]
            resolved[old] = new
        return resolved

    def write_aliases(self, table: dict):
        """Replace the alias table (callers hold the lock)."""
        write_atomic(self.root / ALIASES_FILE, json.dumps({"format": 1, "aliases": dict(sorted(table.items()))},
                                                           indent=1) + "\n")

    def get(self, prefix: str) -> Finding:
        """The finding whose id starts with prefix, or the one an old id (an alias) starting with it was folded
        into."""
        found = self.findings()
        sigs = [f.signature for f in found if f.signature.startswith(prefix)] or sorted(
            {new for old, new in self.aliases().items() if old.startswith(prefix)} & {f.signature for f in found})
        if not sigs:
            raise CorpusError(f"no finding matches {prefix!r} in corpus at {self.root}")
        if len(sigs) > 1:
            raise CorpusError(f"{prefix!r} is ambiguous: matches {', '.join(sorted(sigs))}")
        return self._load(sigs[0])

    def _save(self, f):
        d = self.path(f.signature)
        d.mkdir(exist_ok=True)
        write_atomic(d / FINDING_FILE, json.dumps(f.to_json(), indent=2, sort_keys=True) + "\n")

    def record(self, execution: dict, files: "dict[str, bytes | str]", ir_dir: "Path | None" = None,
               max_examples: int = 5) -> "tuple[Finding, bool]":
        """Count one occurrence of execution's signature, keeping its files as an example if there is room.

        Returns (finding, is_new_signature). The example dir is renamed into place before finding.json lists it,
        so a listed example is always complete; an unlisted complete one is adopted on the next write."""
        missing = [k for k in _REQUIRED if k not in execution]
        if missing:
            raise CorpusError(f"execution is missing keys: {', '.join(missing)}")
        sig = _check_name("signature", execution["signature"])
        spec = _check_name("spec hash", execution["spec_hash"])
        when = execution.get("time") or datetime.now(timezone.utc).isoformat(timespec="seconds")
        for name in files:
            if Path(name).is_absolute() or ".." in Path(name).parts or is_temp(name):
                raise CorpusError(f"invalid example file name {name!r}")
        with self._locked():
            sig = self.aliases().get(sig, sig)  # a provisional id folded into another finding counts there
            f = self._load(sig)
            if f is not None and f.absorbed_into:  # being folded (a killed absorb): count where it is going
                sig, f = f.absorbed_into, self._load(f.absorbed_into)
            is_new = f is None
            if is_new:
                f = Finding(signature=sig, verdict=execution["verdict"], stage=execution["stage"],
                            message=(execution.get("message") or "").split("\n")[0],
                            normalised=execution.get("normalised", ""), first_seen=when, last_seen=when, count=0,
                            targets=[], toolchains=[])
            f.count += 1
            forced = (execution.get("checks") or {}).get("forced") or "default"
            if is_new or forced == "default":  # one default-configuration occurrence makes it a default bug
                f.configuration = forced
            f.normaliser = max(f.normaliser, execution.get("normaliser", 0))
            f.first_seen, f.last_seen = min(f.first_seen, when), max(f.last_seen, when)
            f.targets = sorted(set(f.targets) | {execution["target"]})
            f.toolchains = sorted(set(f.toolchains) | {execution["toolchain"]})
            disk = self._disk_examples(sig)
            f.examples += [e for e in disk if e not in f.examples]
            if spec not in f.examples and len(f.examples) < max_examples:
                def build(tmp):
                    tmp.mkdir()
                    for name, data in files.items():
                        (tmp / name).parent.mkdir(parents=True, exist_ok=True)
                        write_synced(tmp / name, data)
                    if ir_dir is not None and Path(ir_dir).is_dir():
                        (tmp / IR_DIR).mkdir()
                        for p in sorted(Path(ir_dir).iterdir()):
                            if p.is_file() and not p.is_symlink():
                                write_synced(tmp / IR_DIR / p.name, p.read_bytes())
                install_dir(self.path(sig) / EXAMPLES / spec, build)
                f.examples.append(spec)
            self._save(f)
            return f, is_new

    def write_reduced(self, signature: str, level: str, files: "dict[str, bytes | str]") -> Path:
        """Install reduced/<level>/ atomically; an earlier reduction there is kept as reduced/<level>.<n>."""
        _check_name("reduction level", level)
        with self._locked():
            final = self.path(signature) / REDUCED / level
            if final.exists():
                n = 1
                while final.with_name(f"{level}.{n}").exists():
                    n += 1
                os.rename(final, final.with_name(f"{level}.{n}"))

            def build(tmp):
                tmp.mkdir(parents=True)
                for name, data in files.items():
                    write_synced(tmp / name, data)
            install_dir(final, build)
            return final

    def write_bisect(self, signature: str, record: dict) -> Path:
        """bisect.json next to the finding (docs/design.md), written atomically; an earlier one is kept as bisect.N.json."""
        with self._locked():
            final = self.path(signature) / BISECT_FILE
            if final.exists():
                n = 1
                while final.with_name(_numbered(BISECT_FILE, n)).exists():
                    n += 1
                os.rename(final, final.with_name(_numbered(BISECT_FILE, n)))
            write_atomic(final, json.dumps(record, indent=1) + "\n")
            return final

    def write_verify(self, signature: str, entry: dict, status: str | None) -> dict:
        """Append one verification to verify.json (its history) and, when it says so, set the finding's status
        (open: still fails; fixed). Both under the corpus lock, each file written atomically."""
        with self._locked():
            path = self.path(signature) / VERIFY_FILE
            try:
                history = json.loads(path.read_text())
            except (FileNotFoundError, ValueError):
                history = {"format": 1, "runs": []}
            history["runs"].append(entry)
            write_atomic(path, json.dumps(history, indent=1) + "\n")
            finding = self._load(signature)
            if status and finding and finding.status != status:
                finding.status = status
                self._save(finding)
            return history

    def write_toolchain(self, detail: dict) -> Path:
        """corpus/toolchains/<id>.json: what a toolchain id in finding.json names (versions, commits, codegen)."""
        path = self.root / TOOLCHAINS / f"{detail['id']}.json"
        with self._locked():
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, json.dumps(detail, indent=1, sort_keys=True) + "\n")
        return path

    def toolchain(self, ident: str) -> dict | None:
        try:
            return json.loads((self.root / TOOLCHAINS / f"{ident}.json").read_text())
        except (FileNotFoundError, ValueError):
            return None

    def merge_from(self, other: "Corpus") -> "tuple[int, int]":
        """Fold other's findings into this corpus (merge.py says how); returns (signatures added, merged)."""
        return merge(self, other)

    def clean_temp(self) -> "list[Path]":
        """Remove leftover `.tmp-` entries, but only if the lock is free: a live writer's temps are not garbage.

        Returns the removed paths (empty when a writer holds the lock or the corpus does not exist yet)."""
        if not self._check_root():
            return []
        removed = []
        with self._locked(blocking=False) as got:
            if not got:
                return []
            for dirpath, dirnames, filenames in os.walk(self.root):
                for name in [n for n in dirnames if is_temp(n)]:
                    shutil.rmtree(os.path.join(dirpath, name), ignore_errors=True)
                    removed.append(Path(dirpath, name))
                dirnames[:] = [n for n in dirnames if not is_temp(n)]
                for name in filenames:
                    if is_temp(name):
                        os.unlink(os.path.join(dirpath, name))
                        removed.append(Path(dirpath, name))
        return removed
