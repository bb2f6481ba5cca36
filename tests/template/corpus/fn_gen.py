#!/usr/bin/env python3
"""Writes the Sprig/Helm function corpus (fn_*.tcase) from compact lists:
each function is crossed with argument pools shaped like what charts pass
(float64 from values, int literals, int64, strings, nil, lists, maps, missing
keys). Expected results never come from here: the Go oracle computes them
(tests/template/regen.sh)."""
import itertools, os

HERE = os.path.dirname(os.path.abspath(__file__))

VALUES = """\
str: hello
empty: ""
num: 42
neg: -7
flt: 3.75
big: 1000000
huge: 1e21
tiny: 0.0000001
zero: 0
t: true
f: false
nul: null
list: [a, b, c]
nums: [1, 2, 3]
dup: [1, 2, 1, "a", "a", null, 2.5]
mixed: [1, "two", 3.5, true, null, {k: v}, [x]]
elist: []
emap: {}
map: {b: 2, a: 1, c: 3}
nested: {a: {b: {c: deep}}, l: [{n: 1}, {n: 2}], e: ""}
over: {a: {b: {x: 1}}, l: [9], s: new, z: null, e: filled, n: 0}
spaces: "  padded  "
multiline: "line1\\nline2\\n"
ver: "1.2.3"
numstr: "42"
fltstr: "3.50"
hexstr: "0x1F"
octstr: "0755"
uni: "héllo wörld ☃"
html: "<a href='x'>&</a>"
yesstr: "yes"
path: "/a/b/../c.txt"
b64: "aGVsbG8gd29ybGQ="
"""

ANY = ['.str', '.empty', '.num', '.neg', '.flt', '.big', '.zero', '.t', '.f', '.nul', '.list', '.nums', '.mixed',
       '.elist', '.emap', '.map', '.nested', '.missing', '1', '-3', '0', '2.5', '(int64 7)', '"s"', '""', 'nil',
       '(list 1 "a")', '(dict "k" "v")', '.numstr', '.fltstr', '.hexstr', '.huge', '.tiny', '.uni', '.octstr']
SCAL = ['.str', '.empty', '.num', '.neg', '.flt', '.zero', '.t', '.nul', '.missing', '1', '-3', '2.5', '(int64 7)',
        '"s"', '.numstr', '.fltstr', '.hexstr', '.huge', '.tiny', '.octstr', '.list', '.map']
STR = ['.str', '.empty', '.uni', '.spaces', '.multiline', '"a-b_c d"', '""', '.num', '.missing', '.nul',
       '"Hello World foo"', '.html', '"  x\\ty  "']
INT = ['0', '3', '-2', '.num', '(int 5)', '(int64 5)', '.missing', '"3"', '20']
LISTS = ['.list', '.nums', '.dup', '.mixed', '.elist', '(list)', '(list 1 "a" nil)', '(splitList "," "x,y")',
         '(until 3)', '.str', '.map', '.nul', '.missing', '1']

cases = {}


def add(fname, tpl, values=None, mode=None):
    cases.setdefault(fname, []).append((tpl, values, mode))


def cross(fname, fn, *pools, fmt=None):
    for combo in itertools.product(*pools):
        call = fn + (' ' + ' '.join(combo) if combo else '')
        add(fname, fmt.format(call) if fmt else '{{ ' + call + ' }}')


TYPED = '{{{{ printf "%T|%v" ({}) }}}}'

# --- strings ---
for fn in ['upper', 'lower', 'title', 'untitle', 'trim', 'nospace', 'initials', 'swapcase', 'b64enc', 'b32enc',
           'sha1sum', 'sha256sum', 'sha512sum', 'adler32sum', 'base', 'dir', 'clean', 'ext', 'isAbs', 'quote',
           'squote', 'toString', 'atoi', 'b64dec', 'b32dec', 'osBase', 'osDir', 'splitList ","', 'cat']:
    cross('fn_strings', fn, STR)
for fn in ['trimAll', 'trimSuffix', 'trimPrefix', 'contains', 'hasPrefix', 'hasSuffix']:
    cross('fn_strings', fn, ['"l"', '"he"', '"o"', '""', '" "', '.num'], ['.str', '.spaces', '""', '"hello hello"'])
