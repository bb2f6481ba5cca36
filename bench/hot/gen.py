#!/usr/bin/env python3
"""Regenerates bench/hot/order.ld: the code and read-only data that `rudder template` uses,
listed so that the linker places them together at the start of .text and .rodata.

Why: on a page fault in a file mapping the kernel also maps the cached pages around it (a 64 KiB
"fault-around" window, or a whole large folio), so the resident size of the executable is the
number of such blocks its used code and data fall in, not the bytes it uses. Scattered over 2.3 MB of text, the ~400 KB that `rudder template` runs touch
most windows; packed together they touch few (see bench/README.md).

How: builds rudder (RelWithDebInfo, function and data sections, static dependencies) in a build
dir of its own, relinks it as a non-PIE executable with a link map, then runs it under
Valgrind on three workloads (tests/charts/empty, tests/charts/umbrella, the generated chart of
bench/template/chart_bench.py): callgrind gives every executed instruction (all three), lackey
every data load (the two small ones; the generated chart is too long for it). Each address is
mapped through the link map to its input section (archive member and section name), and those
sections are written out in tiers: what the empty chart uses first, then what the umbrella chart
adds, then what the generated chart adds. Sections no longer present (renamed functions) are
simply not matched by the linker, so a stale list costs memory, never correctness.

Usage: bench/hot/gen.py [--build DIR] [--keep]   (default DIR: build-hot in the repository)
"""
import argparse
import bisect
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "bench", "hot", "order.ld")
# Output sections whose input sections are ordered (ours and the linker's defaults), and those
# whose reads tell which objects' string literals are in use (tables of pointers to them).
TEXT_OUT = (".text", ".text.rudder_hot")
RODATA_OUT = (".rodata", ".rodata.rudder_hot")
TABLE_OUT = (".data.rel.ro", ".data")


def sh(argv, **kw):
    return subprocess.run(argv, check=True, **kw)


def build(bdir):
    sh(["cmake", "-S", ROOT, "-B", bdir, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
        "-DRUDDER_E2E=OFF", "-DRUDDER_SANITIZE=OFF", "-DRUDDER_STATIC_DEPS=ON",
        "-DRUDDER_HOT_ORDER=ON"], stdout=subprocess.DEVNULL)
    sh(["cmake", "--build", bdir, "--target", "rudder"], stdout=subprocess.DEVNULL)
    # The link command of rudder, relinked non-PIE (addresses are link addresses) with a map.
    cmd = subprocess.run(["ninja", "-C", bdir, "-t", "commands", "rudder"], check=True,
                         capture_output=True, text=True).stdout.strip().splitlines()[-1]
    cmd = cmd.split("&&")[1] if cmd.startswith(":") else cmd
    binary = os.path.join(bdir, "rudder-hot-profile")
    mapfile = binary + ".map"
    cmd = re.sub(r" -o rudder ", " -o %s " % binary, cmd, count=1)
    cmd += " -no-pie -Wl,-Map,%s" % mapfile
    sh(["bash", "-c", "cd %s && %s" % (bdir, cmd)])
    return binary, mapfile


def parse_map(mapfile):
    """[(start, end, out_section, in_section, file)] for input sections of .text and .rodata."""
    secs = []
    out = None
    pending = None
    with open(mapfile) as f:
        for line in f:
            m = re.match(r"^(\.\S+)", line)
            if m:
                out = m.group(1)
                pending = None
                continue
            if out not in TEXT_OUT + RODATA_OUT + TABLE_OUT:
                continue
            m = re.match(r"^ (\.\S+)\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$", line)
            if m:
                name, addr, size, fn = m.groups()
            else:
                m = re.match(r"^ (\.\S+)$", line)
                if m:
                    pending = m.group(1)
                    continue
                m = re.match(r"^\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$", line)
                if not (m and pending):
                    pending = None
                    continue
                name = pending
                addr, size, fn = m.groups()
            pending = None
            a, s = int(addr, 16), int(size, 16)
            if s and name not in (".init", ".fini"):  # .fini is placed by the header below
                secs.append((a, a + s, out, name, fn.strip()))
    secs.sort()
    return secs


def pattern(fn, sec):
    """A linker-script input section description for section sec of input file fn."""
    m = re.match(r"^(.*/)?([^/]+\.a)\((.+)\)$", fn)
    if m:
        return "*%s:%s(%s)" % (m.group(2), m.group(3), sec)
    return "*/%s(%s)" % (os.path.basename(fn), sec)


