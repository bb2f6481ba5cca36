// Command template-oracle renders test cases with Go's text/template the way
// Helm v4.3.1's engine does, and prints one JSON line per case with the
// inputs and the expected result. It is the source of every expected output
// in tests/template; nothing there is written by hand.
//
// Usage: template-oracle FILE.tcase...   (JSON lines on stdout)
//
//	template-oracle -bench N FILE.tcase...   (render benchmark, see bench.go)
//
// Case file format (shared with the C runner through this program's output):
//
//	=== NAME                 starts a case
//	--- values               YAML (parsed like sigs.k8s.io/yaml) for dot
//	--- template NAME        a template's text (parsed in the order given)
//	--- entry NAME           template to execute (default: the first one)
//	--- mode helm|strict|go  helm: missingkey=zero, Helm's functions and
//	                         "<no value>" removed (default); strict: the same
//	                         with missingkey=error; go: plain text/template
//	# ...                    comment, only between cases
//
// A section's text is every line up to the next "---"/"===" line, joined by
// "\n" (so it has no final newline unless it ends with an empty line). A
// line "\---" or "\===" stands for the text without the backslash.
package main

import (
	"bufio"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"text/template"
	"unicode/utf8"
	_ "unsafe" // for go:linkname

	"github.com/Masterminds/sprig/v3"
	"golang.org/x/crypto/bcrypt"
	"helm.sh/helm/v4/pkg/chart/common"
	_ "helm.sh/helm/v4/pkg/engine"
	"sigs.k8s.io/yaml"
)

// helmFuncMap is Helm's own function table (Sprig plus toYaml, toJson, ...),
// taken from the engine so that the oracle uses exactly Helm's functions.
//
//go:linkname helmFuncMap helm.sh/helm/v4/pkg/engine.funcMap
func helmFuncMap() template.FuncMap

var _ = sprig.TxtFuncMap // Sprig is pinned in go.mod; Helm's table embeds it.

type tcase struct {
	Name      string      `json:"name"`
	Mode      string      `json:"mode"`
	Dot       string      `json:"dot,omitempty"`
	Entry     string      `json:"entry"`
	Templates [][2]string `json:"templates"`
	Values    any         `json:"values"`
	ValuesErr string      `json:"values_error,omitempty"`
	Output    *string     `json:"output,omitempty"`
	OutputB64 *string     `json:"output_b64,omitempty"`
	Error     *string     `json:"error,omitempty"`
	rawValues string
}

const recursionMaxNums = 1000

func warnWrap(s string) string { return "HELM_ERR_START" + s + "HELM_ERR_END" }

// The late-bound functions below behave as Helm's engine.go defines them.
func includeFun(t *template.Template, included map[string]int) func(string, any) (string, error) {
	return func(name string, data any) (string, error) {
		var b strings.Builder
		if v, ok := included[name]; ok {
			if v > recursionMaxNums {
				return "", fmt.Errorf("rendering template has a nested reference name: %s: %w",
					name, errors.New("unable to execute template"))
			}
			included[name]++
		} else {
			included[name] = 1
		}
		err := t.ExecuteTemplate(&b, name, data)
		included[name]--
		return b.String(), err
	}
}

func tplFun(parent *template.Template, included map[string]int, strict bool) func(string, any) (string, error) {
	return func(text string, vals any) (string, error) {
		t, err := parent.Clone()
		if err != nil {
			return "", fmt.Errorf("cannot clone template: %w", err)
		}
		if strict {
			t.Option("missingkey=error")
		} else {
			t.Option("missingkey=zero")
		}
		t.Funcs(template.FuncMap{
			"include": includeFun(t, included),
			"tpl":     tplFun(t, included, strict),
		})
		t, err = t.New(parent.Name()).Parse(text)
		if err != nil {
			return "", fmt.Errorf("cannot parse template %q: %w", text, err)
		}
		var b strings.Builder
		if err := t.Execute(&b, vals); err != nil {
			return "", fmt.Errorf("error during tpl function execution for %q: %w", text, err)
		}
		return strings.ReplaceAll(b.String(), "<no value>", ""), nil
	}
}

