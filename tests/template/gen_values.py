#!/usr/bin/env python3
"""Random value trees for the differential test of the YAML and JSON encoders
(toYaml, toJson, toPrettyJson, toRawJson, toYamlPretty and round trips through
fromYaml/fromJson) against the Go oracle. Deterministic for a given seed.

Usage: gen_values.py SEED COUNT > out.tcase
         COUNT trees, each rendered by every template in TEMPLATES (one case
         per tree and template, named enc-TREE-T).
       gen_values.py minimise ORACLE RUNNER CASES.jsonl NAME
         shrinks the failing case NAME (its tree: subtrees, map entries, list
         items, strings) while rudder still disagrees with the oracle, and
         prints the smallest tcase found.

Trees: deep nesting, unicode (incl. NEL, LS, NBSP, BOM, astral), control
characters, strings that read as other YAML types (yes, 0x1F, 1e3, ~, null,
timestamps, base 60), leading/trailing spaces, multi-line and long strings,
odd keys (empty, long, multi-line, numeric), floats of every magnitude."""
import json, os, random, subprocess, sys, tempfile

TEMPLATES = [
    "{{ toYaml .v }}",
    "{{ toJson .v }}",
    "{{ toPrettyJson .v }}",
    "{{ toRawJson .v }}",
    "{{ toYamlPretty .v }}",
    "{{ .v | toYaml | fromYaml | toJson }}",
    "{{ dict \"k\" .v | toYaml | fromYaml | toYaml }}",
    "{{ list .v | toYaml | fromYamlArray | toJson }}",
    "{{ dict \"k\" .v | toJson | fromJson | toYaml }}",
    "{{ dict \"k\" .v \"i\" 7 \"l\" (list (int64 -3) 2.5) | mustToYaml | nindent 2 }}",
]

TRICKY = ["yes", "no", "on", "off", "y", "n", "Y", "N", "true", "False", "TRUE", "null", "Null", "NULL", "~", "",
          " ", "  ", "0", "1", "-1", "+1", "1.5", "1e3", "1E3", "1e+3", "-1e-3", "0x1F", "0X1f", "0o17", "017", "08",
          "0b101", "1_000", ".5", "5.", ".inf", "-.Inf", ".NaN", "2001-12-14", "2001-12-14t21:59:43.10-05:00",
          "2001-12-14 21:59:43.10", "12:30", "1:20:30.5", "190:20:30", "-", "--", "---", "...", "a: b", "a:b",
          "a #b", "a#b", "#a", "- a", "-a", "? x", "?x", "[a]", "{a}", "*a", "&a", "!a", "!!str", "|", "|a", ">a",
          "'a", "\"a", "%a", "@a", "`a", ",a", "a,b", "<<", "=", "a\tb", "\ta", "a\t", "a\u0085b", "\u00a0a",
          "a\u2028b", "a\u2029", "\ufeffa", "\u00e9", "\U0001F600", "\u2603", "\u4e2d\u6587", "line1\nline2",
          "line1\nline2\n", "line1\nline2\n\n", "\n", "\n\n", "\nlead", " lead", "trail ", "trail \nx", "x\n trail",
          "a\r\nb", "\r", "\x01", "\x1f", "\x7f", "<b>&amp;</b>", "\u003c\u003e", "a\\b", "\"quoted\"",
          "it's", "a  b", "a \n b", " \n", "1:2:3", "99:99", "0xG", "0x", "e1", "1e", "+.5", "-.5e3", "_1", "1_"]

ALPHA = (list("abcxyzABZ0189") * 4 + list(" \t\n-:#?[]{},&*!|>'\"%@`.~_=+\\/<>") +
         ["\u00e9", "\u00fc", "\u2603", "\u4e2d", "\U0001F600", "\u0085", "\u00a0", "\u2028", "\ufeff", "\r"])
# No NUL: the runner reads values with cJSON, whose strings end at NUL.
CONTROL = ["\x01", "\x07", "\x1b", "\x1f", "\x7f", "\x0b", "\x0c"]

