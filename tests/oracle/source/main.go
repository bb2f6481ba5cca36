// Command source-oracle answers chart-source questions with Helm v4's own code,
// so that rudder's helm/source can be compared with it.
//
// Modes (questions on stdin, one per line, tab-separated; one answer line each on
// stdout: "OK\t<answer>" or "ERR\t<error text>"):
//
//	index FILE   "<chart>\t<constraint>": repo.LoadIndexFile(FILE), then IndexFile.Get
//	             -> the chosen version
//	list FILE    "<chart>\t": repo.LoadIndexFile(FILE) -> the chart's versions as loaded
//	             (validated, sorted), space-separated
//	load FILE    (no questions): "OK" or "ERR\t<why>" for repo.LoadIndexFile(FILE)
//	tags         "<constraint>\t<tag> <tag> ...": the tag list processed as Helm's
//	             registry client does (StrictNewVersion after "_" -> "+", sorted
//	             newest first, String()), then registry.GetTagMatchingVersionOrConstraint
//	url          "<repository URL>\t<chart URL>": repo.ResolveReferenceURL
package main

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"

	"helm.sh/helm/v4/pkg/registry"
	repo "helm.sh/helm/v4/pkg/repo/v1"
)

func die(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "source-oracle: "+format+"\n", args...)
	os.Exit(1)
}

func answer(w io.Writer, s string, err error) {
	if err != nil {
		fmt.Fprintf(w, "ERR\t%s\n", strings.ReplaceAll(err.Error(), "\n", " "))
		return
	}
	fmt.Fprintf(w, "OK\t%s\n", s)
}

// helmTags mirrors what registry.Client.Tags does with a registry's tag list.
func helmTags(raw []string) []string {
	var vs []*semver.Version
	for _, t := range raw {
		v, err := semver.StrictNewVersion(strings.ReplaceAll(t, "_", "+"))
		if err == nil {
			vs = append(vs, v)
		}
	}
	sort.Sort(sort.Reverse(semver.Collection(vs)))
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.String()
	}
	return out
}

func main() {
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	if len(os.Args) < 2 {
		die("usage: source-oracle index FILE | tags | url")
	}
	var idx *repo.IndexFile
	switch os.Args[1] {
	case "index", "list":
		if len(os.Args) != 3 {
			die("usage: source-oracle index FILE")
		}
		var err error
		if idx, err = repo.LoadIndexFile(os.Args[2]); err != nil {
			die("%v", err)
		}
	case "load":
		if len(os.Args) != 3 {
			die("usage: source-oracle load FILE")
		}
		_, err := repo.LoadIndexFile(os.Args[2])
		answer(os.Stdout, "", err)
		return
	case "tags", "url":
	default:
		die("unknown mode %q", os.Args[1])
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<26)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		line := in.Text()
		a, b, ok := strings.Cut(line, "\t")
		if !ok {
			die("question without a tab: %q", line)
		}
		switch os.Args[1] {
		case "index":
			cv, err := idx.Get(a, b)
			if err != nil {
				answer(out, "", err)
			} else {
				answer(out, cv.Version, nil)
			}
		case "list":
			vs, ok := idx.Entries[a]
			if !ok {
				answer(out, "", fmt.Errorf("no chart name found"))
				continue
			}
			names := make([]string, len(vs))
			for i, v := range vs {
				names[i] = v.Version
			}
			answer(out, strings.Join(names, " "), nil)
		case "tags":
			var raw []string
			if b != "" {
				raw = strings.Split(b, " ")
			}
			tag, err := registry.GetTagMatchingVersionOrConstraint(helmTags(raw), a)
			answer(out, tag, err)
		case "url":
			s, err := repo.ResolveReferenceURL(a, b)
			answer(out, s, err)
		}
	}
	if err := in.Err(); err != nil {
		die("reading stdin: %v", err)
	}
}
