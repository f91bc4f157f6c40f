"""Evaluation reports: JSON, Markdown and one self-contained HTML page with inline SVG plots.

Every renderer reads an :class:`~polydeid.evaluate.harness.EvaluationRun`, which holds counts,
rates, file names and error messages only — never document text — so no report can show an
identifier. Numbers print with three decimals; an undefined value (``None``) prints as "–".

The Markdown and HTML pages share one table model (:class:`_Table`), so both show the same
numbers: a systems-side-by-side summary, a per-category table (one row per category × system),
the "names found" counts, the files that could not be read and (not in the multi-corpus
page) the residual risk: gold identifiers leaked per language × category × format with the
upper end of their Clopper–Pearson interval (:mod:`polydeid.evaluate.leaks`). The HTML page
adds, per system, strict recall/precision bars and strict/relaxed leak bars by category and
the precision/recall over score threshold; charts are SVG built here, with titles,
descriptions, legends and printed values (never colour alone), and no script, font or image
is fetched from anywhere.
"""

from __future__ import annotations

import html
import json
import os
import re
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from polydeid.core.taxonomy import Category
from polydeid.corpora.document import ReadFailure
from polydeid.evaluate.harness import EvaluationRun, SystemResult, ThresholdPoint
from polydeid.evaluate.leaks import ALL, LEAK_DEFINITION, LeakCount, LeakTable
from polydeid.evaluate.metrics import PRF

__all__ = [
    "UNDEFINED",
    "leak_rows",
    "quality_markdown",
    "report_html",
    "report_json",
    "report_markdown",
    "write_report",
]

#: How an undefined metric (``None``) prints.
UNDEFINED = "–"

_CATEGORY_ORDER = {c.value: i for i, c in enumerate(Category)}


# --- numbers and cells -------------------------------------------------------------------


def _num(value: float | None) -> str:
    """Three decimals, or "–" when undefined."""
    return UNDEFINED if value is None else f"{value:.3f}"


def _text(value: str) -> str:
    """A one-line text cell ("–" when empty)."""
    flat = " ".join(value.split())
    return flat or UNDEFINED


def _ci(result: SystemResult) -> str:
    if result.cis is None:
        return UNDEFINED
    interval = result.cis["strict"]["f1"]
    if interval.low is None or interval.high is None:
        return UNDEFINED
    return f"{interval.low:.3f}–{interval.high:.3f}"


def _ci_setting(result: SystemResult) -> str | None:
    cis = result.cis
    if cis is None:
        return None
    return (
        f"{cis.level * 100:g} % percentile bootstrap over {cis.n_documents} documents, "
        f"{cis.n_resamples} resamples, seed {cis.seed}"
    )


# --- the shared table model --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Table:
    """A table of already formatted cells; the first ``label_columns`` columns are labels."""

    caption: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    label_columns: int = 1


_SUMMARY_HEADER = (
    "System",
    "Strict P",
    "Strict R",
    "Strict F1",
    "Relaxed P",
    "Relaxed R",
    "Relaxed F1",
    "Span strict F1",
    "Span overlap F1",
    "Token F1",
    "Coarse strict F1",
    "Over-redaction",
    "Facts changed",
    "Seconds",
    "Strict F1 CI",
)

_CATEGORY_HEADER = (
    "Category",
    "System",
    "Gold",
    "Predicted",
    "Strict P",
    "Strict R",
    "Strict F1",
    "Relaxed P",
    "Relaxed R",
    "Relaxed F1",
    "Leak strict",
    "Leak relaxed",
)


def _summary_row(result: SystemResult) -> tuple[str, ...]:
    s = result.scores
    strict, relaxed = s.strict.micro, s.relaxed.micro
    return (
        _text(result.name),
        *(_num(v) for v in (strict.precision, strict.recall, strict.f1)),
        *(_num(v) for v in (relaxed.precision, relaxed.recall, relaxed.f1)),
        _num(s.span_strict.f1),
        _num(s.span_overlap.f1),
        _num(s.token.micro.f1),
        _num(s.coarse_strict.micro.f1),
        _num(s.chars.over_redaction),
        _num(s.facts.changed_rate),
        f"{result.seconds:.3f}",
        _ci(result),
    )


