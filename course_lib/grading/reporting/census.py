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
3. **Hidden tests**: each hidden test with how many students ran and failed it, most failed first.
4. **Configurations**: the tests CSV records the configuration each test drew for each student (its
   sizes, shapes and parameters, e.g. ``bodies[54x4], tile=16``:
   :func:`~course_lib.grading.results.details.configuration_of`); per question, each test's
   configurations with how many students ran it and how many failed, the most failed (by share, then
   count) first; a test left unanswered, or not run after a crash, is not counted. A hidden test draws
   a configuration per student, so most of its configurations are met once: each of its parameters is
   also counted on its own (an array's first dimension, a number's value), integers that take many
   values grouped in ranges of powers of two (``bodies[33-64x4]``), so that the sizes that fail most
   show. A tests CSV written before the configuration was recorded has no such tables (the section
   says so).
"""

from __future__ import annotations

import html
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from ..core import NOT_ANSWERED

__all__ = ["QuestionCensus", "WRONG_TECHNIQUES", "census", "census_html", "config_parameters", "missed_features",
           "wrong_technique"]

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
    (r"shared accesses", "above", "redundant work: each staged input read by several threads of one output"),
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
    configurations : list
        ``(test name, configuration, ran, failed)`` per test and configuration it drew, most failed (by
        share, then count) first.
    parameters : list
        ``(test name, parameter value or range, ran, failed)`` per hidden test whose configuration differs
        between students, one row per value (or range) of each parameter, most failed first.
    """

    question: str
    techniques: list = field(default_factory=list)
    wrong: Counter = field(default_factory=Counter)
    hidden: list = field(default_factory=list)
    configurations: list = field(default_factory=list)
    parameters: list = field(default_factory=list)


def _features_of(question_id: str) -> dict:
    """``technique test name -> [feature names]`` of a question's signature tests (``{}`` for an unknown
    question: a tests CSV of another version of the course still gets the rest of the census)."""
    from ..core import get_question

    try:
        question = get_question(question_id)
    except ValueError:
        return {}
    return {t.name: [f.name for f in getattr(t.judge, "features", ())] for t in question.tests if t.technique}


#: One plain parameter of a configuration: ``name[AxB]`` (an array's shape) or ``name=value`` (a scalar).
_PARAMETER = re.compile(r"(?P<name>\w+)(?:\[(?P<shape>\d+(?:x\d+)*)\]|=(?P<value>[^,()\[\]{}]*))")
#: A parameter taking more integer values than this among a test's students is counted in ranges.
MAX_VALUES = 6
#: Rows of each census table shown (the rest are counted).
SHOWN_ROWS = 12


def _top_level_parts(configuration: str) -> list:
    """A configuration split at its ``", "`` outside brackets."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(configuration):
        depth += (char in "([{") - (char in ")]}")
        if depth == 0 and configuration.startswith(", ", i):
            parts.append(configuration[start:i])
            start = i + 2
    parts.append(configuration[start:])
    return parts


def config_parameters(configuration: str) -> list:
    """``[(name, value, shape rest)]`` of a configuration's plain parameters: ``bodies[54x4], tile=16`` ->
    ``[("bodies", "54", "x4"), ("tile", "16", None)]`` (an array's first dimension and the rest of its
    shape, a scalar's value and None). Nested parts (a tuple, the several configurations of a signature
    test) are left out."""
    found = []
    for part in _top_level_parts(configuration or ""):
        match = _PARAMETER.fullmatch(part)
        if not match:
            continue
        if match.group("shape") is not None:
            first, _, rest = match.group("shape").partition("x")
            found.append((match.group("name"), first, "x" + rest if rest else ""))
        else:
            found.append((match.group("name"), match.group("value"), None))
    return found


def _power_of_two_range(n: int) -> str:
    """The range of powers of two holding ``n``: ``0``, ``1``, ``2``, ``3-4``, ``5-8``, ``9-16``..."""
    if n <= 2:
        return str(n)
    high = 1 << (n - 1).bit_length()
    return f"{high // 2 + 1}-{high}"


def _label(name: str, value: str, rest) -> str:
    return f"{name}={value}" if rest is None else f"{name}[{value}{rest}]"


def _by_parameter(rows) -> list:
    """``[(parameter value or range, ran, failed)]`` of one test's rows (each with a plain configuration)."""
    values = defaultdict(list)  # name -> [(value, rest, failed)]
    for row in rows:
        for name, value, rest in config_parameters(row["config"]):
            values[name].append((value, rest, row["passed"] != "1"))
    counts = defaultdict(lambda: [0, 0])
    for name, seen in values.items():
        distinct = {value for value, _, _ in seen}
        in_ranges = len(distinct) > MAX_VALUES and all(v.isdigit() for v in distinct)
        rests = {rest for _, rest, _ in seen}
        for value, rest, failed in seen:
            if in_ranges:
                if len(rests) > 1:
                    rest = "x..."  # the other dimensions vary too: the range is of the first one
                value = _power_of_two_range(int(value))
            key = _label(name, value, rest)
            counts[key][0] += 1
            counts[key][1] += failed
    return [(key, ran, failed) for key, (ran, failed) in counts.items()]