cross('fn_strings', 'replace', ['"l"', '""', '"ll"'], ['"L"', '""'], ['.str', '""', '"lll"'])
cross('fn_strings', 'indent', INT, ['.str', '.multiline', '""', '"a\\nb"'])
cross('fn_strings', 'nindent', INT, ['.str', '.multiline', '""', '"a\\nb"'])
cross('fn_strings', 'trunc', ['0', '3', '-3', '10', '-10', '.num', '(int64 2)'], ['.str', '""', '.uni'])
cross('fn_strings', 'substr', ['0', '1', '-1', '3', '10'], ['0', '2', '-1', '5', '10'], ['.str', '""'])
cross('fn_strings', 'repeat', ['0', '3', '-1', '.num'], ['.str', '""'])
cross('fn_strings', 'abbrev', ['3', '4', '5', '10'], ['.str', '"Now is the time for all good men"', '""'])
cross('fn_strings', 'abbrevboth', ['0', '5', '10'], ['4', '7', '10'], ['"Now is the time for all good men"', '.str'])
cross('fn_strings', 'plural', ['"one"'], ['"many"'], ['0', '1', '2', '.num', '(int64 1)'])
cross('fn_strings', 'quote', ANY)
cross('fn_strings', 'squote', ANY)
cross('fn_strings', 'cat', ANY)
for t in ['{{ quote "a" 1 nil .nul "b" }}', '{{ squote "a" 1 nil "b" }}', '{{ cat "a" 1 nil "b" .list }}',
          '{{ quote }}', '{{ cat }}', '{{ .str | quote }}', '{{ .num | quote }}', '{{ quote .uni .html }}',
          '{{ "a\\"b\\\\c\\n\\t\\x00" | quote }}', '{{ "it\'s" | squote }}', '{{ .str | upper | repeat 2 }}',
          '{{ "hello" | title }}', '{{ "hello_world-foo bar.baz" | title }}', '{{ "ÉCOLE école" | lower }}',
          '{{ "ÉCOLE école" | upper }}', '{{ "Hello World" | untitle }}', '{{ "HeLLo wORLD" | swapcase }}',
          '{{ "  a b\\tc\\nd  " | nospace }}', '{{ "  hello  \\n" | trim }}', '{{ "--x--" | trimAll "-" }}',
          '{{ "$x$" | trimall "$" }}', '{{ "foo.yaml" | trimSuffix ".yaml" }}', '{{ "/x" | trimPrefix "/" }}',
          '{{ .str | nindent 4 }}', '{{ .multiline | indent 2 }}', '{{ toYaml .nested | nindent 2 }}',
          '{{ "a b c" | replace " " "-" }}', '{{ "" | replace "" "x" }}', '{{ "abc" | replace "" "-" }}',
          '{{ b64dec "!!!" }}', '{{ b64dec "aGVsbG8" }}', '{{ b64dec "aGVsbG8=" }}', '{{ b64dec "aGVsbA==" }}',
          '{{ b64dec "aGVs\\nbA==" }}', '{{ b64dec "a" }}', '{{ b64dec "ab" }}', '{{ b64dec "abc" }}',
          '{{ b64dec "ab=c" }}', '{{ b64dec "ab==" }}', '{{ b64dec "ab===" }}', '{{ b64dec .b64 }}',
          '{{ b32dec "NBSWY3DP" }}', '{{ b32dec "NBSWY3D" }}', '{{ b32dec "NBSWY===" }}', '{{ b32dec "nbswy3dp" }}',
          '{{ b32dec "MZXW6===" }}', '{{ b32dec "MZXW6YQ=" }}', '{{ b32dec "MZXQ====" }}', '{{ b32dec "MY======" }}',
          '{{ b32enc "f" }}', '{{ b32enc "fo" }}', '{{ b32enc "foo" }}', '{{ b32enc "foob" }}', '{{ b32enc "fooba" }}',
          '{{ b32enc "foobar" }}', '{{ "hello" | sha256sum | trunc 8 }}', '{{ adler32sum "Wikipedia" }}',
          '{{ base "" }}', '{{ base "/" }}', '{{ base "a/b/" }}', '{{ dir "" }}', '{{ dir "/" }}', '{{ dir "a" }}',
          '{{ dir "/a/b/c" }}', '{{ clean "a//b/./../c/" }}', '{{ clean "/../a" }}', '{{ clean "../../a/.." }}',
          '{{ clean "./" }}', '{{ ext "a.b.c" }}', '{{ ext "a/b.c/d" }}', '{{ ext ".bashrc" }}',
          '{{ isAbs "/x" }}', '{{ isAbs "x" }}', '{{ atoi "42" }}', '{{ atoi " 42" }}', '{{ atoi "-42" }}',
          '{{ atoi "+42" }}', '{{ atoi "4.2" }}', '{{ atoi "0x10" }}', '{{ atoi "99999999999999999999" }}',
          '{{ atoi "-99999999999999999999" }}', '{{ atoi "1_000" }}', '{{ atoi "" }}', '{{ atoi "+" }}',
          '{{ initials "First Middle last" }}', '{{ initials "  a  b " }}', '{{ "abc" | substr 1 2 }}',
          '{{ trunc 3 "héllo" }}', '{{ repeat 3 "ab" }}', '{{ upper .num }}', '{{ upper }}', '{{ upper "a" "b" }}',
          '{{ indent -1 "x" }}', '{{ indent 2.5 "x" }}', '{{ indent .flt "x" }}', '{{ nindent "2" "x" }}',
          '{{ "Hello" | contains "ell" }}', '{{ hasPrefix "" "" }}', '{{ hasSuffix "lo" .str }}',
          '{{ "ﬀ" | upper }}', '{{ "ß" | upper }}', '{{ "ǅ" | lower }}', '{{ "straße" | title }}',
          '{{ toString 1.0 }}', '{{ toString .flt }}', '{{ toString .big }}', '{{ toString .huge }}',
          '{{ toString (list 1 2) }}', '{{ toString .map }}', '{{ toString nil }}', '{{ toString .missing }}',
          '{{ hello }}']:
    add('fn_strings', t)