func funcs(t *template.Template, strict bool) template.FuncMap {
	f := helmFuncMap()
	included := map[string]int{}
	f["include"] = includeFun(t, included)
	f["tpl"] = tplFun(t, included, strict)
	f["required"] = func(warn string, val any) (any, error) {
		if val == nil {
			return val, errors.New(warnWrap(warn))
		} else if _, ok := val.(string); ok {
			if val == "" {
				return val, errors.New(warnWrap(warn))
			}
		}
		return val, nil
	}
	f["fail"] = func(msg string) (string, error) { return "", errors.New(warnWrap(msg)) }
	f["getHostByName"] = func(_ string) string { return "" }
	return f
}

func run(c *tcase) {
	var vals any = map[string]any{}
	if strings.TrimSpace(c.rawValues) != "" {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(c.rawValues), &m); err != nil {
			c.ValuesErr = err.Error()
		} else if m != nil {
			vals = m
		}
	}
	// Snapshot the values before rendering: set/unset in a template mutate the map.
	if raw, err := json.Marshal(vals); err == nil {
		c.Values = json.RawMessage(raw)
	} else {
		c.Values = vals
	}
	var dot any = vals
	if c.Dot == "helm" {
		dot = helmDot(vals.(map[string]any))
	}
	out, err := render(c, dot)
	if err != nil {
		s := err.Error()
		c.Error = &s
		return
	}
	if c.Mode == "helm" {
		out = strings.ReplaceAll(out, "<no value>", "")
	}
	if utf8.ValidString(out) && !strings.ContainsRune(out, 0) {
		c.Output = &out
	} else {
		s := base64.StdEncoding.EncodeToString([]byte(out))
		c.OutputB64 = &s
	}
}

func render(c *tcase, vals any) (out string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	t := template.New("gotpl")
	strict := c.Mode == "strict"
	switch c.Mode {
	case "strict":
		t.Option("missingkey=error")
	case "helm":
		t.Option("missingkey=zero")
	}
	if c.Mode != "go" {
		t.Funcs(funcs(t, strict))
	}
	for _, tp := range c.Templates {
		if _, err := t.New(tp[0]).Parse(tp[1]); err != nil {
			return "", err
		}
	}
	var b strings.Builder
	if err := t.ExecuteTemplate(&b, c.Entry, vals); err != nil {
		return "", err
	}
	return b.String(), nil
}

