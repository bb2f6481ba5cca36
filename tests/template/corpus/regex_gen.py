#!/usr/bin/env python3
"""Writes regex_go.tcase: Go's regexp syntax through Sprig's regex functions.
Every pattern below (classes, bracket edge cases, escapes, flags, repetition
limits, anchors, Unicode and POSIX classes, invalid patterns) is run by each
function on every subject (ASCII, UTF-8, invalid UTF-8, empty). Expected
results never come from here: the Go oracle computes them (regen.sh)."""
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def golit(s):
    """A Go interpreted string literal for s (str, or bytes for invalid UTF-8)."""
    b = s if isinstance(s, bytes) else s.encode()
    out = '"'
    i = 0
    while i < len(b):
        c = b[i]
        if c == 0x5C:
            out += '\\\\'
        elif c == 0x22:
            out += '\\"'
        elif 0x20 <= c < 0x7F:
            out += chr(c)
        elif c >= 0x80:
            # keep valid UTF-8 sequences as they are, escape stray bytes
            for w in (4, 3, 2):
                try:
                    out += b[i:i + w].decode('utf-8')
                    i += w
                    break
                except UnicodeDecodeError:
                    continue
            else:
                out += '\\x%02x' % c
                i += 1
            continue
        else:
            out += '\\x%02x' % c
        i += 1
    return out + '"'


SUBJECTS = ['', 'a', 'abc', 'ABC aBc', 'aaa', 'hello world', 'foo-bar.baz_1', 'a\nb\nc\n', 'line1\r\nline2',
            '  x\ty\v ', 'héllo wörld', 'Straße ſ K k KELVIN', 'ΑΒΓ αβγ Σσς', '日本語 テキスト', b'\xff',
            b'a\xffb\xfe', b'\xe2\x82', b'\xed\xa0\x80x', 'x\x00y', '12.34-56', 'user@example.com',
            '[a]{b}(c)|*+?', 'my_app-1.2', 'abab', '\ufffd']