# --- string lists ---
cross('fn_stringlists', 'join', ['","', '""', '" - "'], LISTS)
cross('fn_stringlists', 'toStrings', LISTS, fmt=TYPED)
cross('fn_stringlists', 'sortAlpha', LISTS + ['(list "b" "B" "a" "10" "9" "_")', '(list 3 1 2)'], fmt=TYPED)
cross('fn_stringlists', 'splitList', ['","', '""', '"a"', '", "'], ['"a,b,c"', '""', '"abc"', '",a,,b,"', '.str', '"a, b"'], fmt=TYPED)
cross('fn_stringlists', 'split', ['","', '""', '"b"'], ['"a,b,c"', '""', '"abc"', '.str'], fmt=TYPED)
cross('fn_stringlists', 'splitn', ['","', '""'], ['0', '1', '2', '-1', '5'], ['"a,b,c"', '""', '"abc"'], fmt=TYPED)
for t in ['{{ $s := split "$" "foo$bar$baz" }}{{ $s._0 }} {{ $s._2 }}', '{{ (splitn "=" 2 "k=v=w")._1 }}',
          '{{ join "," (list "a" 1 nil 2.5 true) }}', '{{ join "," .nil }}', '{{ join "," 5 }}',
          '{{ join "," "str" }}', '{{ join "," (dict "a" 1) }}', '{{ sortAlpha (list "b" "a" 3 nil 1.5) }}',
          '{{ sortAlpha "x" }}', '{{ sortAlpha 3 }}', '{{ sortAlpha nil }}', '{{ keys .map | sortAlpha | join "," }}',
          '{{ toStrings .dup | join "|" }}', '{{ range splitList "," "a,b" }}[{{ . }}]{{ end }}',
          '{{ splitList "," "a,b" | len }}', '{{ index (splitList "," "a,b") 1 }}']:
    add('fn_stringlists', t)

# --- defaults ---
cross('fn_defaults', 'default "D"', ANY)
cross('fn_defaults', 'empty', ANY)
cross('fn_defaults', 'coalesce', ANY, ['"x"'])
cross('fn_defaults', 'ternary "yes" "no"', ['true', 'false', '.t', '.f', '.num', '.missing', 'nil', '"true"'])
cross('fn_defaults', 'typeOf', ANY)
cross('fn_defaults', 'kindOf', ANY)
cross('fn_defaults', 'deepEqual', ['.nums', '(list 1 2 3)', '.num', '42', '42.0', '.str', '"hello"', 'nil', '.missing',
                                   '.emap', '(dict)'],
      ['.nums', '(list 1.0 2.0 3.0)', '.num', '42.0', '"hello"', 'nil', '(dict)', '.elist'])
for t in ['{{ .missing | default "d" }}', '{{ .str | default "d" }}', '{{ .zero | default 5 }}',
          '{{ .f | default true }}', '{{ .empty | default "e" }}', '{{ .elist | default (list 1) }}',
          '{{ default "d" }}', '{{ default }}', '{{ default "a" "b" "c" }}', '{{ default "d" nil }}',
          '{{ .nested.a.x | default "dflt" }}', '{{ .nul | default .str }}', '{{ default (dict "a" 1) .emap }}',
          '{{ empty 0.0 }}', '{{ empty "0" }}', '{{ empty (list) }}', '{{ empty (int64 0) }}', '{{ empty }}',
          '{{ coalesce }}', '{{ coalesce nil "" 0 false }}', '{{ coalesce .missing .empty .str }}',
          '{{ coalesce .nul .zero .nums }}', '{{ all }}', '{{ any }}', '{{ all 1 "a" true }}', '{{ all 1 "" true }}',
          '{{ any 0 "" nil }}', '{{ any 0 "" .str }}', '{{ all .list .map }}', '{{ any .elist .emap .nul }}',
          '{{ ternary "a" "b" }}', '{{ ternary "a" "b" 1 }}', '{{ true | ternary "y" "n" }}',
          '{{ ternary .list .map true }}', '{{ ternary nil "b" true }}', '{{ typeIs "string" .str }}',
          '{{ typeIs "float64" .num }}', '{{ typeIs "int" 1 }}', '{{ typeIsLike "string" .str }}',
          '{{ typeIsLike "map[string]interface {}" .map }}', '{{ kindIs "slice" .list }}', '{{ kindIs "map" .map }}',
          '{{ kindIs "invalid" nil }}', '{{ kindIs "int" .num }}', '{{ kindIs "float64" .num }}',
          '{{ typeOf (list) }}', '{{ typeOf (dict) }}', '{{ typeOf (splitList "," "") }}', '{{ typeOf (until 2) }}',
          '{{ typeOf (split "," "") }}', '{{ typeOf (int64 1) }}', '{{ typeOf (toDecimal "7") }}',
          '{{ typeOf (add 1 2) }}', '{{ typeOf (float64 1) }}', '{{ typeOf (keys .map) }}', '{{ kindOf (keys .map) }}',
          '{{ deepEqual (dict "a" (list 1)) (dict "a" (list 1)) }}', '{{ deepEqual (list 1) (list 1.0) }}',
          '{{ deepEqual .map .map }}', '{{ deepEqual }}']:
    add('fn_defaults', t)