def callgrind_addrs(binary, argv, tmp):
    out = os.path.join(tmp, "cg.out")
    sh(["valgrind", "--tool=callgrind", "--dump-instr=yes", "--callgrind-out-file=" + out,
        binary] + argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    addrs = set()
    last = 0
    with open(out) as f:
        for line in f:
            c = line[0]
            if c == "0" and line.startswith("0x"):
                last = int(line.split()[0], 16)
            elif c in "+-":
                last += int(line.split()[0])
            elif c != "*":
                continue
            addrs.add(last)
    return addrs


def lackey_addrs(binary, argv, tmp):
    out = os.path.join(tmp, "lackey.out")
    sh(["valgrind", "--tool=lackey", "--trace-mem=yes", "--log-file=" + out, binary] + argv,
       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    addrs = set()
    with open(out) as f:
        for line in f:
            if line.startswith(" L ") or line.startswith(" M "):
                addrs.add(int(line[3:].split(",")[0], 16))
    return addrs


def sections_of(addrs, secs, starts, outs):
    hit = set()
    for a in addrs:
        i = bisect.bisect_right(starts, a) - 1
        if i >= 0 and a < secs[i][1] and secs[i][2] in outs:
            hit.add(i)
    return hit


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build-hot"))
    ap.add_argument("--keep", action="store_true", help="keep the Valgrind outputs' temp dir")
    args = ap.parse_args()
    for tool in ("valgrind", "ninja", "cmake"):
        if not shutil.which(tool):
            sys.exit("gen.py: %s not found" % tool)
    binary, mapfile = build(args.build)
    secs = parse_map(mapfile)
    starts = [s[0] for s in secs]
    tmp = tempfile.mkdtemp(prefix="rudder-hot-")
    sys.path.insert(0, os.path.join(ROOT, "bench", "template"))
    import chart_bench
    big = os.path.join(tmp, "generated")
    chart_bench.gen_chart(big)
    charts = os.path.join(ROOT, "tests", "charts")
    with open(os.path.join(charts, "umbrella.args")) as f:
        uargs = f.read().replace("$DIR", charts).split()
    workloads = [("empty", ["template", "rel", os.path.join(charts, "empty")], True),
                 ("umbrella", ["template", "rel", os.path.join(charts, "umbrella")] + uargs, True),
                 ("generated", ["template", "rel", big], False)]
    text, rodata = [], []
    seen_t, seen_r = set(), set()
    for name, argv, data in workloads:
        t = sections_of(callgrind_addrs(binary, argv, tmp), secs, starts, TEXT_OUT) - seen_t
        seen_t |= t
        text.append((name, sorted(t)))
        loads = lackey_addrs(binary, argv, tmp) if data else set()
        r = sections_of(loads, secs, starts, RODATA_OUT)
        # String literals are merged across the objects of an output section, so a read
        # of one is credited to whichever object's copy the linker kept. The literals an
        # object uses are its own pools once the hot ones sit in an output section of their
        # own: so also take the pools of every object whose code ran or whose tables
        # (pointers to its literals) were read.
        users = {secs[i][4] for i in t | sections_of(loads, secs, starts, TABLE_OUT)}
        r |= {i for i, x in enumerate(secs) if x[2] in RODATA_OUT and x[4] in users
              and re.match(r"^\.rodata(\..*)?\.(str|cst)[0-9.]+$", x[3])}
        r -= seen_r
        seen_r |= r
        rodata.append((name, sorted(r)))
        print("gen.py: %s: %d text sections (%d bytes), %d rodata sections (%d bytes)%s" % (
            name, len(t), sum(secs[i][1] - secs[i][0] for i in t), len(r),
            sum(secs[i][1] - secs[i][0] for i in r), "" if data else ", loads not traced"),
            file=sys.stderr)
    if not args.keep:
        shutil.rmtree(tmp)

    def block(out_name, before, tiers, head, fallback=None):
        lines = ["SECTIONS", "{"] + head(out_name)
        done = set()
        for name, idx in tiers:
            lines.append("    /* used by rudder template of the %s chart */" % name)
            for i in idx:
                p = pattern(secs[i][4], secs[i][3])
                if p not in done:
                    done.add(p)
                    lines.append("    " + p)
        if fallback:
            # Then everything else of the same objects (but their cold parts, .text.unlikely.*)
            # so that code added to them since this list was made lands near the rest.
            lines.append("    /* the rest of the objects above */")
            for obj in dict.fromkeys(secs[i][4] for _, idx in tiers for i in idx):
                p = pattern(obj, fallback)
                if p not in done:
                    done.add(p)
                    lines.append("    " + p)
        lines += ["  }", "}", "INSERT BEFORE %s;" % before, ""]
        return lines

    lines = ["/* Generated by bench/hot/gen.py (see there and bench/README.md); do not edit.",
             "   Linker script fragment: the input sections that rudder template runs or reads,",
             "   placed together before the rest of .text and .rodata. */", ""]
    # .fini (a few bytes that run at exit) would otherwise sit alone at the end of the text,
    # where its page fault maps a window of cold code; KEEP and SORT_NONE as in ld's own script.
    lines += block(".text.rudder_hot", ".text", text, lambda o: [
        "  %s :" % o, "  {", "    KEEP (*(SORT_NONE(.fini)))"], ".text .text.[!u]* .text.u[!n]*")
    # Page-aligned so that it starts the read-only segment instead of ending the text one.
    lines += block(".rodata.rudder_hot", ".rodata", rodata, lambda o: [
        "  %s ALIGN(CONSTANT (MAXPAGESIZE)) :" % o, "  {"])
    with open(OUT, "w") as f:
        f.write("\n".join(lines))
    print("gen.py: wrote %s" % os.path.relpath(OUT, ROOT), file=sys.stderr)


if __name__ == "__main__":
    main()