def _summary_table(run: EvaluationRun) -> _Table:
    caption = f"Systems on {_text(run.corpus)}: micro averages over categories"
    return _Table(caption, _SUMMARY_HEADER, tuple(_summary_row(r) for r in run.systems))


def _category_key(label: str) -> tuple[int, str]:
    return _CATEGORY_ORDER.get(label, len(_CATEGORY_ORDER)), label


def _categories(systems: Iterable[SystemResult]) -> tuple[str, ...]:
    """Labels with a gold or predicted span in any system, in taxonomy order."""
    labels = {
        label
        for result in systems
        for table in (result.scores.strict, result.scores.relaxed)
        for label, prf in table.per_label.items()
        if prf.gold or prf.predicted
    }
    return tuple(sorted(labels, key=_category_key))


def _category_row(label: str, result: SystemResult) -> tuple[str, ...]:
    strict: PRF = result.scores.strict[label]
    relaxed: PRF = result.scores.relaxed[label]
    return (
        _text(label),
        _text(result.name),
        str(strict.gold),
        str(strict.predicted),
        *(_num(v) for v in (strict.precision, strict.recall, strict.f1)),
        *(_num(v) for v in (relaxed.precision, relaxed.recall, relaxed.f1)),
        _num(strict.leak),
        _num(relaxed.leak),
    )


def _category_table(run: EvaluationRun) -> _Table:
    rows = tuple(
        _category_row(label, result) for label in _categories(run.systems) for result in run.systems
    )
    caption = f"Per category on {_text(run.corpus)}: strict and relaxed scores, leak = 1 − recall"
    return _Table(caption, _CATEGORY_HEADER, rows, label_columns=2)


def _level(table: LeakTable) -> str:
    return f"{table.level * 100:g} %"


def _leak_cells(count: LeakCount, level: float) -> tuple[str, ...]:
    return (
        str(count.gold),
        str(count.leaked),
        _num(count.rate),
        _num(count.upper(level)),
        str(count.whole),
        _num(count.whole_upper(level)),
    )


def leak_rows(table: LeakTable) -> list[tuple[tuple[str, str, str], LeakCount]]:
    """The rows of a residual-risk table: the total, then per language its total (where
    there are several) and its cells (category in taxonomy order, then format); summed axes
    read :data:`~polydeid.evaluate.leaks.ALL`."""
    rows = [((ALL, ALL, ALL), table.total())]
    langs = sorted({lang for lang, _, _ in table.cells})
    for lang in langs:
        cells = [(cell, count) for cell, count in table.cells.items() if cell[0] == lang]
        cells.sort(key=lambda item: (_category_key(item[0][1]), item[0][2]))
        if len(langs) > 1 and len(cells) > 1:
            rows.append(((lang, ALL, ALL), table.total(lang=lang)))
        rows += cells
    return rows


def _leak_header(level: str) -> tuple[str, ...]:
    return (
        "Language",
        "Category",
        "Format",
        "System",
        "Gold",
        "Leaked",
        "Leak rate",
        f"Leak rate, {level} upper bound",
        "Wholly leaked",
        f"Wholly leaked, {level} upper bound",
    )


def _leak_table(run: EvaluationRun) -> _Table:
    rows = []
    for result in run.systems:
        level = result.leaks.level
        for (lang, category, fmt), count in leak_rows(result.leaks):
            rows.append(
                (
                    _text(lang),
                    _text(category),
                    _text(fmt),
                    _text(result.name),
                    *_leak_cells(count, level),
                )
            )
    level = _level(run.systems[0].leaks) if run.systems else "95 %"
    caption = (
        f"Residual risk on {_text(run.corpus)}: gold identifiers leaked, with the upper end of "
        f"the {level} two-sided Clopper–Pearson interval of the rate"
    )
    return _Table(caption, _leak_header(level), tuple(rows), label_columns=4)