# --- conversions ---
for fn in ['int', 'int64', 'float64', 'toDecimal', 'toString']:
    cross('fn_conv', fn, SCAL + ['"1_000"', '"0b101"', '"0o17"', '"1e3"', '"  5"', '"-0"', '"+7"', '"9223372036854775808"',
                                '"3.0"', '"3.10"', '"abc"', '"inf"', '"NaN"', '"0x1p4"', '"017"', '"08"', '"1.5e400"',
                                '1e20', '-1e20', '(float64 "-3.9")', 'true', 'false', '"10.00"', '"."', '"0."'],
          fmt=TYPED)
for t in ['{{ int .nums }}', '{{ int64 .map }}', '{{ float64 .list }}', '{{ int }}', '{{ .num | int | add1 }}',
          '{{ atoi .numstr | add 1 }}', '{{ int "1e3" }}', '{{ float64 "1_000.5" }}', '{{ int64 "0x_1F" }}',
          '{{ int 3.99 }}', '{{ int -3.99 }}', '{{ int64 9.3e18 }}', '{{ int64 -9.3e18 }}']:
    add('fn_conv', t)

# --- math ---
NUMS = ['.num', '.neg', '.flt', '.zero', '3', '-2', '2.5', '(int64 4)', '"5"', '"2.5"', '.missing', 'nil', '.str', 'true']
for fn in ['add1', 'floor', 'ceil', 'add1f']:
    cross('fn_math', fn, NUMS, fmt=TYPED)
for fn in ['add', 'sub', 'mul', 'div', 'mod', 'max', 'min', 'maxf', 'minf', 'addf', 'subf', 'mulf', 'divf', 'biggest']:
    cross('fn_math', fn, NUMS[:11], ['.num', '3', '-2', '2.5', '.zero', '"4"'], fmt=TYPED)
cross('fn_math', 'round', ['.flt', '3.14159', '-2.5', '2.5', '"1.005"', '.num', '1234.5678'], ['0', '1', '2', '-1'], fmt=TYPED)
cross('fn_math', 'until', ['0', '3', '-3', '.missing'], fmt=TYPED)
cross('fn_math', 'untilStep', ['0', '5', '-2'], ['0', '10', '-5'], ['1', '3', '-2', '0'], fmt=TYPED)
cross('fn_math', 'seq', [''], fmt=TYPED)
for t in ['{{ seq 5 }}', '{{ seq -3 }}', '{{ seq 0 }}', '{{ seq 2 5 }}', '{{ seq 5 2 }}', '{{ seq 1 2 10 }}',
          '{{ seq 10 -2 1 }}', '{{ seq 1 -2 10 }}', '{{ seq 10 2 1 }}', '{{ seq 1 2 3 4 }}', '{{ seq 1 1 }}',
          '{{ add }}', '{{ add 1 2 3 4.9 }}', '{{ mul 2 }}', '{{ add 9223372036854775807 1 }}',
          '{{ mul 4294967296 4294967296 }}', '{{ div 7 2 }}', '{{ div -7 2 }}', '{{ mod -7 2 }}', '{{ div 1 0 }}',
          '{{ mod 1 0 }}', '{{ div 1 .missing }}', '{{ max 1 }}', '{{ min 3 1 2 }}', '{{ max -1 -5 "7" }}',
          '{{ addf 1.1 2.2 }}', '{{ addf 0.1 0.2 0.3 }}', '{{ subf 1 0.9 }}', '{{ mulf 1.1 3 }}', '{{ divf 10 3 }}',
          '{{ divf 1 3 3 }}', '{{ divf 2 3 }}', '{{ divf 1 0 }}', '{{ divf 1 }}', '{{ mulf 0.1 0.1 }}',
          '{{ addf }}', '{{ add1f 0.1 }}', '{{ maxf 1 2.5 "3" }}', '{{ minf -0.5 0 }}', '{{ round 2.5 0 }}',
          '{{ round 2.45 1 0.4 }}', '{{ round 1.5 0 0.6 }}', '{{ floor "x" }}', '{{ ceil -0.5 }}',
          '{{ len (until 5) }}', '{{ range until 3 }}{{ . }},{{ end }}', '{{ range untilStep 0 10 4 }}{{ . }},{{ end }}',
          '{{ add1 9223372036854775807 }}', '{{ sub 0 9223372036854775807 }}', '{{ div -9223372036854775808 -1 }}',
          '{{ add .num .flt .big }}', '{{ mul .flt 2 }}', '{{ addf .flt .num }}', '{{ until 2.5 }}',
          '{{ add1 1e19 }}', '{{ add "1e3" 1 }}', '{{ add "0x10" 1 }}', '{{ add "010" 1 }}', '{{ add "1.50" 1 }}']:
    add('fn_math', t)

# --- lists ---
for fn in ['first', 'last', 'rest', 'initial', 'reverse', 'compact', 'uniq', 'mustFirst', 'mustLast', 'mustRest',
           'mustInitial', 'mustReverse', 'mustCompact', 'mustUniq']:
    cross('fn_lists', fn, LISTS, fmt=TYPED)