LONG = ["a long string with many words that keeps going and going past the eighty column limit so it folds",
        "averyveryveryveryveryveryveryveryveryveryveryveryveryveryveryveryveryveryveryverylongword and more",
        "multi line text\nwith a long second line that keeps going and going past the eighty column limit",
        "x" * 130, "k " * 70, "  indented\n  block\n", "trailing spaces   \nnext"]

FLOATS = [0.0, -0.0, 0.5, 1.0, 100.0, 1e6, 1e20, 1e21, 1.5e300, 1e-6, 1e-7, 123456789.5, 3.14159, 1e15, 1.5e19,
          2.0 ** 53, 2.0 ** 63, 2.0 ** 64, 5e-324, 1.7976931348623157e308, 0.1, 0.2, 0.30000000000000004, -2.5,
          1e-5, 12345678.0, 1e16, 9.999999e20, 123e-20]


def rstring(r):
    k = r.random()
    if k < 0.4:
        s = r.choice(TRICKY)
    elif k < 0.5:
        s = r.choice(LONG)
    elif k < 0.9:
        s = "".join(r.choice(ALPHA) for _ in range(r.randint(0, 12)))
    else:
        s = r.choice(TRICKY) + r.choice(["", " ", "\n", ": x", " #"]) + r.choice(TRICKY)
    if r.random() < 0.02:  # control characters: yaml.v2 refuses most of them
        i = r.randint(0, len(s))
        s = s[:i] + r.choice(CONTROL) + s[i:]
    return s


def rnumber(r):
    k = r.random()
    if k < 0.35:
        return r.choice([0, 1, -1, 7, 42, 255, 1000000, -123456789, 2 ** 31, 2 ** 53, 2 ** 53 + 1, 2 ** 62, -2 ** 63])
    if k < 0.65:
        return r.choice(FLOATS) * r.choice([1, 1, -1])
    if k < 0.85:
        return r.randint(-10 ** r.randint(1, 18), 10 ** r.randint(1, 18))
    e = r.randint(-30, 30)
    return float("%.*g" % (r.randint(1, 17), r.uniform(-10, 10) * 10.0 ** e))


def rkey(r):
    k = r.random()
    if k < 0.5:
        return r.choice(["a", "b", "name", "Z", "a1", "a10", "a9", "a01", "1", "10", "2", "_x", "\u00e9", "x.y",
                         "app.kubernetes.io/name", "a b", "key"])
    if k < 0.97:
        s = rstring(r)
        # Not "<<" as a key: fromYaml's merge-key error names a line in rudder
        # (base/yaml.c), not in yaml.v2 (SPRIG_STATUS.md, known gap 18).
        return s if s != "<<" else "<<x"
    return r.choice(["k" * 129, "x\ny", "long key " * 20])


def rtree(r, depth, budget):
    """A random value; budget[0] bounds the number of nodes."""
    budget[0] -= 1
    k = r.random()
    if depth > 14 or budget[0] <= 0 or k < 0.45:
        k2 = r.random()
        if k2 < 0.55:
            return rstring(r)
        if k2 < 0.85:
            return rnumber(r)
        if k2 < 0.93:
            return r.choice([True, False])
        return None
    if k < 0.50 and depth < 40:  # a deep chain
        return chain(r, depth, budget)
    if k < 0.72:
        return [rtree(r, depth + 1, budget) for _ in range(r.choice([0, 1, 1, 2, 3, 4, 6]))]
    return {rkey(r): rtree(r, depth + 1, budget) for _ in range(r.choice([0, 1, 1, 2, 3, 4, 6]))}


def chain(r, depth, budget):
    n = r.randint(5, 30)
    v = rtree(r, 15, budget)
    for _ in range(n):
        v = [v] if r.random() < 0.4 else {rkey(r): v}
    return v


def ystr(s):
    """A YAML double-quoted scalar for s (escaping what the YAML reader refuses or folds)."""
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif o < 0x20 or 0x7f <= o <= 0x9f or o in (0x2028, 0x2029, 0xfeff) or 0xd800 <= o <= 0xdfff or o >= 0xfffe and o <= 0xffff:
            out.append("\\u%04x" % o)
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def yflow(v):
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, str):
        return ystr(v)
    if isinstance(v, list):
        return "[" + ", ".join(yflow(x) for x in v) + "]"
    return "{" + ", ".join(ystr(k) + ": " + yflow(x) for k, x in v.items()) + "}"


