#!/usr/bin/env python3
"""Grammar-based generator of random template cases (tcase format) for the
differential test against the Go oracle. Deterministic for a given seed.
Usage: gen.py SEED COUNT > out.tcase"""
import json, random, sys

KEYS = ["a", "b", "c", "name", "list", "m", "n", "x", "Values", "on", "port"]
SCALARS = ["0", "1", "-1", "42", "3.5", "1e6", "0.00001", "1000000", "true", "false", "null", '""', '"yes"', '"no"',
           '"hello"', '"a b"', '"1.0"', '"%d"', '"<b>&"', '"héllo"', "1.5e300", "123456789", "-0.5", "0.1", '"~"']

def rvalue(r, depth):
    k = r.random()
    if depth > 2 or k < 0.5:
        return r.choice(SCALARS)
    if k < 0.75:
        return "[" + ", ".join(rvalue(r, depth + 1) for _ in range(r.randint(0, 4))) + "]"
    items = r.sample(KEYS, r.randint(0, 4))
    return "{" + ", ".join(f"{json.dumps(kk)}: {rvalue(r, depth + 1)}" for kk in items) + "}"

def rvalues(r):
    items = r.sample(KEYS, r.randint(2, 7))
    return "\n".join(f"{kk}: {rvalue(r, 0)}" for kk in items)

class G:
    def __init__(self, r):
        self.r = r
        self.vars = ["$"]
        self.inrange = 0
        self.defs = []

    def field(self):
        r = self.r
        n = r.choice([1, 1, 1, 2, 2, 3])
        return "." + ".".join(r.choice(KEYS) for _ in range(n))

    def literal(self):
        r = self.r
        return r.choice(['"s"', '"a b"', '""', "0", "1", "-2", "2.5", "1e3", "0x10", "'a'", "true", "false", "nil", '`raw`', "1000000.0"])

    def operand(self, depth):
        r = self.r
        k = r.random()
        if k < 0.35:
            return self.field()
        if k < 0.5:
            v = r.choice(self.vars)
            if v != "$" and r.random() < 0.3:
                return v + "." + r.choice(KEYS)
            return v
        if k < 0.6:
            return "."
        if k < 0.8 or depth > 2:
            return self.literal()
        return "(" + self.pipeline(depth + 1) + ")"

    def command(self, depth):
        r = self.r
        k = r.random()
        if k < 0.3:
            return self.operand(depth)
        fn = r.choice(["print", "printf", "println", "len", "index", "eq", "ne", "lt", "le", "gt", "ge", "and", "or", "not",
                       "html", "js", "urlquery", "printf", "eq", "index"])
        if fn == "printf":
            verbs = ["%v", "%s", "%d", "%q", "%x", "%5.2f", "%-4v|", "%T", "%t", "%g", "%e", "%03d", "%+v", "%#v", "%c", "%U"]
            fmt = " ".join(r.choice(verbs) for _ in range(r.randint(0, 3)))
            args = [json.dumps(fmt)] + [self.operand(depth) for _ in range(r.randint(0, 3))]
        elif fn in ("len", "not"):
            args = [self.operand(depth)]
        elif fn in ("ne", "lt", "le", "gt", "ge"):
            args = [self.operand(depth), self.operand(depth)]
        elif fn == "index":
            args = [self.operand(depth)] + [r.choice(['"a"', '"b"', "0", "1", "2", '"m"', "-1", self.field()]) for _ in range(r.randint(0, 2))]
        else:
            args = [self.operand(depth) for _ in range(r.randint(0 if fn not in ("eq",) else 1, 3))]
        return " ".join([fn] + args)

    def pipeline(self, depth=0):
        r = self.r
        cmds = [self.command(depth)]
        while r.random() < 0.2:
            cmds.append(r.choice(["print", "len", "printf \"%v\"", "html", "not", "urlquery", "js", "index .m", "eq 1", "print 1", "and 1", "or 0"]))
        return " | ".join(cmds)

    def action(self, depth):
        r = self.r
        lt = r.choice(["{{ ", "{{ ", "{{- ", "{{"])
        rt = r.choice([" }}", " }}", " -}}", "}}"])
        k = r.random()
        if k < 0.15 and len(self.vars) < 6:
            name = "$" + r.choice(["v", "w", "i", "e", "x"])
            p = self.pipeline()
            if name not in self.vars:
                self.vars.append(name)
                return lt + f"{name} := {p}" + rt
            return lt + f"{name} = {p}" + rt
        if k < 0.25 and self.inrange and r.random() < 0.5:
            return lt + r.choice(["break", "continue"]) + rt
        if k < 0.28:
            return lt + "/* c */" + rt if lt.endswith(" ") and rt.startswith(" ") else "{{/* c */}}"
        if k < 0.33 and self.defs:
            return lt + f'template {json.dumps(r.choice(self.defs))} {self.operand(1)}' + rt
        return lt + self.pipeline() + rt

    def text(self):
        return self.r.choice(["", "x", " ", "\n", "a b", "  \n  ", "-", "{", "}", "é", "\t"])

    def block(self, depth):
        r = self.r
        out = []
        for _ in range(r.randint(1, 4)):
            k = r.random()
            if depth < 3 and k < 0.25:
                kw = r.choice(["if", "with", "range", "range"])
                saved = list(self.vars)
                if kw == "range" and r.random() < 0.4:
                    a, b = "$i", "$e"
                    head = f"{a}, {b} := {self.pipeline()}" if r.random() < 0.5 else f"{b} := {self.pipeline()}"
                    for v in (a, b):
                        if v in head and v not in self.vars:
                            self.vars.append(v)
                else:
                    head = self.pipeline()
                if kw == "range":
                    self.inrange += 1
                body = self.block(depth + 1)
                if kw == "range":
                    self.inrange -= 1
                els = ""
                if r.random() < 0.4:
                    if kw in ("if", "with") and r.random() < 0.4:
                        els = "{{ else " + kw + " " + self.pipeline() + " }}" + self.block(depth + 1)
                    else:
                        els = "{{ else }}" + self.block(depth + 1)
                self.vars = saved
                out.append("{{ " + kw + " " + head + " }}" + body + els + "{{ end }}")
            elif k < 0.75:
                out.append(self.action(depth))
            else:
                out.append(self.text())
        return "".join(out)

def case(r, i):
    g = G(r)
    extra = []
    if r.random() < 0.3:
        nm = r.choice(["t1", "t2", "helper"])
        g2 = G(r)
        extra.append(("defs", '{{ define "%s" }}%s{{ end }}' % (nm, g2.block(1))))
        g.defs.append(nm)
    body = g.block(0)
    if r.random() < 0.05:  # sometimes break the syntax on purpose
        p = r.randint(0, max(0, len(body) - 1))
        body = body[:p] + r.choice(["}}", "{{", "(", ")", "|", "$", "end", '"']) + body[p:]
    mode = r.choice(["helm", "helm", "helm", "strict", "go"])
    lines = [f"=== gen-{i}", f"--- mode {mode}", "--- values", rvalues(r), "--- template main", body]
    for n, t in extra:
        lines += [f"--- template {n}", t]
    return "\n".join(l if not (l.startswith("---") or l.startswith("===")) or l.startswith(("--- ", "=== ")) else "\\" + l for l in lines)

def main():
    seed, count = int(sys.argv[1]), int(sys.argv[2])
    r = random.Random(seed)
    out = []
    for i in range(count):
        out.append(case(r, i))
    sys.stdout.write("\n".join(out) + "\n")

if __name__ == "__main__":
    main()