cross('fn_lists', 'append', LISTS, ['"z"', 'nil', '(list 9)'], fmt=TYPED)
cross('fn_lists', 'prepend', LISTS, ['"z"', 'nil'], fmt=TYPED)
cross('fn_lists', 'has', ['"a"', '1', '1.0', 'nil', '"x"', '2.5'], LISTS, fmt=TYPED)
cross('fn_lists', 'without', LISTS, ['"a"', '1', 'nil'], fmt=TYPED)
cross('fn_lists', 'slice', LISTS, ['', '1', '0 2', '1 1', '2 1', '0 10', '"1"', '-1'], fmt=TYPED)
cross('fn_lists', 'concat', LISTS[:9], ['.list', '(list)', '.str'], fmt=TYPED)
# chunk returns [][]interface {}, which the value model cannot name (%T): compared by value only.
cross('fn_lists', 'chunk', ['1', '2', '3', '5'], ['.dup', '.elist', '.list', '.str'])
cross('fn_lists', 'list', ANY, fmt=TYPED)
for t in ['{{ list }}', '{{ tuple 1 2 }}', '{{ list 1 (list 2 3) (dict "a" 1) }}', '{{ push .list "d" }}',
          '{{ mustPush .list "d" }}', '{{ mustAppend "x" 1 }}', '{{ mustPrepend 1 1 }}', '{{ append nil 1 }}',
          '{{ $l := list 1 }}{{ $_ := append $l 2 }}{{ $l }}', '{{ concat }}', '{{ concat nil }}',
          '{{ concat (list 1) (list 2) (list 3 4) }}', '{{ has 1 nil }}', '{{ mustHas "a" .list }}',
          '{{ mustHas 1 "x" }}', '{{ without .nums 1 3 }}', '{{ without .nums }}', '{{ slice .list }}',
          '{{ slice .list 1 }}', '{{ slice .list 1 2 3 }}', '{{ mustSlice .str 1 }}', '{{ slice (splitList "," "a,b,c") 1 }}',
          '{{ typeOf (slice (splitList "," "a,b,c") 1) }}', '{{ chunk 0 .list }}', '{{ chunk -1 .list }}',
          '{{ first "" }}', '{{ first .list | upper }}', '{{ last .nums | add1 }}', '{{ uniq (list 1 1.0 "1" 1) }}',
          '{{ uniq (list (list 1) (list 1) (dict) (dict)) }}', '{{ compact (list 0 1 "" "a" nil false true (list) (dict)) }}',
          '{{ reverse (until 4) }}', '{{ rest (list 1) }}', '{{ initial (list 1) }}', '{{ toJson (rest (list)) }}',
          '{{ toJson (concat) }}', '{{ first (until 3) | typeOf }}']:
    add('fn_lists', t)