def tcase(name, tree, template):
    return "=== %s\n--- values\nv: %s\n--- template main\n%s\n" % (name, yflow(tree), template)


def generate(seed, count):
    r = random.Random(seed)
    w = sys.stdout
    w.write("# gen_values.py %d %d\n" % (seed, count))
    for i in range(count):
        tree = rtree(r, 0, [r.choice([5, 20, 60, 200])])
        for t, tpl in enumerate(TEMPLATES):
            w.write(tcase("enc-%d-%d" % (i, t), tree, tpl))


# --- minimiser ---------------------------------------------------------------

class Checker:
    def __init__(self, oracle, runner):
        self.oracle, self.runner, self.runs = oracle, runner, 0
        self.dir = tempfile.mkdtemp(prefix="encmin")

    def disagrees(self, name, tree, template):
        self.runs += 1
        tc = os.path.join(self.dir, "c.tcase")
        jl = os.path.join(self.dir, "c.jsonl")
        with open(tc, "w") as f:
            f.write(tcase(name, tree, template))
        with open(jl, "w") as f:
            if subprocess.run([self.oracle, tc], stdout=f, stderr=subprocess.DEVNULL, timeout=60).returncode:
                return False
        with open(jl) as f:
            line = json.loads(f.readline())
        if line.get("values_error"):
            return False
        try:
            rc = subprocess.run([self.runner, "-q", jl], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                timeout=60).returncode
        except subprocess.TimeoutExpired:
            return True
        return rc != 0


def candidates(v):
    """Smaller variants of v: subtrees in its place, then one edit at a time deeper down."""
    if isinstance(v, (list, dict)):
        items = list(v.values()) if isinstance(v, dict) else v
        for x in items:
            yield x
        n = len(v)
        for i in range(n):
            if isinstance(v, list):
                yield v[:i] + v[i + 1:]
            else:
                ks = list(v)
                yield {k: v[k] for k in ks if k != ks[i]}
        for i in range(n):
            if isinstance(v, list):
                for c in candidates(v[i]):
                    yield v[:i] + [c] + v[i + 1:]
            else:
                ks = list(v)
                k = ks[i]
                for c in candidates(v[k]):
                    yield {kk: (c if kk == k else v[kk]) for kk in ks}
                for kc in candidates(k):
                    if isinstance(kc, str) and kc not in v:
                        yield {(kc if kk == k else kk): v[kk] for kk in ks}
        if n:
            yield None
    elif isinstance(v, str):
        if len(v) > 1:
            h = len(v) // 2
            yield v[:h]
            yield v[h:]
            for i in range(len(v)):
                yield v[:i] + v[i + 1:]
        if v not in ("", "a"):
            yield "a"
    elif isinstance(v, float) and v not in (0.0, 1.0):
        yield 1.0
    elif isinstance(v, int) and not isinstance(v, bool) and v not in (0, 1):
        yield 1


def minimise(oracle, runner, path, name):
    case = None
    for line in open(path):
        x = json.loads(line)
        if x["name"] == name:
            case = x
    if case is None:
        sys.exit("gen_values.py: no case %s in %s" % (name, path))
    tree, template = case["values"].get("v"), case["templates"][0][1]
    ck = Checker(oracle, runner)
    if not ck.disagrees(name, tree, template):
        sys.stdout.write("# (the case no longer disagrees)\n" + tcase(name, tree, template))
        return
    changed = True
    while changed and ck.runs < 1500:
        changed = False
        for c in candidates(tree):
            if ck.runs >= 1500:
                break
            if ck.disagrees(name, c, template):
                tree, changed = c, True
                break
    sys.stdout.write("# minimised in %d oracle runs\n" % ck.runs + tcase(name, tree, template))
    with open(os.path.join(ck.dir, "c.tcase"), "w") as f:
        f.write(tcase(name, tree, template))
    with open(os.path.join(ck.dir, "c.jsonl"), "w") as f:
        subprocess.run([oracle, os.path.join(ck.dir, "c.tcase")], stdout=f)
    sys.stdout.flush()
    subprocess.run([runner, os.path.join(ck.dir, "c.jsonl")], stdout=subprocess.DEVNULL)


