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
        return r.choice(['"s"', '"a b"', '""', "0", "1", "-2", "2.5", "1e3", "0x10", "'a'", "true", "false", "nil", '`raw`', "1000000.0", "3i", "0i", "1+2i", "'é'", '"ü"'])

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

# ---- typed generation: templates that mostly render -------------------------
# Values have a fixed shape with random contents, and expressions are built
# for the type they need, so most cases render and exercise the output path
# (the untyped generator above mostly exercises error paths).

WORDS = ["a", "b", "hello", "x y", "", "héllo", "<b>", "100%", "1.5", "true", "~", "a\\tb", "ü", "z"]
NUMS = ["0", "1", "-1", "2.5", "42", "1e6", "0.00001", "1000000", "-0.5", "3", "1.5e300", "123456789", "7"]

def typed_values(r):
    q = lambda w: json.dumps(w, ensure_ascii=False)
    lines = [
        f"s: {q(r.choice(WORDS))}", f"t: {q(r.choice(WORDS))}", f"n: {r.choice(NUMS)}", f"k: {r.choice(NUMS)}",
        f"b: {r.choice(['true', 'false'])}", "z: null", 'e: ""',
        "l: [" + ", ".join(q(r.choice(WORDS)) for _ in range(r.randint(0, 5))) + "]",
        "nl: [" + ", ".join(r.choice(NUMS) for _ in range(r.randint(1, 5))) + "]",
        "m: {" + ", ".join(f"{kk}: {q(r.choice(WORDS))}" for kk in ["a", "b"] + r.sample(["c", "d"], r.randint(0, 2))) + "}",
        "mm: {x: {y: " + q(r.choice(WORDS)) + ", n: " + r.choice(NUMS) + "}, l: [{y: " + q(r.choice(WORDS)) + "}]}",
        "lm: [" + ", ".join("{name: " + q(r.choice(WORDS)) + ", v: " + r.choice(NUMS) + "}" for _ in range(r.randint(0, 3))) + "]",
    ]
    r.shuffle(lines)
    return "\n".join(lines)