# --- dicts ---
for t in ['{{ dict }}', '{{ dict "a" }}', '{{ dict "a" 1 "b" }}', '{{ dict 1 2 3 4 }}', '{{ dict nil 1 }}',
          '{{ dict .list 1 }}', '{{ dict "a" 1 "a" 2 }}', '{{ dict 1.5 "x" true "y" }}', '{{ typeOf (dict) }}',
          '{{ get .map "a" }}', '{{ get .map "zz" }}', '{{ get .nested "a" }}', '{{ get .emap "a" }}',
          '{{ get .missing "a" }}', '{{ get .list "a" }}', '{{ get .map 1 }}', '{{ typeOf (get .map "zz") }}',
          '{{ $d := dict "a" 1 }}{{ $_ := set $d "b" 2 }}{{ $d }}', '{{ set .map "z" 9 }}', '{{ set (dict) "k" nil }}',
          '{{ set .missing "k" 1 }}', '{{ unset .map "a" }}', '{{ unset (dict "a" 1) "zz" }}', '{{ unset .missing "a" }}',
          '{{ hasKey .map "a" }}', '{{ hasKey .map "zz" }}', '{{ hasKey .nested "e" }}', '{{ hasKey .missing "a" }}',
          '{{ hasKey .list "a" }}', '{{ pluck "a" .map (dict "a" 5) (dict "b" 1) }}', '{{ pluck "a" }}',
          '{{ pluck "a" .list }}', '{{ keys .map | sortAlpha }}', '{{ keys .map .nested | sortAlpha }}',
          '{{ keys }}', '{{ keys .emap }}', '{{ keys (dict "x" 1) }}', '{{ values (dict "x" 1) }}',
          '{{ values .emap }}', '{{ values .map | len }}', '{{ pick .map "a" "c" "zz" }}', '{{ pick .map }}',
          '{{ omit .map "a" "zz" }}', '{{ omit .map }}', '{{ pick .map 1 }}',
          '{{ merge (dict "a" 1) (dict "a" 2 "b" 2) }}', '{{ mergeOverwrite (dict "a" 1) (dict "a" 2 "b" 2) }}',
          '{{ merge .nested .over | toJson }}', '{{ mergeOverwrite .nested .over | toJson }}',
          '{{ merge .over .nested | toJson }}', '{{ mergeOverwrite .over .nested | toJson }}',
          '{{ $d := dict "a" 1 }}{{ $_ := merge $d (dict "b" 2) }}{{ $d }}',
          '{{ $d := dict "a" 1 }}{{ $_ := mergeOverwrite $d (dict "a" 3) }}{{ $d }}',
          '{{ merge (dict) (dict "a" (list 1)) (dict "a" (list 2)) }}', '{{ mergeOverwrite (dict "l" (list 1 2)) (dict "l" (list 3)) }}',
          '{{ merge (dict "l" (list 1 2)) (dict "l" (list 3)) }}', '{{ merge (dict "a" "") (dict "a" "x") }}',
          '{{ merge (dict "a" 0) (dict "a" 5) }}', '{{ merge (dict "a" false) (dict "a" true) }}',
          '{{ mergeOverwrite (dict "a" "x") (dict "a" "") }}', '{{ mergeOverwrite (dict "a" "x") (dict "a" nil) }}',
          '{{ merge (dict "a" "x") (dict "a" nil) }}', '{{ merge (dict "a" nil) (dict "a" "y") }}',
          '{{ merge (dict "a" (dict "x" 1)) (dict "a" (dict "y" 2)) }}', '{{ merge (dict "a" "s") (dict "a" (dict "y" 2)) }}',
          '{{ mergeOverwrite (dict "a" "s") (dict "a" (dict "y" 2)) }}', '{{ mergeOverwrite (dict "a" (dict "y" 2)) (dict "a" "s") }}',
          '{{ merge (dict "a" (dict)) (dict "a" (dict "y" 2)) }}', '{{ merge (dict "a" (list)) (dict "a" (list 1)) }}',
          '{{ merge .missing (dict "a" 1) }}', '{{ merge (dict "a" 1) .missing }}', '{{ merge (dict "a" 1) }}',
          '{{ merge (dict "a" 1) (dict "b" 2) (dict "c" 3 "a" 9) }}', '{{ mustMerge (dict "a" 1) (dict "b" 2) }}',
          '{{ mustMergeOverwrite (dict "a" 1) (dict "a" 2) }}', '{{ merge (dict "a" 1) "x" }}',
          '{{ $s := dict "n" (dict "x" 1) }}{{ $d := merge (dict) $s }}{{ $_ := set $d.n "y" 2 }}{{ $s }}',
          '{{ $c := deepCopy .nested }}{{ $_ := set $c "a" 1 }}{{ .nested.a }} {{ $c.a }}', '{{ deepCopy .list }}',
          '{{ deepCopy 5 }}', '{{ deepCopy nil }}', '{{ deepCopy .missing }}', '{{ mustDeepCopy .map }}',
          '{{ typeOf (deepCopy (splitList "," "a")) }}', '{{ dig "a" "b" "c" "d" .nested }}',
          '{{ dig "a" "x" "d" .nested }}', '{{ dig "a" "d" .nested }}', '{{ dig "zz" "d" .nested }}',
          '{{ dig "l" "d" .nested }}', '{{ dig "a" "b" "c" "x" "d" .nested }}', '{{ dig "a" .nested }}',
          '{{ dig "a" "d" .list }}', '{{ dig 1 "d" .nested }}', '{{ dig "a" "d" nil }}', '{{ dig "e" "d" .nested }}',
          '{{ dig "a" "b" "d" (dict "a" (dict "b" nil)) }}', '{{ .nested | dig "a" "b" "c" "none" }}',
          '{{ dig "str" "d" . }}', '{{ dig "nul" "d" . }}']:
    add('fn_dicts', t)

# --- toYaml / toJson / fromYaml / fromJson ---
YAML_VALUES = VALUES + """\
strs: ["yes", "no", "on", "off", "y", "n", "true", "False", "null", "~", "", " ", "1", "1.5", "1e3", "0x1F", "0o17",
       "017", "08", "1_000", "+1", "-1", ".5", ".inf", "-.inf", ".nan", "2001-12-14", "2001-12-14t21:59:43.10-05:00",
       "2001-12-14 21:59:43.10", "12:30", "1:20:30.5", "-", "--", "---", "...", "a: b", "a:b", "a #b", "a#b", "#a",
       "- a", "-a", "? x", "?x", "[a]", "{a}", "*a", "&a", "!a", "|a", ">a", "'a", "\\"a", "%a", "@a", "`a", ",a",
       "a,b", "<<", "=", "a\\tb", "a\\u0085b", "\\u00a0a", "a\\u2028b", "\\ufeffa", "\\u00e9", "\\U0001F600",
       "line1\\nline2", "line1\\nline2\\n", "line1\\nline2\\n\\n", "\\nlead", " lead", "trail ", "trail \\nx",
       "x\\n trail", "a\\r\\nb", "\\x01", "\\x7f", "0b101", "-0b101", "0B1", "1e", "e1", "1.", "+.5", "-.5e3",
       "1__0", "_1", "1_", "Yes", "YES", "yES", "NULL", "nULL", "TRUE", "0xG", "0x", "1:2:3", "99:99",
       "a long string with many words that keeps going and going past the eighty column limit so it folds",
       "averyveryveryveryveryveryveryveryveryveryveryveryveryveryveryveryveryveryveryverylongword and more",
       "multi line text\\nwith a long second line that keeps going and going past the eighty column limit"]
keys: {"b": 1, "B": 2, "a10": 3, "a9": 4, "a09": 5, "1": 7, "10": 8, "9": 9, "_x": 10, "é": 11, "Z": 12,
       "a b": 13, "yes": 14, "": 15, "x:y": 16, "01": 17, "001": 18, "a1": 19, "a01": 20, "2": 21}
floats: [0.5, 1.0, 100, 1e6, 1e20, 1e21, 1.5e300, 1e-6, 1e-7, 123456789.5, -0.0, 3.14159, 1e15, 1.5e19]
deep: {a: {b: [{c: [1, [2, [3, {d: e}]]]}, [], {}]}}
"""
for v in ['.str', '.empty', '.num', '.neg', '.flt', '.big', '.huge', '.tiny', '.zero', '.t', '.nul', '.list', '.nums',
          '.mixed', '.elist', '.emap', '.map', '.nested', '.missing', '.multiline', '.uni', '.html', '.yesstr', '.strs',
          '.keys', '.floats', '.deep', '.', '1', '(int64 5)', '"s"', 'nil', '(list)', '(dict)', '(splitList "," "a,b")',
          '(until 3)', '(split "," "a,b")', '(list nil)', '(dict "k" nil)', '(rest (list))', '(concat)',
          '(dict "a" (dict))', '(list (list) (dict))', '(list (list 1 2) (list 3))', '(list (dict "a" 1 "b" (list 1)))']:
    for fn in ['toYaml', 'toJson', 'toPrettyJson', 'toRawJson', 'mustToYaml', 'mustToJson']:
        add('fn_yaml', '{{ ' + fn + ' ' + v + ' }}', values=YAML_VALUES)