def _leak_notes(run: EvaluationRun) -> tuple[str, ...]:
    level = _level(run.systems[0].leaks) if run.systems else "95 %"
    return (
        f"Leak: {LEAK_DEFINITION}. Every prediction covers, in the scored categories or not.",
        f"Upper bound: the upper end of the {level} two-sided Clopper–Pearson interval (exact "
        "binomial) of the leak rate, counting gold identifiers as independent draws; "
        f"{ALL} marks a row summed over that column.",
    )


def _failure_table(failures: Sequence[ReadFailure]) -> _Table:
    rows = tuple((_text(f.file), _text(f.error.code), _text(_failure_message(f))) for f in failures)
    return _Table("Files that could not be read", ("File", "Error code", "Message"), rows)


def _failure_message(failure: ReadFailure) -> str:
    error = failure.error
    return f"{error.location}: {error.message}" if error.location else error.message


def _names_line(result: SystemResult) -> str:
    n = result.scores.names
    return (
        f"{_text(result.name)}: {n.gold_persons_found} of {n.gold_persons} gold person spans "
        f"touched ({_num(n.found_rate)}); {n.names_on_non_persons} of {n.predicted_names} "
        f"predicted name spans on non-persons ({_num(n.non_person_rate)})"
    )


def _metadata(run: EvaluationRun) -> tuple[tuple[str, str], ...]:
    return (
        ("Corpus", _text(run.corpus)),
        ("Format", _text(run.format)),
        ("Documents", str(run.documents)),
        ("Gold spans", str(run.gold_spans)),
        ("Clinical facts", _text(run.facts_reference)),
        (
            "Scored categories",
            "all"
            if run.scored is None
            else f"those of the groups scheme {_text(run.scheme)} marks: {', '.join(run.scored)}",
        ),
        ("Machine", _text(run.machine)),
        ("Date", _text(run.created)),
    )


def _notes(run: EvaluationRun) -> tuple[str, ...]:
    by_setting: dict[str, list[str]] = {}
    for result in run.systems:
        setting = _ci_setting(result)
        if setting is not None:
            by_setting.setdefault(setting, []).append(_text(result.name))
    ci = [f"{', '.join(names)}: {setting}" for setting, names in by_setting.items()]
    unscored = [
        f"{_text(r.name)}: " + ", ".join(f"{label} {n}" for label, n in r.unscored.items())
        for r in run.systems
        if r.unscored
    ]
    return (
        f"A dash ({UNDEFINED}) marks an undefined value: precision when nothing was predicted; "
        "recall, F1 and leak when there is no gold span.",
        "Strict F1 CI: " + ("; ".join(ci) if ci else "not computed") + ".",
        *(
            (
                "Not scored (categories this corpus does not annotate, still counted in "
                "over-redaction and facts changed; and dates of a granularity its guideline "
                "leaves unmarked, such as a year alone, counted nowhere): "
                + "; ".join(unscored)
                + ".",
            )
            if unscored
            else ()
        ),
    )


# --- JSON ----------------------------------------------------------------------------------


def report_json(run: EvaluationRun) -> str:
    """The run as JSON: ``run.to_dict()`` with sorted keys, indented by 2, newline-terminated."""
    return json.dumps(run.to_dict(), indent=2, sort_keys=True, allow_nan=False) + "\n"


# --- Markdown ------------------------------------------------------------------------------

_MD_SPECIAL = re.compile(r"[\\`*|<>\[\]#]|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")


def _md(value: str) -> str:
    """Text with Markdown's active characters escaped."""
    return _MD_SPECIAL.sub(lambda m: "\\" + m.group(0), value)


def _md_table(table: _Table) -> str:
    align = [":--" if i < table.label_columns else "--:" for i in range(len(table.header))]
    lines = [
        "| " + " | ".join(_md(h) for h in table.header) + " |",
        "| " + " | ".join(align) + " |",
        *("| " + " | ".join(_md(c) for c in row) + " |" for row in table.rows),
    ]
    return "\n".join(lines)