func parseFile(path string) ([]*tcase, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var cases []*tcase
	var cur *tcase
	var sec string
	var lines []string
	flush := func() {
		if cur == nil || sec == "" {
			return
		}
		text := strings.Join(lines, "\n")
		switch {
		case sec == "values":
			cur.rawValues = text
		case strings.HasPrefix(sec, "template "):
			cur.Templates = append(cur.Templates, [2]string{strings.TrimPrefix(sec, "template "), text})
		}
		sec, lines = "", nil
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	ln := 0
	for sc.Scan() {
		ln++
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "=== "):
			flush()
			cur = &tcase{Name: strings.TrimPrefix(line, "=== "), Mode: "helm"}
			cases = append(cases, cur)
		case strings.HasPrefix(line, "--- "):
			flush()
			if cur == nil {
				return nil, fmt.Errorf("%s:%d: section outside a case", path, ln)
			}
			s := strings.TrimPrefix(line, "--- ")
			switch {
			case strings.HasPrefix(s, "entry "):
				cur.Entry = strings.TrimPrefix(s, "entry ")
			case strings.HasPrefix(s, "mode "):
				cur.Mode = strings.TrimPrefix(s, "mode ")
			case s == "dot helm":
				cur.Dot = "helm"
			case s == "values" || strings.HasPrefix(s, "template "):
				sec = s
			default:
				return nil, fmt.Errorf("%s:%d: unknown section %q", path, ln, s)
			}
		default:
			if sec == "" {
				if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
					continue
				}
				return nil, fmt.Errorf("%s:%d: text outside a section", path, ln)
			}
			if strings.HasPrefix(line, "\\---") || strings.HasPrefix(line, "\\===") {
				line = line[1:]
			}
			lines = append(lines, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	flush()
	for _, c := range cases {
		if c.Entry == "" && len(c.Templates) > 0 {
			c.Entry = c.Templates[0][0]
		}
	}
	return cases, nil
}

// bcryptVerify reads "HEXPASSWORD HASH" lines and checks each hash with
// golang.org/x/crypto/bcrypt (for rudder's property tests of bcrypt and
// htpasswd, whose salts are random). Prints one "ok"/"FAIL ..." line each and
// exits 1 when any hash does not verify.
func bcryptVerify() {
	sc := bufio.NewScanner(os.Stdin)
	bad := false
	for sc.Scan() {
		pw, hash, _ := strings.Cut(sc.Text(), " ")
		p, err := hex.DecodeString(pw)
		if err == nil {
			err = bcrypt.CompareHashAndPassword([]byte(hash), p)
		}
		if err == nil {
			if c, cerr := bcrypt.Cost([]byte(hash)); cerr != nil || c != bcrypt.DefaultCost {
				err = fmt.Errorf("cost %d (%v)", c, cerr)
			}
		}
		if err != nil {
			bad = true
			fmt.Printf("FAIL %s: %v\n", hash, err)
		} else {
			fmt.Println("ok")
		}
	}
	if bad {
		os.Exit(1)
	}
}

func main() {
	if len(os.Args) > 2 && os.Args[1] == "-bench" {
		benchMain(os.Args[2], os.Args[3:])
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "-bcrypt-verify" {
		bcryptVerify()
		return
	}
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	enc := json.NewEncoder(w)
	for _, p := range os.Args[1:] {
		cases, err := parseFile(p)
		if err != nil {
			fmt.Fprintln(os.Stderr, "template-oracle:", err)
			os.Exit(2)
		}
		for _, c := range cases {
			run(c)
			if err := enc.Encode(c); err != nil {
				fmt.Fprintln(os.Stderr, "template-oracle:", c.Name, err)
				os.Exit(2)
			}
		}
	}
}

// helmDot is the data of a "--- dot helm" case: Helm's own named types, so
// that methods, ranging and printing of host values can be compared:
//
//	.Values     common.Values (the case's values)
//	.Template   common.Values{"Name": "chart/templates/x.yaml", "BasePath": "chart/templates"}
//	.Bytes      []byte("hi")
//	.NoBytes    []byte(nil)
//	.FileMap    map[string][]byte{"a.txt": "A\n", "b/c.txt": "hi"} (the shape of Helm's files)
//	.APIs       common.VersionSet{"apps/v1", "v1"}
//	.KV         common.KubeVersion parsed from "v1.20.0-gke.1" (a struct; String() is on the pointer)
//	.KVp        the same as *common.KubeVersion
//	.Caps       &common.Capabilities{KubeVersion: *KVp, APIVersions: APIs} (a pointer to a struct without String())
func helmDot(vals map[string]any) map[string]any {
	kv, err := common.ParseKubeVersion("v1.20.0-gke.1")
	if err != nil {
		panic(err)
	}
	caps := &common.Capabilities{KubeVersion: *kv, APIVersions: common.VersionSet{"apps/v1", "v1"}}
	return map[string]any{
		"KV":       *kv,
		"KVp":      kv,
		"Caps":     caps,
		"Values":   common.Values(vals),
		"Template": common.Values{"Name": "chart/templates/x.yaml", "BasePath": "chart/templates"},
		"Bytes":    []byte("hi"),
		"NoBytes":  []byte(nil),
		"FileMap":  map[string][]byte{"a.txt": []byte("A\n"), "b/c.txt": []byte("hi")},
		"APIs":     common.VersionSet{"apps/v1", "v1"},
	}
}