def _most_failed_first(item):
    ran, failed = item[-2], item[-1]
    return -failed / max(ran, 1), -failed


def _natural(text: str) -> list:
    """Sort key putting ``bodies[9x4]`` before ``bodies[12x4]`` and ``ps1.q2`` before ``ps1.q10``."""
    return [(0, int(x), "") if x.isdigit() else (1, 0, x) for x in re.split(r"(\d+)", text)]


def census(test_rows) -> list:
    """The census of a tests CSV's rows (:func:`~course_lib.grading.results.details.read_outcomes`), one
    :class:`QuestionCensus` per question, in question order."""
    by_question = defaultdict(list)
    for row in test_rows:
        by_question[row["question"]].append(row)
    result = []
    for question in sorted(by_question, key=_natural):
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
        test_order = list(dict.fromkeys(r["test"] for r in rows))
        # a test left unanswered, or not run after a crash, says nothing of its configuration
        configured = [r for r in rows if r.get("config") and not r["message"].startswith(("not run", NOT_ANSWERED))]
        configurations = defaultdict(lambda: [0, 0])
        for row in configured:
            configurations[row["test"], row["config"]][0] += 1
            configurations[row["test"], row["config"]][1] += row["passed"] != "1"
        entry.configurations = sorted(((t, c, ran, failed) for (t, c), (ran, failed) in configurations.items()),
                                      key=lambda x: (*_most_failed_first(x), test_order.index(x[0]), _natural(x[1])))
        for test in test_order:
            drawn = [r for r in configured if r["test"] == test and r["hidden"] == "1"]
            if len({r["config"] for r in drawn}) > 1:
                entry.parameters.extend((test, *item) for item in _by_parameter(drawn))
        entry.parameters.sort(key=lambda x: (*_most_failed_first(x), test_order.index(x[0]), _natural(x[1])))
        if entry.techniques or entry.hidden or entry.configurations:
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
            parts.append("<table><tr><th>hidden test</th><th>failed</th></tr>" + "".join(
                f"<tr><td>{_e(t)}</td><td class='num'>{_share(failed, ran)}</td></tr>" for t, ran, failed in
                entry.hidden) + "</table>")
        if entry.configurations:
            parts.append(_table("configurations drawn, most failed first", ("test", "configuration"),
                                entry.configurations))
        if entry.parameters:
            parts.append(_table("hidden tests' parameters, each on its own, most failed first",
                                ("hidden test", "parameter"), entry.parameters))
    if not any(entry.configurations for entry in entries):
        parts.append("<p class='muted'>No configuration recorded (a tests CSV written before the grader recorded "
                     "the configuration each test drew): grade again to see the results per configuration.</p>")
    return "\n".join(parts)


def _table(caption: str, headers: tuple, items: list) -> str:
    """A census table of ``(test, what, ran, failed)`` items, the first :data:`SHOWN_ROWS` shown."""
    rows = "".join(f"<tr><td>{_e(test)}</td><td><code>{_e(what)}</code></td><td class='num'>"
                   f"{_share(failed, ran)}</td></tr>" for test, what, ran, failed in items[:SHOWN_ROWS])
    more = len(items) - SHOWN_ROWS
    rest = (f"<tr><td colspan='3' class='muted'>and {more} more, failed less often</td></tr>" if more > 0 else "")
    return (f"<table><caption>{_e(caption)}</caption><tr><th>{_e(headers[0])}</th><th>{_e(headers[1])}</th>"
            f"<th>failed</th></tr>{rows}{rest}</table>")