for i in range(120):
    add('fn_yaml', '{{ toYaml (index .strs %d) }}|{{ toYaml (dict "k" (index .strs %d)) }}|{{ toYaml (list (index .strs %d)) }}|{{ toJson (index .strs %d) }}' % (i, i, i, i),
        values=YAML_VALUES)
for t in ['{{ toYaml (dict "k" (dict "a" (list 1 (dict "x" "line1\\nline2")))) }}',
          '{{ toYaml (dict (repeat 129 "k") 1) }}', '{{ toYaml (dict (repeat 128 "k") 1) }}',
          '{{ toYaml (dict "a\\nb" 1) }}', '{{ toYaml (list (repeat 100 "x ")) }}',
          '{{ toYaml (dict "k" (printf "%s %s" (repeat 50 "a") (repeat 50 "b"))) }}',
          '{{ toYaml (dict "k" (printf "%s  %s" (repeat 50 "a") (repeat 50 "b"))) }}',
          '{{ toYaml (list (list (list (printf "%s %s %s" (repeat 30 "a") (repeat 30 "b") (repeat 30 "c"))))) }}',
          '{{ toYaml (printf "\'%s\' %s" (repeat 70 "a") (repeat 20 "b")) }}',
          '{{ toYaml (printf "%s \\"q\\" %s\\ttab" (repeat 70 "a") (repeat 20 "b")) }}',
          '{{ toYaml (printf " %s %s" (repeat 70 "a") (repeat 20 "b")) }}',
          '{{ toYaml (div 1 1 | float64 | divf 0) }}', '{{ toJson (float64 "NaN") }}', '{{ toYaml (float64 "inf") }}',
          '{{ mustToJson (float64 "NaN") }}', '{{ mustToYaml (float64 "-inf") }}', '{{ toJson (dict "a" (float64 "inf")) }}',
          '{{ toJson "<>&\\u2028\\u2029" }}', '{{ toRawJson "<>&" }}', '{{ toPrettyJson (dict "a" (list) "b" (dict) "c" (list 1 (dict "d" 2))) }}',
          '{{ toYaml (b64dec "/w==") }}', '{{ toJson (b64dec "/w==") }}', '{{ toYaml (dict (b64dec "/w==") 1) }}',
          '{{ .list | toYaml | nindent 4 }}', '{{ toYaml .nested | indent 2 }}']:
    add('fn_yaml', t, values=YAML_VALUES)
# 2^53: Go's shortest float formatting needs 16 digits here.
for t in ['{{ toYaml .x }}|{{ toJson .x }}|{{ .x }}']:
    add('fn_yaml', t, values='x: 9007199254740993\n')
for t in []:
    add('fn_yaml', t, values=YAML_VALUES)
JSONS = ['{"a":1,"b":[true,null,"x"]}', '[1,2]', '"s"', '1.5', 'null', 'true', '', ' ', '{', '{"a"', '{"a":}', '{"a":1,}',
         '[1,]', '[1 2]', "{'a':1}", '{"a":1}x', '{"a":1} ', '01', '-', '1.', '1e', '.5', 'tru', 'nul', '"\\u00e9\\n"',
         '"\\x"', '"\\u12"', '"a\tb"', '{"a":1,"a":2}', '{"big":12345678901234567890}', '{"n":1e400}', '[[[]]]',
         '{"a":{"b":{"c":[1,{"d":null}]}}}', '"\\ud83d\\ude00"', '"\\ud83d"', '{"k":"v"}garbage', ' {"a" : 1 } ',
         '{"":1}', '1 2', 'NaN', '-0', '1E+2', '{"a":[1,2,3]}', '{a:1}', '[', ']', '"unterminated']
for j in JSONS:
    js = j.replace('\\', '\\\\').replace('"', '\\"').replace('\t', '\\t')
    for fn in ['fromJson', 'fromJsonArray', 'mustFromJson']:
        add('fn_fromjson', '{{ printf "%%T|%%v" (%s "%s") }}' % (fn, js))
    add('fn_fromjson', '{{ fromJson "%s" | toJson }}' % js)
