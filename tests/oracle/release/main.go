// Command release-oracle runs Helm's own release types and storage driver so
// that rudder's C encoder and decoder can be compared with Helm byte for byte.
//
// Modes (input on stdin, output on stdout, errors on stderr with exit 1):
//
//	reencode            release JSON -> Helm v4 json.Unmarshal -> json.Marshal
//	secret-get NS NAME  Secret (API JSON) -> Helm v4 Secrets driver Get -> release JSON
//	secret-create NS    release JSON -> Helm v4 Secrets driver Create -> Secret (API JSON)
//	sample-v4           a release built from Helm v4 types, stored by the v4 driver -> Secret JSON
//	sample-v3           the same with Helm v3 types and the v3 driver -> Secret JSON
//	install             {"name","namespace","files":{path:text},"config":{...}} ->
//	                    Helm v4 install (fake cluster) -> release JSON
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	chart3 "helm.sh/helm/v3/pkg/chart"
	rel3 "helm.sh/helm/v3/pkg/release"
	driver3 "helm.sh/helm/v3/pkg/storage/driver"
	time3 "helm.sh/helm/v3/pkg/time"

	"helm.sh/helm/v4/pkg/action"
	ccommon "helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/loader/archive"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	kubefake "helm.sh/helm/v4/pkg/kube/fake"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	rspb "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
)

func die(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "release-oracle: "+format+"\n", args...)
	os.Exit(1)
}

func readStdin() []byte {
	b, err := io.ReadAll(os.Stdin)
	if err != nil {
		die("reading stdin: %v", err)
	}
	return b
}

func writeJSON(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		die("marshal: %v", err)
	}
	os.Stdout.Write(b)
}

func secretKey(name string, version int) string {
	return "sh.helm.release.v1." + name + ".v" + strconv.Itoa(version)
}

// storedSecret fetches the one Secret the fake clientset holds.
func storedSecret(cs *fake.Clientset, ns, key string) *v1.Secret {
	s, err := cs.CoreV1().Secrets(ns).Get(context.Background(), key, metav1.GetOptions{})
	if err != nil {
		die("get stored secret: %v", err)
	}
	// The API server fills these; a fake clientset does not.
	s.APIVersion = "v1"
	s.Kind = "Secret"
	return s
}

func modeReencode() {
	var r rspb.Release
	if err := json.Unmarshal(readStdin(), &r); err != nil {
		die("decode release: %v", err)
	}
	writeJSON(&r)
}

func modeSecretGet(ns, name string) {
	var s v1.Secret
	if err := json.Unmarshal(readStdin(), &s); err != nil {
		die("decode secret: %v", err)
	}
	s.Namespace = ns
	cs := fake.NewSimpleClientset(&s)
	d := driver.NewSecrets(cs.CoreV1().Secrets(ns))
	r, err := d.Get(name)
	if err != nil {
		die("driver get: %v", err)
	}
	writeJSON(r)
}

func modeSecretCreate(ns string) {
	var r rspb.Release
	if err := json.Unmarshal(readStdin(), &r); err != nil {
		die("decode release: %v", err)
	}
	cs := fake.NewSimpleClientset()
	d := driver.NewSecrets(cs.CoreV1().Secrets(ns))
	key := secretKey(r.Name, r.Version)
	if err := d.Create(key, &r); err != nil {
		die("driver create: %v", err)
	}
	writeJSON(storedSecret(cs, ns, key))
}

func sampleTimes() (time.Time, time.Time, time.Time) {
	east := time.FixedZone("", 5*3600+30*60)
	west := time.FixedZone("", -7*3600)
	return time.Date(2024, 2, 29, 23, 59, 58, 123456789, east),
		time.Date(2025, 7, 1, 8, 0, 0, 500000000, west),
		time.Date(2025, 7, 2, 9, 10, 11, 0, time.UTC)
}