def _md_fence(text: str) -> str:
    """``text`` as a fenced code block (one pair of wrapping backticks is dropped first)."""
    if len(text) > 1 and text[0] == text[-1] == "`" and text.count("`") == 2:
        text = text[1:-1]
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}\n{fence}"


def _md_sections(run: EvaluationRun, level: int) -> list[str]:
    """Systems, summary, per-category, names and failures, headed at ``level``."""
    h = "#" * level
    failures = (
        _md_table(_failure_table(run.failures)) if run.failures else "Unreadable files: none."
    )
    return [
        "Systems:",
        "\n".join(f"- **{_md(_text(r.name))}**: {_md(_text(r.description))}" for r in run.systems),
        f"{h} Summary",
        _md_table(_summary_table(run)),
        "\n".join(f"- {_md(note)}" for note in _notes(run)),
        f"{h} Per category",
        _md_table(_category_table(run)) if _categories(run.systems) else "No category present.",
        f"{h} Names found",
        "\n".join(f"- {_md(_names_line(r))}" for r in run.systems),
        f"{h} Unreadable files",
        failures,
    ]


def _md_leaks(run: EvaluationRun, level: int) -> list[str]:
    """The residual-risk section, headed at ``level``."""
    if not run.systems:
        return []
    return [
        f"{'#' * level} Residual risk: leaks",
        "\n".join(f"- {_md(note)}" for note in _leak_notes(run)),
        _md_table(_leak_table(run)),
    ]


def report_markdown(run: EvaluationRun) -> str:
    """A Markdown report of one run (header, summary, per-category, names, failures, leaks)."""
    meta = "\n".join(f"- {key}: {_md(value)}" for key, value in _metadata(run))
    parts = [
        f"# Evaluation report: {_md(_text(run.corpus))}",
        meta,
        *_md_sections(run, 2),
        *_md_leaks(run, 2),
    ]
    return "\n\n".join(parts) + "\n"


def quality_markdown(runs: Sequence[EvaluationRun], *, title: str, command: str) -> str:
    """A multi-corpus results page (``benchmarks/results/quality.md``): one section a corpus."""
    parts = [f"# {_md(_text(title))}", "Generated with:", _md_fence(command.strip())]
    if not runs:
        parts.append("No corpus was evaluated.")
    for run in runs:
        meta = "; ".join(f"{key}: {_md(value)}" for key, value in _metadata(run)[1:])
        parts += [f"## {_md(_text(run.corpus))}", meta + ".", *_md_sections(run, 3)]
    return "\n\n".join(parts) + "\n"


# --- HTML: tables and text -----------------------------------------------------------------


def _esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def _html_table(table: _Table) -> str:
    head = "".join(f'<th scope="col">{_esc(h)}</th>' for h in table.header)
    body = "".join(f"<tr>{_html_row(row, table.label_columns)}</tr>" for row in table.rows)
    return (
        f'<div class="scroll"><table><caption>{_esc(table.caption)}</caption>'
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"
    )


def _html_row(row: Sequence[str], label_columns: int) -> str:
    cells = []
    for i, cell in enumerate(row):
        if i == 0:
            cells.append(f'<th scope="row">{_esc(cell)}</th>')
        elif i < label_columns:
            cells.append(f"<td>{_esc(cell)}</td>")
        else:
            cells.append(f'<td class="num">{_esc(cell)}</td>')
    return "".join(cells)


# --- HTML: SVG charts ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Series:
    """One bar or line series: legend name, value prefix, colour, whether hatched/dashed."""

    name: str
    short: str
    colour: str
    alternate: bool
    values: tuple[float | None, ...]


# Okabe–Ito colours (distinguishable with colour-vision deficiencies); the second series is
# also hatched (bars) or dashed with square markers (lines), and every value is printed.
_BLUE, _VERMILION, _VERMILION_LIGHT = "#0072B2", "#D55E00", "#FBE3D4"
_LABEL_W, _PLOT_W, _VALUE_W = 170, 340, 130
_BAR_H, _BAR_GAP, _ROW_PAD, _TOP = 12, 3, 10, 52
_TICKS = (0.0, 0.25, 0.5, 0.75, 1.0)


