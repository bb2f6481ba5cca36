package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"text/template"
	"time"

	"sigs.k8s.io/yaml"
)

// benchMain implements "template-oracle -bench N FILE.tcase...": it renders
// every case's non-partial templates (base name not starting with "_") N
// times the way Helm's engine does per release (parse the whole set, then
// execute each file, "<no value>" removed), and prints one line per case: ns
// per render (parse+execute, and execute only), bytes allocated per render,
// peak RSS, and the output's length and FNV-1a hash so that bench/template
// can check rudder renders the same bytes.
func benchMain(count string, paths []string) {
	n, err := strconv.Atoi(count)
	if err != nil || n <= 0 {
		fmt.Fprintln(os.Stderr, "template-oracle: -bench N: N must be a positive number")
		os.Exit(2)
	}
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "template-oracle:", err)
		os.Exit(2)
	}
	for _, p := range paths {
		cases, err := parseFile(p)
		if err != nil {
			fail(err)
		}
		for _, c := range cases {
			var vals any = map[string]any{}
			if err := yaml.Unmarshal([]byte(c.rawValues), &vals); err != nil {
				fail(err)
			}
			render := func(execOnly *time.Duration) string {
				t := template.New("gotpl")
				t.Option("missingkey=zero")
				t.Funcs(funcs(t, false))
				for _, tp := range c.Templates {
					if _, err := t.New(tp[0]).Parse(tp[1]); err != nil {
						fail(err)
					}
				}
				start := time.Now()
				var all strings.Builder
				for _, tp := range c.Templates {
					if strings.HasPrefix(tp[0][strings.LastIndex(tp[0], "/")+1:], "_") {
						continue
					}
					var b strings.Builder
					if err := t.ExecuteTemplate(&b, tp[0], vals); err != nil {
						fail(err)
					}
					all.WriteString(strings.ReplaceAll(b.String(), "<no value>", ""))
				}
				*execOnly += time.Since(start)
				return all.String()
			}
			var warm time.Duration
			out := render(&warm)
			var ms0, ms1 runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms0)
			var execOnly time.Duration
			start := time.Now()
			for i := 0; i < n; i++ {
				out = render(&execOnly)
			}
			total := time.Since(start)
			runtime.ReadMemStats(&ms1)
			var ru syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
			h := uint64(14695981039346656037)
			for i := 0; i < len(out); i++ {
				h = (h ^ uint64(out[i])) * 1099511628211
			}
			fmt.Printf("go %s renders=%d ns_per_render=%d exec_ns_per_render=%d alloc_bytes_per_render=%d maxrss_kb=%d out_bytes=%d fnv=%016x\n",
				c.Name, n, total.Nanoseconds()/int64(n), execOnly.Nanoseconds()/int64(n),
				(ms1.TotalAlloc-ms0.TotalAlloc)/uint64(n), ru.Maxrss, len(out), h)
		}
	}
}