func modeSampleV4() {
	first, last, done := sampleTimes()
	ch := &chart.Chart{
		Metadata: &chart.Metadata{
			Name: "demo", Home: "https://example.com/?a=1&b=<2>", Sources: []string{"https://src"},
			Version: "1.2.3-rc.1+build", Description: "Demo \"chart\" \u2028 é", Keywords: []string{"a", "b"},
			Maintainers: []*chart.Maintainer{{Name: "Ann", Email: "ann@example.com"}, {Name: "Bob", URL: "https://bob"}},
			Icon:        "https://icon", APIVersion: "v2", Condition: "demo.enabled", Tags: "t1,t2",
			AppVersion: "10.0", Deprecated: true,
			Annotations: map[string]string{"z": "last", "a": "first", "category": "x&y"},
			KubeVersion: ">=1.20.0-0",
			Dependencies: []*chart.Dependency{
				{Name: "dep", Version: "~1.0", Repository: "https://charts", Condition: "dep.enabled",
					Tags: []string{"x"}, Enabled: true, ImportValues: []any{"data", map[string]any{"child": "a", "parent": "b"}}, Alias: "d1"},
				{Name: "bare", Repository: ""},
			},
			Type: "application",
		},
		Lock: &chart.Lock{Generated: done, Digest: "sha256:abc",
			Dependencies: []*chart.Dependency{{Name: "dep", Version: "1.0.4", Repository: "https://charts"}}},
		Templates: []*ccommon.File{
			{Name: "templates/cm.yaml", Data: []byte("apiVersion: v1\nkind: ConfigMap\n")},
			{Name: "templates/_helpers.tpl", Data: []byte{}, ModTime: done},
		},
		Values: map[string]any{"replicas": float64(3), "big": float64(1e21), "small": 1e-7, "neg": -0.5,
			"name": "<x>", "list": []any{true, nil, "s", float64(1000000)}, "nested": map[string]any{"b": "2", "a": map[string]any{}}},
		Schema:        []byte(`{"type":"object"}`),
		SchemaModTime: done,
		Files:         []*ccommon.File{{Name: "README.md", Data: []byte("# hi\x00\xff")}},
		ModTime:       done,
	}
	r := &rspb.Release{
		Name: "demo-rel",
		Info: &rspb.Info{FirstDeployed: first, LastDeployed: last, Description: "Upgrade complete",
			Status: rcommon.StatusDeployed, RollbackRevision: 2, Notes: "Thanks & <enjoy>\n"},
		Chart:    ch,
		Config:   map[string]any{"replicas": float64(5), "image": map[string]any{"tag": "v1.2"}, "e": ""},
		Manifest: "---\n# Source: demo/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\n\n",
		Hooks: []*rspb.Hook{{Name: "pre", Kind: "Job", Path: "demo/templates/job.yaml", Manifest: "kind: Job\n",
			Events:  []rspb.HookEvent{rspb.HookPreInstall, rspb.HookPreUpgrade},
			LastRun: rspb.HookExecution{StartedAt: first, CompletedAt: last, Phase: rspb.HookPhaseSucceeded},
			Weight:  -5, DeletePolicies: []rspb.HookDeletePolicy{rspb.HookBeforeHookCreation},
			OutputLogPolicies: []rspb.HookOutputLogPolicy{rspb.HookOutputOnFailed}},
			{Name: "t", Kind: "Pod", Path: "demo/templates/t.yaml", Manifest: "kind: Pod\n", Events: []rspb.HookEvent{rspb.HookTest}}},
		Version:     7,
		Namespace:   "apps",
		Labels:      map[string]string{"team": "blue"},
		ApplyMethod: string(rspb.ApplyMethodServerSideApply),
	}
	cs := fake.NewSimpleClientset()
	d := driver.NewSecrets(cs.CoreV1().Secrets("store"))
	key := secretKey(r.Name, r.Version)
	if err := d.Create(key, r); err != nil {
		die("driver create: %v", err)
	}
	writeJSON(storedSecret(cs, "store", key))
}

func modeSampleV3() {
	first, last, _ := sampleTimes()
	ch := &chart3.Chart{
		Metadata: &chart3.Metadata{Name: "old", Version: "0.1.0", APIVersion: "v1", AppVersion: "1",
			Dependencies: []*chart3.Dependency{{Name: "dep", Repository: "https://r"}}},
		Templates: []*chart3.File{{Name: "templates/a.yaml", Data: []byte("kind: A\n")}},
		Values:    map[string]interface{}{"a": float64(1), "s": "x<y"},
	}
	r := &rel3.Release{
		Name: "legacy",
		Info: &rel3.Info{FirstDeployed: time3.Time{Time: first}, LastDeployed: time3.Time{Time: last},
			Description: "Install complete", Status: rel3.StatusDeployed},
		Chart:    ch,
		Config:   map[string]interface{}{"a": float64(2)},
		Manifest: "---\n# Source: old/templates/a.yaml\nkind: A\n\n",
		Hooks: []*rel3.Hook{{Name: "h", Kind: "Job", Path: "old/templates/h.yaml", Manifest: "kind: Job\n",
			Events: []rel3.HookEvent{rel3.HookPostInstall}}},
		Version:   3,
		Namespace: "legacy-ns",
	}
	cs := fake.NewSimpleClientset()
	d := driver3.NewSecrets(cs.CoreV1().Secrets("store"))
	key := secretKey(r.Name, r.Version)
	if err := d.Create(key, r); err != nil {
		die("v3 driver create: %v", err)
	}
	writeJSON(storedSecret(cs, "store", key))
}

type installInput struct {
	Name      string            `json:"name"`
	Namespace string            `json:"namespace"`
	Files     map[string]string `json:"files"`
	Config    map[string]any    `json:"config"`
}

func modeInstall() {
	var in installInput
	if err := json.Unmarshal(readStdin(), &in); err != nil {
		die("decode input: %v", err)
	}
	names := make([]string, 0, len(in.Files))
	for n := range in.Files {
		names = append(names, n)
	}
	sort.Strings(names)
	var files []*archive.BufferedFile
	for _, n := range names {
		files = append(files, &archive.BufferedFile{Name: n, Data: []byte(in.Files[n])})
	}
	ch, err := loader.LoadFiles(files)
	if err != nil {
		die("load chart: %v", err)
	}
	cfg := &action.Configuration{
		Releases:     storage.Init(driver.NewMemory()),
		KubeClient:   &kubefake.PrintingKubeClient{Out: io.Discard},
		Capabilities: ccommon.DefaultCapabilities,
	}
	inst := action.NewInstall(cfg)
	inst.ReleaseName = in.Name
	inst.Namespace = in.Namespace
	rel, err := inst.Run(ch, in.Config)
	if err != nil {
		die("install: %v", err)
	}
	writeJSON(rel)
}

func main() {
	if len(os.Args) < 2 {
		die("usage: release-oracle reencode|secret-get NS NAME|secret-create NS|sample-v4|sample-v3|install")
	}
	switch os.Args[1] {
	case "reencode":
		modeReencode()
	case "secret-get":
		if len(os.Args) != 4 {
			die("usage: secret-get NS NAME")
		}
		modeSecretGet(os.Args[2], os.Args[3])
	case "secret-create":
		if len(os.Args) != 3 {
			die("usage: secret-create NS")
		}
		modeSecretCreate(os.Args[2])
	case "sample-v4":
		modeSampleV4()
	case "sample-v3":
		modeSampleV3()
	case "install":
		modeInstall()
	default:
		die("unknown mode %q", os.Args[1])
	}
}
