"""The Markdown report of scripts/gpu-check: sections of check lines and figures.

A check line is PASS, FAIL, WARN (worth a look, does not fail the run) or SKIP (with the reason).
The run fails when any line is FAIL. The report's last line is the overall verdict with the
device's name.
"""

PASS, FAIL, WARN, SKIP = "PASS", "FAIL", "WARN", "SKIP"


class Section:
    def __init__(self, title):
        self.title = title
        self.checks = []   # (status, text)
        self.lines = []    # free Markdown (figures, tables)
        self.seconds = None

    def check(self, ok, text, status_if_bad=FAIL):
        self.checks.append((PASS if ok else status_if_bad, text))
        return ok

    def status(self, status, text):
        self.checks.append((status, text))

    def add(self, *lines):
        self.lines.extend(lines)

    def table(self, header, rows):
        self.lines.append("| " + " | ".join(header) + " |")
        self.lines.append("|" + "|".join(" --- " for _ in header) + "|")
        for r in rows:
            self.lines.append("| " + " | ".join(str(c) for c in r) + " |")
        self.lines.append("")


class Report:
    def __init__(self, title):
        self.title = title
        self.header = []
        self.sections = []
        self.device = "?"

    def section(self, title):
        s = Section(title)
        self.sections.append(s)
        return s

    def counts(self):
        c = {PASS: 0, FAIL: 0, WARN: 0, SKIP: 0}
        for s in self.sections:
            for status, _ in s.checks:
                c[status] += 1
        return c

    def failed(self):
        return self.counts()[FAIL] > 0

    def render(self):
        c = self.counts()
        verdict = "FAIL" if c[FAIL] else "PASS"
        out = [f"# {self.title}", ""]
        out += self.header
        out += ["", f"**Result: {verdict}** — {c[PASS]} passed, {c[FAIL]} failed, "
                f"{c[WARN]} warnings, {c[SKIP]} skipped.", ""]
        out += ["| phase | result | seconds |", "| --- | --- | --- |"]
        for s in self.sections:
            sc = [st for st, _ in s.checks]
            res = FAIL if FAIL in sc else WARN if WARN in sc else PASS if PASS in sc else \
                SKIP if SKIP in sc else "-"
            secs = f"{s.seconds:.1f}" if s.seconds is not None else "-"
            out.append(f"| {s.title} | {res} | {secs} |")
        total = sum(s.seconds or 0 for s in self.sections)
        out += [f"| total | {verdict} | {total:.1f} |", ""]
        for s in self.sections:
            out += [f"## {s.title}", ""]
            for status, text in s.checks:
                out.append(f"- **{status}** {text}")
            if s.checks:
                out.append("")
            out += s.lines
            if s.lines and s.lines[-1] != "":
                out.append("")
        out.append(f"**Overall: {verdict}** — device: {self.device}; {c[PASS]} passed, "
                   f"{c[FAIL]} failed, {c[WARN]} warnings, {c[SKIP]} skipped.")
        return "\n".join(out).rstrip() + "\n"