class T:
    """Typed expression generator. Types: s(tring) f(loat64) i(nt) b(ool) l(ist) m(ap) a(ny)."""
    FIELDS = {"s": [".s", ".t", ".m.a", ".mm.x.y", ".e"], "f": [".n", ".k", ".mm.x.n"], "b": [".b"],
              "l": [".l", ".nl", ".lm", ".mm.l"], "m": [".m", ".mm", ".mm.x"], "a": [".z", ".", ".s", ".n", ".mm.l"]}

    def __init__(self, r):
        self.r = r
        self.vars = {}  # name -> type
        self.inrange = 0
        self.defs = []
        self.moved = 0  # inside with/range: dot is not the values, so fields go through $

    def lit(self, t):
        r = self.r
        if t == "s":
            return r.choice(['"s"', '"a b"', '""', '`raw`', '"é"', '"<x>"', '"%"', '"1"'])
        if t == "f":
            return r.choice(["2.5", "1e3", "0.5", "1000000.0", "-1.5"])
        if t == "i":
            return r.choice(["0", "1", "2", "-3", "10", "0x10", "'a'", "1_000"])
        if t == "b":
            return r.choice(["true", "false"])
        return self.lit(r.choice("sfib"))

    def fld(self, f):
        if self.moved:
            return "$" + f if f != "." else "$"
        return f

    def var_of(self, t):
        vs = [v for v, vt in self.vars.items() if vt == t or t == "a"]
        return self.r.choice(vs) if vs else None

    def expr(self, t, depth=0):
        r = self.r
        k = r.random()
        if t in self.FIELDS and k < 0.45:
            return self.fld(r.choice(self.FIELDS[t]))
        if k < 0.55:
            v = self.var_of(t)
            if v:
                return v
        if k < 0.8 or depth > 2:
            if t in ("l", "m"):
                return self.fld(r.choice(self.FIELDS[t]))
            return self.lit(t)
        return "(" + self.call(t, depth + 1) + ")"

    def call(self, t, depth=0):
        r = self.r
        e = lambda tt: self.expr(tt, depth)
        if t == "s":
            c = r.choice(["print", "printf", "printf", "html", "js", "urlquery", "println", "index", "slice"])
            if c == "printf":
                verbs = ["%v", "%s", "%q", "%d", "%5.2f", "%-4v|", "%T", "%x", "%08.3f", "%+d", "%#v", "%g", "%e", "%c"]
                vs = [r.choice(verbs) for _ in range(r.randint(1, 3))]
                return "printf " + json.dumps(" ".join(vs)) + " " + " ".join(e(r.choice("sfiblma")) for _ in vs)
            if c == "index":
                return "index " + r.choice([".m " + r.choice(['"a"', '"b"', '"c"']), ".mm.x \"y\"", ".mm \"x\" \"y\""])
            if c == "slice":
                return "slice " + e("s") + " " + r.choice(["0", "0 0", "0 1"]) if False else "print " + e("s")
            return c + " " + " ".join(e(r.choice("sfibla")) for _ in range(r.randint(1, 3)))
        if t == "b":
            c = r.choice(["eq", "ne", "lt", "le", "gt", "ge", "and", "or", "not", "eq"])
            if c in ("and", "or"):
                return c + " " + " ".join(e("b") for _ in range(r.randint(2, 3)))
            if c == "not":
                return "not " + e(r.choice("sfbla"))
            tt = r.choice("sfi")
            if c == "eq":
                return "eq " + " ".join(e(tt) for _ in range(r.randint(2, 3)))
            return c + " " + e(tt) + " " + e(tt)
        if t == "i":
            return "len " + e(r.choice("slm"))
        if t == "a":
            c = r.choice(["index", "and", "or", "print"])
            if c == "index":
                return "index " + r.choice([".l 0", ".nl 0", ".lm 0", ".m \"a\"", ".mm \"x\"", ".nl " + str(r.randint(0, 1))])
            if c in ("and", "or"):
                return c + " " + " ".join(e(r.choice("sfib")) for _ in range(2))
            return "print " + e(r.choice("sfi"))
        if t == "l":
            return "slice " + self.fld(".nl") + " " + r.choice(["0 1", "0", "1", "0 0"])
        if t == "m":
            return self.fld(".m")
        return self.lit(t)

    def pipeline(self, t):
        r = self.r
        p = self.call(t) if r.random() < 0.6 else self.expr(t)
        if r.random() < 0.2:
            p += " | " + r.choice(["print", "printf \"%v\"", "html", "urlquery", "js", "len", "printf \"[%s]\"", "print 1"])
        return p

    def action(self):
        r = self.r
        lt = r.choice(["{{ ", "{{ ", "{{- ", "{{"])
        rt = r.choice([" }}", " }}", " -}}", "}}"])
        k = r.random()
        if k < 0.15 and len(self.vars) < 6:
            t = r.choice("sfibl")
            name = "$" + r.choice(["v", "w", "x", "y"])
            if name in self.vars and self.vars[name] == t:
                return lt + f"{name} = {self.pipeline(t)}" + rt
            if name not in self.vars:
                p = self.pipeline(t)
                self.vars[name] = t
                return lt + f"{name} := {p}" + rt
        if k < 0.2 and self.inrange:
            return lt + r.choice(["break", "continue"]) + rt
        if k < 0.23:
            return "{{/* c */}}" if r.random() < 0.5 else "{{- /* c */ -}}"
        if k < 0.3 and self.defs:
            return lt + f'template {json.dumps(r.choice(self.defs))} $' + rt
        if k < 0.35:
            return lt + f'include "inc" {r.choice([".", ".m", ".mm"])} | indent 2' + rt if False else lt + self.pipeline("s") + rt
        return lt + self.pipeline(r.choice("sfibla")) + rt

    def text(self):
        return self.r.choice(["", "x", " ", "\n", "a b", "  \n  ", "-", "é", "\t", "key: ", "\n- "])

    def block(self, depth):
        r = self.r
        out = []
        for _ in range(r.randint(1, 5)):
            k = r.random()
            if depth < 3 and k < 0.3:
                kw = r.choice(["if", "with", "range", "range", "if"])
                saved = dict(self.vars)
                if kw == "range":
                    src = r.choice([self.fld(".l"), self.fld(".nl"), self.fld(".lm"), self.fld(".m"), self.fld(".mm"), "3", self.fld(".mm.l")])
                    if r.random() < 0.5 and src != "3":
                        head = f"$i, $e := {src}"
                        self.vars["$i"] = "a"
                        self.vars["$e"] = "a"
                    else:
                        head = src
                    self.inrange += 1
                    self.moved += 1
                    body = self.block(depth + 1)
                    self.moved -= 1
                    self.inrange -= 1
                elif kw == "with":
                    head = self.fld(r.choice([".m", ".mm.x", ".s", ".lm", ".missing", ".z", ".mm", ".m"]))
                    self.moved += 1
                    body = self.block(depth + 1)
                    self.moved -= 1
                else:
                    head = self.pipeline(r.choice("bsfl"))
                    body = self.block(depth + 1)
                els = ""
                if r.random() < 0.4:
                    if kw in ("if", "with") and r.random() < 0.4:
                        els = "{{ else " + kw + " " + (self.pipeline("b") if kw == "if" else ".s") + " }}" + self.block(depth + 1)
                    else:
                        els = "{{ else }}" + self.block(depth + 1)
                self.vars = saved
                out.append("{{ " + kw + " " + head + " }}" + body + els + "{{ end }}")
            elif k < 0.75:
                out.append(self.action())
            else:
                out.append(self.text())
        return "".join(out)

def typed_case(r, i):
    g = T(r)
    extra = []
    if r.random() < 0.3:
        nm = r.choice(["t1", "t2", "helper"])
        extra.append(("defs", '{{ define "%s" }}%s{{ end }}' % (nm, T(r).block(1))))
        g.defs.append(nm)
    body = g.block(0)
    mode = r.choice(["helm", "helm", "helm", "strict", "go"])
    lines = [f"=== gen-{i}t", f"--- mode {mode}", "--- values", typed_values(r), "--- template main", body]
    for n, t in extra:
        lines += [f"--- template {n}", t]
    return "\n".join(l if not (l.startswith("---") or l.startswith("===")) or l.startswith(("--- ", "=== ")) else "\\" + l for l in lines)

def case(r, i):
    if r.random() < 0.65:
        return typed_case(r, i)
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