def _is_letter(c):
    return c.isalpha()


def _is_digit(c):
    return c.isdecimal()


def key_less(a, b, v3):
    """yaml.v2's keyList.Less (v3: yaml.v3's variant), as helm/template/yaml_enc.c has it."""
    digits = False
    for i in range(min(len(a), len(b))):
        if a[i] == b[i]:
            digits = _is_digit(a[i])
            continue
        al, bl = _is_letter(a[i]), _is_letter(b[i])
        if al and bl:
            return a[i] < b[i]
        if al or bl:
            return al if (v3 and digits) else bl
        an = bn = 0
        if a[i] == "0" or b[i] == "0":
            j = i - 1
            while j >= 0 and _is_digit(a[j]):
                if a[j] != "0":
                    an = bn = 1
                    break
                j -= 1
        ai = i
        while ai < len(a) and _is_digit(a[ai]):
            an = an * 10 + int(a[ai])
            ai += 1
        bi = i
        while bi < len(b) and _is_digit(b[bi]):
            bn = bn * 10 + int(b[bi])
            bi += 1
        if an != bn:
            return an < bn
        if ai != bi:
            return ai < bi
        return a[i] < b[i]
    return len(a) < len(b)


def order_ambiguous(keys):
    """True when the yaml key order is not a strict total order on KEYS: Go sorts a map's keys
    in its random iteration order, so the result then varies from run to run."""
    keys = list(keys)
    for v3 in (False, True):
        less = {(a, b): key_less(a, b, v3) for a in keys for b in keys if a != b}
        for a in keys:
            for b in keys:
                if a != b and less[(a, b)] == less[(b, a)]:
                    return True
        for a in keys:
            for b in keys:
                if a == b or not less[(a, b)]:
                    continue
                for c in keys:
                    if c != a and c != b and less[(b, c)] and not less[(a, c)]:
                        return True
    return False


def tree_order_ambiguous(v):
    if isinstance(v, dict):
        return order_ambiguous(v.keys()) or any(tree_order_ambiguous(x) for x in v.values())
    if isinstance(v, list):
        return any(tree_order_ambiguous(x) for x in v)
    return False


def go_varies(oracle, path, name, runs=8):
    """Exit status 0 when Go itself renders case NAME differently across runs (yaml.v2's key
    order is no strict weak order for keys mixing digits and letters, so the result follows
    Go's random map order: SPRIG_STATUS.md known gap 6). Decided from the keys when they are
    not totally ordered (a few runs may all happen to agree), else by running Go again."""
    case = [x for x in map(json.loads, open(path)) if x["name"] == name][0]
    if tree_order_ambiguous(case["values"].get("v")):
        sys.exit(0)
    d = tempfile.mkdtemp(prefix="encvar")
    tc = os.path.join(d, "c.tcase")
    with open(tc, "w") as f:
        f.write(tcase(name, case["values"].get("v"), case["templates"][0][1]) * runs)
    # Split on "\n" only: str.splitlines also splits inside JSON strings at U+0085, U+001C-1E.
    out = subprocess.run([oracle, tc], stdout=subprocess.PIPE, check=True).stdout.decode().split("\n")
    seen = {json.dumps([json.loads(l).get(k) for k in ("output", "output_b64", "error")]) for l in out if l}
    sys.exit(0 if len(seen) > 1 else 1)


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "go-varies":
        go_varies(*sys.argv[2:5])
    elif len(sys.argv) == 6 and sys.argv[1] == "minimise":
        minimise(*sys.argv[2:6])
    elif len(sys.argv) == 3:
        generate(int(sys.argv[1]), int(sys.argv[2]))
    else:
        sys.exit(__doc__)