def _svg_open(chart_id: str, width: int, height: int, title: str, desc: str) -> str:
    return (
        f'<svg role="img" aria-labelledby="{chart_id}-t {chart_id}-d" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}">'
        f'<title id="{chart_id}-t">{_esc(title)}</title>'
        f'<desc id="{chart_id}-d">{_esc(desc)}</desc>'
        f'<defs><pattern id="{chart_id}-hatch" width="6" height="6" '
        f'patternUnits="userSpaceOnUse" patternTransform="rotate(45)">'
        f'<rect width="6" height="6" fill="{_VERMILION_LIGHT}"/>'
        f'<line x1="0" y1="0" x2="0" y2="6" stroke="{_VERMILION}" stroke-width="3"/>'
        f"</pattern></defs>"
    )


def _bar_fill(chart_id: str, series: _Series) -> str:
    return f"url(#{chart_id}-hatch)" if series.alternate else series.colour


def _bar_legend(chart_id: str, series: Sequence[_Series]) -> str:
    parts = []
    for i, s in enumerate(series):
        x = _LABEL_W + i * 170
        parts.append(
            f'<rect x="{x}" y="6" width="14" height="14" fill="{_bar_fill(chart_id, s)}" '
            f'stroke="{s.colour}"/>'
            f'<text x="{x + 20}" y="17">{_esc(s.short)} = {_esc(s.name)}</text>'
        )
    return "".join(parts)


def _grid_line(x1: float, y1: float, x2: float, y2: float) -> str:
    return f'<line x1="{x1:g}" y1="{y1:g}" x2="{x2:g}" y2="{y2:g}" stroke="#d8d8d8"/>'


def _x_grid(height: int) -> str:
    parts = []
    for t in _TICKS:
        x = _LABEL_W + t * _PLOT_W
        parts.append(
            _grid_line(x, _TOP - 8, x, height - 4)
            + f'<text x="{x:g}" y="{_TOP - 12}" text-anchor="middle" class="tick">{t:g}</text>'
        )
    return "".join(parts)


def _bar(chart_id: str, series: _Series, category: str, value: float | None, y: float) -> str:
    label = f"{series.short} {_num(value)}"
    text_y = y + _BAR_H - 2
    if value is None:
        return (
            f'<text x="{_LABEL_W + 4}" y="{text_y:g}" class="value">'
            f"{_esc(label)} (undefined)</text>"
        )
    width = max(0.0, min(1.0, value)) * _PLOT_W
    return (
        f'<rect class="bar s-{_esc(series.short)}" x="{_LABEL_W}" y="{y:g}" '
        f'width="{width:.1f}" height="{_BAR_H}" fill="{_bar_fill(chart_id, series)}" '
        f'stroke="{series.colour}"><title>{_esc(category)}: {_esc(series.name)} '
        f"{_num(value)}</title></rect>"
        f'<text x="{_LABEL_W + width + 4:.1f}" y="{text_y:g}" class="value">{_esc(label)}</text>'
    )


def _bar_chart(
    chart_id: str, title: str, categories: Sequence[str], series: Sequence[_Series]
) -> str:
    """Horizontal bars: one row per category, one bar per series, values printed."""
    row_h = len(series) * (_BAR_H + _BAR_GAP) + _ROW_PAD
    height = _TOP + row_h * len(categories) + 8
    width = _LABEL_W + _PLOT_W + _VALUE_W
    desc = (
        f"Horizontal bars for {len(categories)} categories, scale 0 to 1; "
        + ", ".join(f"{s.short} is {s.name}" for s in series)
        + "; each bar's value is printed beside it, and the table above lists every value."
    )
    parts = [_svg_open(chart_id, width, height, title, desc), _bar_legend(chart_id, series)]
    parts.append(_x_grid(height))
    for row, category in enumerate(categories):
        y0 = _TOP + row * row_h
        parts.append(
            f'<text x="{_LABEL_W - 8}" y="{y0 + row_h / 2 + 4:g}" text-anchor="end" '
            f'class="cat">{_esc(category)}</text>'
        )
        for i, s in enumerate(series):
            y = y0 + _ROW_PAD / 2 + i * (_BAR_H + _BAR_GAP)
            parts.append(_bar(chart_id, s, category, s.values[row], y))
    parts.append("</svg>")
    return "".join(parts)


