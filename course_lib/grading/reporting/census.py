"""The technique census of a class: per question, who used the technique taught, what the others did,
and which hidden configurations failed most. A section of the class report (:mod:`.classreport`),
drawn from the tests CSV (:mod:`course_lib.grading.results.details`) and the questions' signatures
(:mod:`course_lib.grading.authoring.signature`).

1. **Technique features**: for each technique test, the share of the students measured who passed it;
   for a signature test, the share meeting each of its features. A student whose signature test failed
   on its features met every feature its failure does not name (a signature stops at the first
   configuration that misses, and the tests CSV keeps the first 500 characters of a message: a feature
   it cuts off counts as met). Students whose answer did not get as far as the profiler (a wrong
   result, a crash) are not measured.
2. **Wrong techniques**: each missed feature, and the side of its bound it missed on, names the
   technique the student used instead (:data:`WRONG_TECHNIQUES`: more atomics than owners is "atomics
   instead of one owner per output", a high thread span is "one thread doing the work of its block or
   group", ...), counted per question; a student may show several.
3. **Hidden configurations**: each hidden test (one drawn configuration: a size, a shape, a tile) with
   how many students ran and failed it, most failed first.
"""

from __future__ import annotations

import html
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

__all__ = ["QuestionCensus", "WRONG_TECHNIQUES", "census", "census_html", "missed_features", "wrong_technique"]

#: ``(pattern on the feature's name, side of the bound missed: "above" / "below" / "any", the technique
#: that misses it so)``; the first match names it.
WRONG_TECHNIQUES = (
    (r"atomic", "above", "atomics instead of one owner per output (or a reduction)"),
    (r"thread span|busiest", "above", "one thread doing the work of its block or group"),
    (r"SIMT efficiency", "below", "divergent lanes: a serial loop where the lanes should share the work"),
    (r"shuffle", "below", "no warp shuffles: partial sums added through memory or serially"),
    (r"shuffle", "above", "more shuffle steps than the reduction needs"),
    (r"shared bytes|staged in shared|shared-memory", "below",
     "no shared-memory staging: every thread reads its inputs from global memory"),
    (r"shared bytes", "above", "the whole input staged per block instead of one tile"),
    (r"barrier", "below", "no block barrier: the block does not stage together"),
    (r"barrier", "above", "barriers inside the inner loop"),
    (r"per request|requests per warp|load sectors|sectors per request", "any",
     "uncoalesced loads: consecutive lanes read far-apart addresses (as thread per row does)"),
    (r"global loads|bytes loaded|load ratio", "above", "no reuse: inputs loaded again from global memory"),
    (r"bytes stored", "above", "stores beyond each thread's own outputs"),
)
_MEASURED = (r": measured (?P<value>[-+\w.]+), the technique gives "
             r"(?P<wanted>at most [-+\w.]+|at least [-+\w.]+|in \[[^\]]*\])")


def _number(text: str):
    try:
        return float(text)
    except ValueError:
        return None


def missed_features(message: str, names) -> dict:
    """``feature name -> "above" / "below" / "any"``: the features a signature failure names, and the side
    of the bound each missed on (from ``measured X, the technique gives at most H`` and the like)."""
    found = {}
    for name in names:
        match = re.search(re.escape(name) + _MEASURED, message or "")
        if not match:
            continue
        value, wanted = _number(match.group("value")), match.group("wanted")
        side = "any"
        if value is not None and wanted.startswith("at most"):
            side = "above"
        elif value is not None and wanted.startswith("at least"):
            side = "below"
        elif value is not None:
            low = _number(wanted[4:-1].split(",")[0].strip())
            side = "below" if low is not None and value < low else "above"
        found[name] = side
    return found


def wrong_technique(feature: str, side: str) -> str:
    """The technique that misses ``feature`` on ``side`` (:data:`WRONG_TECHNIQUES`), else a plain
    ``"<feature> too high"`` / ``"too low"``."""
    for pattern, on, name in WRONG_TECHNIQUES:
        if re.search(pattern, feature, re.IGNORECASE) and on in ("any", side):
            return name
    return f"{feature} too {'high' if side == 'above' else 'low' if side == 'below' else 'far off'}"


