#!/usr/bin/env python3
"""Shrinks a generated case on which rudder and the Go oracle disagree.
Usage: minimise.py ORACLE RUNNER CASES.jsonl NAME   (prints the smallest tcase found)

A candidate is kept when rudder still disagrees with the oracle on it (any
disagreement: the point is a small reproducer). Shrinking steps, repeated
until none applies: drop a template, drop an action or text piece of a
template, unwrap a control structure's body, drop a top-level value,
simplify a value to a scalar."""
import json, os, re, subprocess, sys, tempfile

def to_tcase(c):
    def esc(text):
        return "\n".join("\\" + l if l.startswith(("---", "===")) else l for l in text.split("\n"))
    lines = ["=== " + c["name"], "--- mode " + c["mode"], "--- entry " + c["entry"], "--- values",
             esc(json.dumps(c["values"], ensure_ascii=False))]
    for n, t in c["templates"]:
        lines += ["--- template " + n, esc(t)]
    return "\n".join(lines) + "\n"

class Checker:
    def __init__(self, oracle, runner):
        self.oracle, self.runner, self.runs = oracle, runner, 0
        self.dir = tempfile.mkdtemp(prefix="tplmin")

    def disagrees(self, c):
        self.runs += 1
        tc = os.path.join(self.dir, "c.tcase")
        jl = os.path.join(self.dir, "c.jsonl")
        with open(tc, "w") as f:
            f.write(to_tcase(c))
        with open(jl, "w") as f:
            if subprocess.run([self.oracle, tc], stdout=f, stderr=subprocess.DEVNULL, timeout=60).returncode:
                return False
        try:
            r = subprocess.run([self.runner, "-q", jl], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
        except subprocess.TimeoutExpired:
            return True
        return r.returncode != 0

PIECE = re.compile(r"(\{\{.*?\}\})", re.S)

def pieces(t):
    return [p for p in PIECE.split(t) if p != ""]

def shrink_text(c, i, ck):
    """Removes single pieces, then balanced {{if/with/range}}...{{end}} spans, of template i."""
    changed = False
    ps = pieces(c["templates"][i][1])
    j = 0
    while j < len(ps):
        cand = ps[:j] + ps[j + 1:]
        c2 = json.loads(json.dumps(c))
        c2["templates"][i][1] = "".join(cand)
        if ck.disagrees(c2):
            ps, c["templates"][i][1], changed = cand, "".join(cand), True
        else:
            j += 1
    # whole blocks: an opening action up to its matching {{end}}
    opener = re.compile(r"\{\{-?\s*(if|with|range|define|block)\b")
    closer = re.compile(r"\{\{-?\s*end\s*-?\}\}")
    j = 0
    while j < len(ps):
        if opener.match(ps[j]):
            d = 0
            for k in range(j, len(ps)):
                if opener.match(ps[k]):
                    d += 1
                elif closer.match(ps[k]):
                    d -= 1
                    if d == 0:
                        for cand in (ps[:j] + ps[k + 1:], ps[:j] + ps[j + 1:k] + ps[k + 1:]):
                            c2 = json.loads(json.dumps(c))
                            c2["templates"][i][1] = "".join(cand)
                            if ck.disagrees(c2):
                                ps, c["templates"][i][1], changed = cand, "".join(cand), True
                                break
                        break
        j += 1
    return changed

def shrink_values(c, ck):
    changed = False
    v = c["values"]
    if not isinstance(v, dict):
        return False
    for k in sorted(v):
        for repl in (None, "x", 1, None if v[k] is None else v[k]):
            c2 = json.loads(json.dumps(c))
            if repl is None:
                del c2["values"][k]
            else:
                c2["values"][k] = repl
            if c2["values"] == c["values"]:
                continue
            if ck.disagrees(c2):
                c["values"], changed = c2["values"], True
                break
        v = c["values"]
    return changed

def main():
    oracle, runner, path, name = sys.argv[1:5]
    c = None
    for line in open(path):
        x = json.loads(line)
        if x["name"] == name:
            c = x
    if c is None:
        sys.exit(f"minimise: no case {name} in {path}")
    c = {k: c[k] for k in ("name", "mode", "entry", "templates", "values")}
    ck = Checker(oracle, runner)
    if not ck.disagrees(c):
        sys.stdout.write("# (the case no longer disagrees)\n" + to_tcase(c))
        return
    changed = True
    while changed and ck.runs < 2000:
        changed = False
        for i in range(len(c["templates"]) - 1, -1, -1):
            if c["templates"][i][0] != c["entry"] and len(c["templates"]) > 1:
                c2 = json.loads(json.dumps(c))
                del c2["templates"][i]
                if ck.disagrees(c2):
                    c, changed = c2, True
                    continue
            changed |= shrink_text(c, i, ck)
        changed |= shrink_values(c, ck)
    sys.stdout.write(f"# minimised in {ck.runs} runs\n" + to_tcase(c))

if __name__ == "__main__":
    main()
