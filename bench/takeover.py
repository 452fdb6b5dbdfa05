"""What a pair of releases' scans says of a check gone and a check new: the features
bench/lineage-fit weighs (an experiment of round 16, kept to be run again).

`lineage` follows a check through the releases by rules: the same words, the same function,
the same guard. They find under half of the successors people find when they read both
releases' code. This measures whether a score fitted on the labelled samples (logistic
regression over what a pair shares: rare words, text, file, function, class, exception, what
the guard tests, the placeholders, the settings named; whether the function lost the one and
gained the other alone; how much each looks like a sibling of another check) finds the rest.
It did not (see bench/lineage-fit): where the rules link nothing, its best guesses were right
about half of the time, so it names no successor in the content.
"""

import math
from collections import Counter, defaultdict
from dataclasses import dataclass
from difflib import SequenceMatcher

from errorkb.sources.chronicle import _Release
from errorkb.sources.lineage import (
    Features,
    Wording,
    guard_evidence,
)

# How many candidates, by the cheap score, each gone check is weighed against in full
SHORTLIST = 30
# How many checks sharing the most rare words a check's text is compared with for `family`
FAMILY = 20

Key = tuple[str, str]
# What `Pair.vector` measures of a pair, in the order the weights are fitted and kept
FEATURES = (
    "text", "words", "words_all", "same_path", "same_dir", "same_function", "same_name",
    "same_class", "same_exception", "same_kind", "tested", "holes", "settings", "atoms",
    "one_for_one", "function_gone", "file_gone", "gained_here", "old_log", "text_in_place",
    "words_in_function", "new_family", "old_family",
)  # fmt: skip


# One release's scan as the lineage rules read it (tidy's view: sites by message shape, DEBUG
# lines left out, the functions printed from in many files, what each function prints)
Release = _Release


_FEATURES: dict[tuple[int, Key], Features] = {}


def _features(release: Release, key: Key) -> Features:
    found = _FEATURES.get((id(release), key))
    if found is None:
        wording = Wording(key, release.by_key[key], "", "", 0, 0)
        found = _FEATURES[(id(release), key)] = Features.of(wording, release.common)
    return found


@dataclass
class Pair:
    """Two releases in a row: the checks of the second that the first did not print are the
    candidates, and how rare each word is across both says how much sharing it tells."""

    before: Release
    after: Release

    def __post_init__(self) -> None:
        self.new = sorted(k for k in self.after.by_key if k not in self.before.by_key)
        keys = set(self.before.by_key) | set(self.after.by_key)
        df: Counter = Counter()
        for key in keys:
            release = self.before if key in self.before.by_key else self.after
            df.update(_features(release, key).words)
        self.idf = {w: math.log((len(keys) + 1) / (n + 1)) for w, n in df.items()}
        self.gained: dict[str, set[Key]] = {
            name: keys - self.before.functions.get(name, set())
            for name, keys in self.after.functions.items()
        }
        self.lost: dict[str, set[Key]] = {
            name: keys - self.after.functions.get(name, set())
            for name, keys in self.before.functions.items()
        }

    def family(self, side: str, feats: Features, but: set[Key]) -> float:
        """How alike `feats`' text is to the closest other check of one release (`side`),
        among those sharing its rarest words: a new check much like one printed before is
        a sibling of that one (the same refusal for another method), and an old check much
        like one still printed was one of a family that goes on without it."""
        release: Release = getattr(self, side)
        shared: Counter = Counter()
        for word in feats.words:
            for key in _by_word(release).get(word, ()):
                shared[key] += self.idf.get(word, 0.0)
        best = 0.0
        for key, _ in shared.most_common(FAMILY + len(but)):
            if key not in but:
                best = max(best, _ratio(feats.tokens, _features(release, key).tokens))
        return best

    def weight(self, words: frozenset[str]) -> float:
        return sum(self.idf.get(w, 0.0) for w in words)

    def cheap(self, old: Features, new: Features) -> float:
        """Shared rare words, and the same place: what picks the shortlist."""
        shared = self.weight(old.words & new.words)
        smaller = min(self.weight(old.words), self.weight(new.words)) or 1.0
        return (
            shared / smaller
            + 0.3 * bool(old.paths & new.paths)
            + 0.3 * bool(old.qualified & new.qualified)
        )

    def vector(self, old_key: Key, new_key: Key) -> list[float]:
        old, new = _features(self.before, old_key), _features(self.after, new_key)
        shared = self.weight(old.words & new.words)
        smaller = min(self.weight(old.words), self.weight(new.words)) or 1.0
        text = _ratio(old.tokens, new.tokens)
        same_path = float(bool(old.paths & new.paths))
        same_function = float(bool(old.qualified & new.qualified))
        dirs = {p.rpartition("/")[0] for p in old.paths} & {p.rpartition("/")[0] for p in new.paths}
        classes = {q.rpartition(".")[0] for q in old.qualified if "." in q}
        one_for_one = any(
            self.lost.get(name) == {old_key} and self.gained.get(name) == {new_key}
            for name in old.qualified & new.qualified
        )
        gained_here = {k for name in old.qualified for k in self.gained.get(name, ())}
        values = {
            "text": text,
            "words": shared / smaller,
            "words_all": shared / (self.weight(old.words | new.words) or 1.0),
            "same_path": same_path,
            "same_dir": float(bool(dirs)),
            "same_function": same_function,
            "same_name": float(bool(old.functions & new.functions)),
            "same_class": float(bool(classes & {q.rpartition(".")[0] for q in new.qualified})),
            "same_exception": float(old.exception == new.exception),
            "same_kind": float(old.kind == new.kind),
            "tested": _jaccard(old.tested, new.tested),
            "holes": _jaccard(old.holes, new.holes),
            "settings": _jaccard(old.names | old.settings, new.names | new.settings),
            "atoms": float(bool(guard_evidence(old, new))),
            "one_for_one": float(one_for_one),
            "function_gone": float(not old.qualified & set(self.after.functions)),
            "file_gone": float(not old.paths & self.after.paths),
            "gained_here": min(len(gained_here), 5) / 5,
            "old_log": float(old.kind == "log"),
            "text_in_place": text * same_path,
            "words_in_function": shared / smaller * same_function,
            "new_family": self.family("before", new, {old_key}),
            "old_family": self.family("after", old, {new_key}),
        }
        return [values[name] for name in FEATURES]

    def shortlist(self, old_key: Key) -> list[Key]:
        """The new checks worth weighing in full for `old_key`, by the cheap score."""
        old = _features(self.before, old_key)
        ranked = sorted(
            ((self.cheap(old, _features(self.after, k)), k) for k in self.new), reverse=True
        )
        return [k for _, k in ranked[:SHORTLIST]]


def _ratio(a: tuple[str, ...], b: tuple[str, ...]) -> float:
    lower_a, lower_b = [t.lower() for t in a], [t.lower() for t in b]
    return SequenceMatcher(None, lower_a, lower_b, autojunk=False).ratio()


_BY_WORD: dict[int, dict[str, list[Key]]] = {}


def _by_word(release: Release) -> dict[str, list[Key]]:
    """A release's message shapes by the words of their text."""
    found = _BY_WORD.get(id(release))
    if found is None:
        found = _BY_WORD[id(release)] = defaultdict(list)
        for key in release.by_key:
            for word in _features(release, key).words:
                found[word].append(key)
    return found


def _jaccard(a: frozenset, b: frozenset) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0