YAMLS = ['a: 1\nb: [x, y]', '- 1\n- 2', 's', '1.5', 'null', '~', '', 'a: yes\nb: on\nc: 0x10\nd: 1e3\ne: 2001-12-14',
         'a: {b: c}', 'a: [', 'a: b: c', '{a: 1', '- a\nb: c', 'a: 1\na: 2', 'a: &x 1\nb: *x', 'k: |\n  line\n  two',
         '? a\n: b', '1: one\n2: two', 'a:\n  - 1\n  - 2', '---\na: 1\n---\nb: 2', 'a: "\\u00e9"', 'a: !!str 1',
         'x: 12345678901234567890', 'a: 1 # c', '- [1, 2]\n- {a: b}', "a: 'it''s'", 'a:\tb', '  a: 1\n b: 2']
for y in YAMLS:
    ys = y.replace('\\', '\\\\').replace('"', '\\"').replace('\n', '\\n').replace('\t', '\\t')
    for fn in ['fromYaml', 'fromYamlArray']:
        add('fn_fromyaml', '{{ printf "%%T|%%v" (%s "%s") }}' % (fn, ys))
    add('fn_fromyaml', '{{ fromYaml "%s" | toYaml }}' % ys)
    add('fn_fromyaml', '{{ fromYamlArray "%s" | toJson }}' % ys)

# --- regex ---
PATS = ['"l+"', '"^h"', '"o$"', '"[a-z]+"', '"(\\\\w)(\\\\w)"', '"x*"', '""', '"(?P<first>\\\\w+) (?P<second>\\\\w+)"',
        '"a|ab"', '"(?i)HELLO"', '"\\\\d+"', '"(a"', '"a)"', '"[a"', '"*a"', '"a**"', '"(?=a)"', '"\\\\1"', '"a++"',
        '"(?<!a)b"', '"\\\\bw"', '"é"', '"."', '"\\\\Qa.b\\\\E"', '"[[:alpha:]]+"', '"$"', '"^"', '"a{2,3}"', '"a{,3}"']
SUBJ = ['.str', '"hello world"', '""', '"aaa abab"', '"héllo wörld"', '"line1\\nline2\\n"', '"123 abc 45"']
cross('fn_regex', 'regexMatch', PATS, SUBJ)
cross('fn_regex', 'mustRegexMatch', PATS[11:21], ['.str'])
cross('fn_regex', 'regexFind', PATS, SUBJ[:4])
cross('fn_regex', 'regexFindAll', PATS, SUBJ[:5], ['-1', '1', '0'])
cross('fn_regex', 'mustRegexFindAll', PATS[11:21], ['.str'], ['-1'])
cross('fn_regex', 'regexReplaceAll', PATS, SUBJ[:5], ['"<$1>"', '"${1}x"', '"$first-$2"', '"$$"', '"${second}"', '"$1x"', '"$"', '"$0"', '"${"', '"X"'])
cross('fn_regex', 'regexReplaceAllLiteral', PATS, SUBJ[:4], ['"<$1>"'])
cross('fn_regex', 'regexSplit', PATS, SUBJ[:5], ['-1', '2', '0'])
cross('fn_regex', 'regexQuoteMeta', ['"a.b*c"', '""', '"[x]{1}(y)|^$\\\\"', '.html'])
for t in ['{{ regexReplaceAll "[^a-z0-9-]" (lower "My_App.Name") "-" }}', '{{ regexFind "[0-9]+" "v1.22.3" }}',
          '{{ regexMatch "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" "my-app" }}', '{{ "a-b-c" | regexSplit "-" -1 }}',
          '{{ regexReplaceAll "(\\\\d+)\\\\.(\\\\d+)" "1.22" "${2}.${1}" }}', '{{ regexFindAll "a" "aaaa" 2 }}',
          '{{ regexReplaceAll "a*" "baaac" "-" }}', '{{ regexReplaceAll "" "abc" "-" }}', '{{ regexSplit "" "abc" -1 }}',
          '{{ regexSplit "a*" "baaac" -1 }}', '{{ regexFindAll "a*" "baaac" -1 }}', '{{ regexFindAll "" "héllo" -1 }}',
          '{{ regexMatch "\\\\s" "\\v" }}', '{{ regexMatch "^$" "\\n" }}', '{{ regexMatch "(?m)^b$" "a\\nb\\nc" }}']:
    add('fn_regex', t)


def write():
    for fname, cs in cases.items():
        with open(os.path.join(HERE, fname + '.tcase'), 'w') as f:
            f.write('# Generated by fn_gen.py from hand-written lists; edit there.\n')
            for i, (tpl, values, mode) in enumerate(cs):
                f.write(f'=== {fname}-{i:04d}\n')
                if mode:
                    f.write(f'--- mode {mode}\n')
                f.write('--- values\n' + (VALUES if values is None else values) + '\n')
                f.write('--- template main\n' + tpl + '\n')
    total = sum(len(v) for v in cases.values())
    print(f'{total} cases in {len(cases)} files')


if __name__ == '__main__':
    write()