_LINE_W, _LINE_H = 640, 300
_LINE_LEFT, _LINE_RIGHT, _LINE_TOP, _LINE_BOTTOM = 56, 24, 44, 44


def _line_xy(threshold: float, value: float) -> tuple[float, float]:
    plot_w = _LINE_W - _LINE_LEFT - _LINE_RIGHT
    plot_h = _LINE_H - _LINE_TOP - _LINE_BOTTOM
    return _LINE_LEFT + threshold * plot_w, _LINE_TOP + (1.0 - value) * plot_h


def _line_axes() -> str:
    parts = []
    for t in (0.0, 0.2, 0.4, 0.6, 0.8, 1.0):
        x, y_bottom = _line_xy(t, 0.0)
        parts.append(
            _grid_line(x, _LINE_TOP, x, y_bottom)
            + f'<text x="{x:g}" y="{y_bottom + 16:g}" text-anchor="middle" class="tick">'
            f"{t:g}</text>"
        )
    for v in _TICKS:
        x0, y = _line_xy(0.0, v)
        x1, _ = _line_xy(1.0, v)
        parts.append(
            _grid_line(x0, y, x1, y)
            + f'<text x="{x0 - 6:g}" y="{y + 4:g}" text-anchor="end" class="tick">{v:g}</text>'
        )
    parts.append(
        f'<text x="{(_LINE_LEFT + _LINE_W - _LINE_RIGHT) / 2:g}" y="{_LINE_H - 6}" '
        f'text-anchor="middle" class="axis">score threshold (spans scoring at least this '
        f"count)</text>"
        f'<text x="14" y="{_LINE_H / 2:g}" text-anchor="middle" class="axis" '
        f'transform="rotate(-90 14 {_LINE_H / 2:g})">strict micro value</text>'
    )
    return "".join(parts)


def _marker(series: _Series, x: float, y: float, tip: str, css: str = "point") -> str:
    title = f"<title>{_esc(tip)}</title>"
    if series.alternate:
        return (
            f'<rect class="{css}" x="{x - 4:.1f}" y="{y - 4:.1f}" width="8" height="8" '
            f'fill="{series.colour}">{title}</rect>'
        )
    return (
        f'<circle class="{css}" cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{series.colour}">'
        f"{title}</circle>"
    )


def _runs_of_defined(
    points: Sequence[tuple[float, float | None]],
) -> list[list[tuple[float, float]]]:
    runs: list[list[tuple[float, float]]] = [[]]
    for t, v in points:
        if v is None:
            runs.append([])
        else:
            runs[-1].append((t, v))
    return [r for r in runs if r]


def _line_series(series: _Series, thresholds: Sequence[float]) -> str:
    dash = ' stroke-dasharray="6 4"' if series.alternate else ""
    parts = []
    for run in _runs_of_defined(list(zip(thresholds, series.values, strict=True))):
        coords = " ".join(f"{x:.1f},{y:.1f}" for x, y in (_line_xy(t, v) for t, v in run))
        parts.append(
            f'<polyline points="{coords}" fill="none" stroke="{series.colour}" '
            f'stroke-width="2"{dash}/>'
        )
        for t, v in run:
            x, y = _line_xy(t, v)
            parts.append(_marker(series, x, y, f"threshold {t:g}: {series.name} {_num(v)}"))
    return "".join(parts)