VALID = [
    # bracket expressions
    r'[\w-.]+', r'^[\w-\.]+$', r'[\d-x]+', r'[\s-a]+', r'[\pL-z]+', r'[a-]+', r'[-a]+', r'[]a]+', r'[^]a]+',
    r'[a-z0-9]+', r'[^a-z]+', r'[\s\S]', r'[^\n]+', r'[\p{Greek}]+', r'[\PL]+', r'[^\pL\d]+', r'[[:alpha:]]+',
    r'[[:^alpha:]]+', r'[[:word:][:punct:]]+', r'[[:upper:]]', r'(?i)[[:upper:]]+', r'(?i)[[:^lower:]]+',
    r'[[:space:]]+', r'[[:xdigit:]]+', r'[[:cntrl:]]', r'[[:print:]]+', r'[[:graph:]]+', r'[[:blank:]]+',
    r'[\x41-\x{5A}]+', r'[\-]', r'[\]]', r'[\\]', r'[a\-z]+', r'[.]', r'[$^]', r'[[]', r'[a[b]+', r'[[:]+',
    r'[\x{1F600}-\x{1F64F}]', r'[^\x00-\x{10FFFF}]', r'[^\D\d]', r'(?i)[k]+', r'(?i)[^k]+', r'(?i)[a-c]+',
    r'(?i)[\x{212A}]', r'(?i)[^\x{17F}]+', r'[\x{D7FF}-\x{E000}]', r'[\x{FFFD}]', r'[^a]', r'[日-本]+',
    # Perl classes
    r'\w+', r'\W+', r'\s+', r'\S+', r'\d+', r'\D+', r'(?i)\w+', r'(?i)\W+', r'(?i)\S+',
    # escapes
    r'\.', r'\x41', r'\x{263a}', r'\101', r'\0', r'\12', r'\a\f\t\n\r\v', r'\_', r'\-', r'\!', r'\Qa.b\E+',
    r'\Q(a)', r'\Q\E', r'a\Q\Eb', r'\Q*\E*', r'\x{0}', r'\x{10FFFF}', r'\177',
    # flags
    r'(?i)hello', r'(?i)straße', r'(?i)STRASSE', r'(?i)k', r'(?i)ſ', r'(?i)σ', r'(?i)Σ+', r'(?s).+', r'.+',
    r'(?m)^\w+$', r'(?m)^', r'(?m)$', r'^', r'$', r'(?m:^b$)', r'(?U)a+', r'(?U)a+?', r'a+?', r'(?i:A)b',
    r'(?i)a(?-i)b', r'(?im)^A', r'(?sm).$', r'(?)a', r'(?i-s:a.)', r'a(?i)*', r'(?U)(a|ab)+', r'(?U)a{1,2}',
    r'(?-m)^a', r'(?m)(?-m)^a$', r'(?i)(?s)(?m)(?U).+$', r'(?i)\x{212A}', r'(?i)[\x{212A}-\x{212B}]',
    # groups
    r'(?:)', r'(?:a|)', r'()', r'(|a)*', r'(a*)*', r'(a*)+', r'(a|ab)(c|bcd)(d*)', r'(a+)(b+)?', r'(a)|(b)',
    r'(?P<first>\w+) (?P<second>\w+)', r'(?<y>\d+)\.(?<m>\d+)', r'(\w+)@(\w+)\.com', r'((a)|b)+', r'(a)(?:b)(c)?',
    r'(?P<name>a)(?P<name>b)', r'(?P<1x>b)',
    # repetition
    r'a{2}', r'a{2,}', r'a{2,3}', r'a{0}', r'a{0,0}', r'a{,3}', r'a{1000}', r'(a{2}){500}', r'a{2}?', r'a{01}',
    r'x{', r'x{a}', r'{', r'}', r'a{2,3}?', r'(ab){1,2}', r'a*?', r'a??', r'a+?', r'a{1,}?', r'^*', r'$+',
    r'\b?', r'(?:a{1,2}){2}', r'((a{2}){2}){2}', r'a{0,1000}', r'(?:(?:a){1000})', r'\pL{3}',
    # anchors
    r'\Aa', r'a\z', r'^a|b$', r'\bw', r'\Bo', r'\b', r'\B', r'^$', r'(?m)^$', r'\A$', r'(?m)\Ab', r'c\n\z',
    # Unicode classes
    r'\pL+', r'\p{L}+', r'\PL+', r'\pN+', r'\p{Greek}+', r'\p{greek}+', r'\p{Lu}', r'(?i)\p{Lu}+', r'(?i)\P{Lu}+',
    r'\p{^Greek}+', r'\P{^Greek}+', r'\p{Han}+', r'\p{Katakana}', r'\p{Any}+', r'\p{Letter}+', r'\p{ASCII}+',
    r'\p{Assigned}+', r'\pZ', r'\p{Zs}+', r'\p{Lc}+', r'\p{LC}+', r'\p{lu}', r'\p{Upper_Case_Letter}',
    r'\p{Cased_Letter}', r'\p{L u}', r'\p{Latin}+', r'\p{Common}+', r'(?i)\p{Greek}+', r'\p{Cn}', r'\pC',
    r'\p{Co}', r'\p{Cs}', r'\pM', r'\pP+', r'\pS+', r'\p{Sc}',
    # miscellany
    'é', '.', '..', '日本', r'\x{FFFD}', 'a|b|c', 'x*', '', '$^', 'a.c', 'ß', 'Σ', '\t', 'a b', '\x00',
    r'[[:alnum:]_-]+', r'^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', r'^v?(\d+)\.(\d+)(\.(\d+))?(-[\w.]+)?$',
    r'(?i)^(true|yes|on)$', r'[A-Z][a-z]+', r'\s*,\s*', r'=+', r'(\d+)(\d)',
]