@dataclass
class QuestionCensus:
    """One question's census.

    Attributes
    ----------
    question : str
    techniques : list
        ``(test name, measured students, passed, [(feature, met)])`` per technique test (features only
        for signature tests).
    wrong : Counter
        ``wrong technique -> students``.
    hidden : list
        ``(test name, ran, failed)`` per hidden test, most failed (by share) first.
    """

    question: str
    techniques: list = field(default_factory=list)
    wrong: Counter = field(default_factory=Counter)
    hidden: list = field(default_factory=list)


def _features_of(question_id: str) -> dict:
    """``technique test name -> [feature names]`` of a question's signature tests (``{}`` for an unknown
    question: a tests CSV of another version of the course still gets the rest of the census)."""
    from ..core import get_question

    try:
        question = get_question(question_id)
    except ValueError:
        return {}
    return {t.name: [f.name for f in getattr(t.judge, "features", ())] for t in question.tests if t.technique}


def census(test_rows) -> list:
    """The census of a tests CSV's rows (:func:`~course_lib.grading.results.details.read_outcomes`), one
    :class:`QuestionCensus` per question, in question order."""
    by_question = defaultdict(list)
    for row in test_rows:
        by_question[row["question"]].append(row)
    result = []
    for question in sorted(by_question, key=lambda q: [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", q)]):
        rows = by_question[question]
        features = _features_of(question)
        entry = QuestionCensus(question)
        technique_tests = sorted({r["test"] for r in rows if r["technique"] == "1"},
                                 key=lambda t: [r["test"] for r in rows].index(t))
        wrong_by_student = defaultdict(set)
        for test in technique_tests:
            names = features.get(test, [])
            measured = passed = 0
            met = Counter()
            for row in (r for r in rows if r["test"] == test):
                if row["passed"] == "1":
                    measured += 1
                    passed += 1
                    met.update(names)
                    continue
                if row["cause"] != "technique":
                    continue  # the answer did not get as far as the measurement
                measured += 1
                missed = missed_features(row["message"], names)
                met.update(n for n in names if n not in missed)
                for name, side in missed.items():
                    wrong_by_student[row["student"]].add(wrong_technique(name, side))
                if not missed:
                    wrong_by_student[row["student"]].add(f"another technique ({test})")
            entry.techniques.append((test, measured, passed, [(n, met[n]) for n in names]))
        for techniques in wrong_by_student.values():
            entry.wrong.update(techniques)
        hidden = defaultdict(lambda: [0, 0])
        for row in rows:
            if row["hidden"] == "1":
                hidden[row["test"]][0] += 1
                hidden[row["test"]][1] += row["passed"] != "1"
        entry.hidden = sorted(((t, ran, failed) for t, (ran, failed) in hidden.items()),
                              key=lambda x: (-x[2] / max(x[1], 1), -x[2], x[0]))
        if entry.techniques or entry.hidden:
            result.append(entry)
    return result


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _share(part: int, whole: int) -> str:
    return f"{part} of {whole} ({100 * part / whole:.0f}%)" if whole else "none measured"


def census_html(test_rows) -> str:
    """The class report's census section (HTML, students' text escaped)."""
    parts = ["<h2 id='census'>Technique census</h2>"]
    entries = census(test_rows)
    if not entries:
        return parts[0] + "<p>No technique or hidden test recorded (no tests CSV, or no answer ran).</p>"
    for entry in entries:
        parts.append(f"<h3>{_e(entry.question)}</h3>")
        if entry.techniques:
            parts.append("<table><tr><th>technique test / feature</th><th>students meeting it</th></tr>")
            for test, measured, passed, features in entry.techniques:
                parts.append(f"<tr><td><b>{_e(test)}</b></td><td class='num'>{_share(passed, measured)}</td></tr>")
                for name, met in features:
                    parts.append(f"<tr><td>&nbsp;&nbsp;{_e(name)}</td><td class='num'>{_share(met, measured)}"
                                 "</td></tr>")
            parts.append("</table>")
        if entry.wrong:
            parts.append("<p>Recognised wrong techniques (students): " + "; ".join(
                f"<b>{_e(name)}</b> &times; {n}" for name, n in entry.wrong.most_common()) + "</p>")
        if entry.hidden:
            parts.append("<table><tr><th>hidden configuration</th><th>failed</th></tr>" + "".join(
                f"<tr><td>{_e(t)}</td><td class='num'>{_share(failed, ran)}</td></tr>" for t, ran, failed in
                entry.hidden) + "</table>")
    return "\n".join(parts)