def _line_legend(series: Sequence[_Series]) -> str:
    parts = []
    for i, s in enumerate(series):
        x = _LINE_LEFT + i * 300
        dash = ' stroke-dasharray="6 4"' if s.alternate else ""
        last = next((v for v in reversed(s.values) if v is not None), None)
        parts.append(
            f'<line x1="{x}" y1="16" x2="{x + 28}" y2="16" stroke="{s.colour}" '
            f'stroke-width="2"{dash}/>{_marker(s, x + 14, 16, s.name, "key")}'
            f'<text x="{x + 36}" y="20">{_esc(s.name)} ({_num(last)} at the highest '
            f"threshold)</text>"
        )
    return "".join(parts)


def _curve_chart(chart_id: str, title: str, curve: Sequence[ThresholdPoint]) -> str:
    """Strict micro precision and recall against the score threshold."""
    thresholds = [p.threshold for p in curve]
    series = (
        _Series("precision", "P", _BLUE, False, tuple(p.precision for p in curve)),
        _Series("recall", "R", _VERMILION, True, tuple(p.recall for p in curve)),
    )
    desc = (
        f"Lines over {len(curve)} score thresholds: precision solid with circles, recall dashed "
        "with squares; each point's value is in its tooltip and in the table below."
    )
    parts = [_svg_open(chart_id, _LINE_W, _LINE_H, title, desc), _line_axes()]
    parts += [_line_series(s, thresholds) for s in series]
    parts += [_line_legend(series), "</svg>"]
    return "".join(parts)


def _curve_table(result: SystemResult) -> _Table:
    rows = tuple(
        (f"{p.threshold:.1f}", _num(p.precision), _num(p.recall), str(p.predicted))
        for p in result.curve
    )
    header = ("Threshold", "Precision", "Recall", "Predicted spans")
    return _Table(f"{_text(result.name)}: strict micro P/R by score threshold", header, rows)