INVALID = [
    '(', ')', 'a)', '(a', '[a', '[]', '[^]', 'a**', 'a*+', 'a++', 'a?*', 'a*?*', 'a???', '*a', '+', '?', '{2}',
    'a{2}{3}', 'a{1001}', 'a{2,1}', '(a{10}){101}', r'\1', r'\8', r'\C', r'\Z', r'a\z\Z', r'\k<a>', r'\x',
    r'\x{', r'\x{}', r'\x{110000}', r'\xg', r'\x4', r'\p', r'\p{', r'\p{Foo}', r'\pX', r'\p{Old_Italic}', r'[\b]',
    r'[a-\d]', '[z-a]', '[[:foo:]]', '[[:alpha:]', '(?=a)', '(?!a)', '(?<=a)', '(?<!a)', '(?P=n)', '(?P<n>',
    '(?P<>a)', '(?P<a-b>c)', '(?i-)', '(?--i)', '(?z)', '(?', '(?i', '(?#c)', '(?>a)', '(?|a)', 'a\\', '\\',
    r'[\Q]', r'\pé', b'\xff', b'(\xff', b'[\xff]', b'a\xfe(', r'(?P<n\xff>)', r'\é', '(?<', '(?P<', 'x**y',
    r'[a-b-c]', r'[\d-\w]', r'\P{^}', r'\Q\xff', 'a{2}*', '(*)', 'a|*', '(?i)*', '(?:*)', '((a)', '(a))',
    '[[:a]b:]]', '[\\', 'a{1,1001}', '(?i)(?P<x>', '(' * 1100 + 'a' + ')' * 1100, r'\p{Letter',
    r'\P', r'[\p]', r'\u0041', r'\N{x}', r'\h', r'\R', r'\X', r'\G', r'\e', r'\cA', r'\o{1}', r'\K',
    '(a{2}){1000}', '((a{3}){3}){112}',
]
VALID.append('(' * 300 + 'a' + ')' * 300)

out = ['# Generated by regex_gen.py; edit there. Expected results come from the Go oracle (regen.sh).']
subj = ' '.join(golit(s) for s in SUBJECTS)
for i, p in enumerate(VALID):
    out.append('=== regex_go-v%03d' % i)
    out.append('--- template main')
    out.append('{{- $p := %s }}{{ range $i, $s := list %s }}' % (golit(p), subj))
    out.append('{{ $i }} m={{ regexMatch $p $s }} M={{ mustRegexMatch $p $s }} f={{ printf "%q" (regexFind $p $s) }}'
               ' a={{ printf "%q" (regexFindAll $p $s -1) }} a1={{ printf "%q" (regexFindAll $p $s 1) }}'
               ' a2={{ printf "%q" (mustRegexFindAll $p $s 2) }}'
               ' r={{ printf "%q" (regexReplaceAll $p $s "<$1|${name}|$0|${2}x|$$|$y>") }}'
               ' l={{ printf "%q" (regexReplaceAllLiteral $p $s "[$1]") }}'
               ' s={{ printf "%q" (regexSplit $p $s -1) }} s2={{ printf "%q" (mustRegexSplit $p $s 2) }}')
    out.append('{{- end }}')
CALLS = ['regexMatch $p "abc"', 'mustRegexMatch $p "abc"', 'regexFind $p "abc"', 'mustRegexFind $p "abc"',
         'regexFindAll $p "abc" -1', 'regexReplaceAll $p "abc" "x"', 'regexReplaceAllLiteral $p "abc" "x"',
         'regexSplit $p "abc" -1']
for i, p in enumerate(INVALID):
    for j, call in enumerate(CALLS):
        out.append('=== regex_go-e%03d-%d' % (i, j))
        out.append('--- template main')
        out.append('{{- $p := %s }}{{ %s }}' % (golit(p), call))
with open(os.path.join(HERE, 'regex_go.tcase'), 'w') as f:
    f.write('\n'.join(out) + '\n')
