"""The Markdown table of a benchmark result."""

from __future__ import annotations

from typing import Any


def _num(v: float) -> str:
    if abs(v) >= 100:
        return f"{v:,.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def _fig(s: dict[str, float]) -> str:
    if s.get("n", 1) <= 1:
        return _num(s["median"])
    return f"{_num(s['median'])} ({_num(s['min'])}–{_num(s['max'])})"


def verdict(r: dict[str, Any]) -> str:
    if r.get("error"):
        return "error: " + r["error"]
    if r.get("passed") is None:
        return "reported" if r.get("value") is not None else (r.get("note") or "not available")
    return "pass" if r["passed"] else "**miss**"


def markdown(doc: dict[str, Any]) -> str:
    m = doc["machine"]
    lines = [
        f"Run {doc['generated_at']} on {doc['database']}{' (quick: a smoke run, not a measurement)' if doc['quick'] else ''}; "
        f"{m['nproc']} CPUs ({m['cpu']}), {m['memory_gb']} GB, Python {m['python']}; {doc['seconds']} s.",
        "",
        "Figures: median of the repetitions (min–max).",
        "",
        "| scenario | figures | target | result |",
        "|---|---|---|---|",
    ]
    for r in doc["scenarios"].values():
        figs = "; ".join(f"{k} {_fig(v)}" for k, v in r.get("figures", {}).items())
        if r.get("load"):
            figs = f"{figs}<br>*{r['load']}*" if figs else f"*{r['load']}*"
        if r.get("note"):
            figs = f"{figs}<br>{r['note']}" if figs else r["note"]
        lines.append(f"| {r['title']} | {figs or '—'} | {r['target']} | {verdict(r)} |")
    return "\n".join(lines) + "\n"