# --- HTML: the page ------------------------------------------------------------------------

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1b1b;
background:#fff;max-width:76rem;margin:0 auto;padding:1rem 1.5rem 3rem;line-height:1.45}
h1{font-size:1.6rem}h2{font-size:1.3rem;margin-top:2.2rem;border-bottom:1px solid #ccc}
h3{font-size:1.1rem;margin-top:1.6rem}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.15rem 1rem}dt{font-weight:600}
dd{margin:0}
.scroll{overflow-x:auto;margin:.6rem 0}
table{border-collapse:collapse;font-size:.86rem}
caption{text-align:left;font-weight:600;padding:.3rem 0}
th,td{padding:.25rem .55rem;border-bottom:1px solid #ddd;white-space:nowrap}
thead th{background:#f2f2f2;border-bottom:2px solid #999;text-align:left}
tbody th{text-align:left;font-weight:600}
td.num{text-align:right;font-variant-numeric:tabular-nums}
tbody tr:nth-child(even){background:#fafafa}
figure{margin:1rem 0}figcaption{font-size:.9rem;color:#444}
svg{max-width:100%;height:auto;display:block}
svg text{font-size:12px;fill:#1b1b1b}svg .tick,svg .value{font-size:11px}
details{margin:.5rem 0}
""".strip()


def _html_meta(run: EvaluationRun) -> str:
    rows = "".join(f"<dt>{_esc(k)}</dt><dd>{_esc(v)}</dd>" for k, v in _metadata(run))
    systems = "".join(
        f"<li><strong>{_esc(r.name)}</strong>: {_esc(_text(r.description))}</li>"
        for r in run.systems
    )
    return f"<dl>{rows}</dl><h2>Systems</h2><ul>{systems}</ul>"


def _figure(caption: str, svg: str) -> str:
    return f"<figure>{svg}<figcaption>{_esc(caption)}</figcaption></figure>"


def _category_figures(index: int, result: SystemResult, categories: Sequence[str]) -> str:
    """Strict recall/precision bars and strict/relaxed leak bars, one row per category."""
    strict, relaxed = result.scores.strict, result.scores.relaxed
    recall = tuple(strict[c].recall for c in categories)
    precision = tuple(strict[c].precision for c in categories)
    pr = (
        _Series("strict recall", "R", _BLUE, False, recall),
        _Series("strict precision", "P", _VERMILION, True, precision),
    )
    leak = (
        _Series("strict leak", "S", _BLUE, False, tuple(strict[c].leak for c in categories)),
        _Series("relaxed leak", "L", _VERMILION, True, tuple(relaxed[c].leak for c in categories)),
    )
    name = _text(result.name)
    pr_title = f"Strict recall and precision by category, {name}"
    leak_title = f"Leak (1 − recall), strict and relaxed, by category, {name}"
    return _figure(pr_title, _bar_chart(f"c{index}-pr", pr_title, categories, pr)) + _figure(
        leak_title, _bar_chart(f"c{index}-leak", leak_title, categories, leak)
    )


def _html_system_charts(index: int, result: SystemResult, categories: Sequence[str]) -> str:
    name = _text(result.name)
    bars = _category_figures(index, result, categories) if categories else ""
    curve_title = f"Strict micro precision and recall over score threshold, {name}"
    curve = _figure(curve_title, _curve_chart(f"c{index}-curve", curve_title, result.curve))
    table = _html_table(_curve_table(result))
    return (
        f"<h3>{_esc(name)}</h3>{bars}{curve}"
        f"<details><summary>Curve values, {_esc(name)}</summary>{table}</details>"
    )


def _html_body(run: EvaluationRun) -> str:
    categories = _categories(run.systems)
    notes = "".join(f"<li>{_esc(n)}</li>" for n in _notes(run))
    per_category = (
        _html_table(_category_table(run)) if categories else "<p>No category present.</p>"
    )
    names = "".join(f"<li>{_esc(_names_line(r))}</li>" for r in run.systems)
    failures = (
        _html_table(_failure_table(run.failures))
        if run.failures
        else "<p>Unreadable files: none.</p>"
    )
    charts = "".join(_html_system_charts(i, r, categories) for i, r in enumerate(run.systems))
    leak_notes = "".join(f"<li>{_esc(n)}</li>" for n in _leak_notes(run))
    leaks = (
        f"<h2>Residual risk: leaks</h2><ul>{leak_notes}</ul>{_html_table(_leak_table(run))}"
        if run.systems
        else ""
    )
    return (
        f"<h1>Evaluation report: {_esc(_text(run.corpus))}</h1>{_html_meta(run)}"
        f"<h2>Summary</h2>{_html_table(_summary_table(run))}<ul>{notes}</ul>"
        f"<h2>Per category</h2>{per_category}"
        f"<h2>Plots</h2>{charts}"
        f"<h2>Names found</h2><ul>{names}</ul>"
        f"<h2>Unreadable files</h2>{failures}"
        f"{leaks}"
    )


def report_html(run: EvaluationRun) -> str:
    """One self-contained HTML page (inline CSS and SVG, no script, nothing fetched)."""
    title = f"Evaluation report: {_text(run.corpus)}"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"/>'
        '<meta name="viewport" content="width=device-width, initial-scale=1"/>'
        f"<title>{_esc(title)}</title><style>{_CSS}</style></head>"
        f"<body><main>{_html_body(run)}</main></body></html>\n"
    )


# --- files ---------------------------------------------------------------------------------

_RENDERERS: tuple[tuple[str, str, Callable[[EvaluationRun], str]], ...] = (
    ("json", "report.json", report_json),
    ("markdown", "report.md", report_markdown),
    ("html", "report.html", report_html),
)


def _write_atomic(path: Path, content: str) -> None:
    """Write ``content`` to a temporary file beside ``path``, then rename it over ``path``."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_report(run: EvaluationRun, out_dir: Path) -> dict[str, Path]:
    """Write ``report.json``, ``report.md`` and ``report.html`` into ``out_dir`` atomically.

    Returns the paths by kind (``"json"``, ``"markdown"``, ``"html"``). Every page is rendered
    before any file is written, so a rendering error leaves the directory as it was.
    """
    out_dir = Path(out_dir)
    rendered = [(kind, out_dir / name, render(run)) for kind, name, render in _RENDERERS]
    out_dir.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    for kind, path, content in rendered:
        _write_atomic(path, content)
        paths[kind] = path
    return paths
