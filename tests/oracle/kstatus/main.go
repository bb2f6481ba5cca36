// The kstatus oracle: reads Kubernetes objects (one JSON object a line, as the API server returns
// them) and prints, for each, the status and message that Helm v4's watcher wait computes for it
// (JSON lines), so that rudder's helm/action/ready.c can be compared with the real Go code.
//
// Usage: kstatus-oracle MODE < objects.jsonl > results.jsonl
//
//	wait       Helm's Wait: kstatus's default status readers; paused Deployments are skipped
//	wait-jobs  Helm's WaitWithJobs: the same, with Helm's own Job reader in front
//	hook       Helm's WatchUntilReady (hooks): Helm's Job and Pod readers, everything else ready
//
// The module path lies under helm.sh/helm/v4 only so that Go lets it import Helm's internal
// status readers (helm.sh/helm/v4/internal/statusreaders); nothing here is part of Helm.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/engine"
	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/statusreaders"
	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	helmreaders "helm.sh/helm/v4/internal/statusreaders"
	"helm.sh/helm/v4/pkg/kube"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/meta/testrestmapper"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// emptyCluster answers every lookup of generated objects (a Deployment's ReplicaSets, a
// StatefulSet's Pods) with nothing: they only decorate the result, never change its status.
type emptyCluster struct{}

func (emptyCluster) Get(context.Context, client.ObjectKey, *unstructured.Unstructured) error {
	return fmt.Errorf("not available in the oracle")
}
func (emptyCluster) ListNamespaceScoped(context.Context, *unstructured.UnstructuredList, string, labels.Selector) error {
	return nil
}
func (emptyCluster) ListClusterScoped(context.Context, *unstructured.UnstructuredList, labels.Selector) error {
	return nil
}
func (emptyCluster) Sync(context.Context) error { return nil }

// hookReady is what Helm's hook wait answers for every kind that is neither a Job nor a Pod.
func hookReady(*unstructured.Unstructured) (*status.Result, error) {
	return &status.Result{Status: status.CurrentStatus, Message: "Resource is current"}, nil
}

type result struct {
	Status  string `json:"status,omitempty"`
	Message string `json:"message"`
	Error   string `json:"error,omitempty"`
	Skipped bool   `json:"skipped,omitempty"`
}

func reader(mode string, mapper meta.RESTMapper) engine.StatusReader {
	switch mode {
	case "wait":
		return statusreaders.NewStatusReader(mapper)
	case "wait-jobs":
		return statusreaders.NewStatusReader(mapper, helmreaders.NewCustomJobStatusReader(mapper))
	case "hook":
		return &statusreaders.DelegatingStatusReader{StatusReaders: []engine.StatusReader{
			helmreaders.NewCustomJobStatusReader(mapper),
			helmreaders.NewCustomPodStatusReader(mapper),
			statusreaders.NewGenericStatusReader(mapper, hookReady),
		}}
	}
	return nil
}

// paused says whether Helm's wait leaves the object out (a paused apps/v1 Deployment), judged as
// Helm judges it: the object converted to its typed form.
func paused(u *unstructured.Unstructured, mapper meta.RESTMapper) bool {
	info := &resource.Info{Object: u}
	gvk := u.GroupVersionKind()
	if m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
		info.Mapping = m
	}
	d, ok := kube.AsVersioned(info).(*appsv1.Deployment)
	return ok && d.Spec.Paused
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: kstatus-oracle wait|wait-jobs|hook < objects.jsonl")
		os.Exit(2)
	}
	mode := os.Args[1]
	mapper := testrestmapper.TestOnlyStaticRESTMapper(scheme.Scheme)
	sr := reader(mode, mapper)
	if sr == nil {
		fmt.Fprintf(os.Stderr, "kstatus-oracle: unknown mode %q\n", mode)
		os.Exit(2)
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	for in.Scan() {
		var r result
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(in.Bytes()); err != nil {
			r.Error = "decode: " + err.Error()
		} else if mode != "hook" && paused(u, mapper) {
			r.Skipped = true
		} else if rs, err := sr.ReadStatusForObject(context.Background(), emptyCluster{}, u); err != nil {
			r.Error = err.Error()
		} else {
			r.Status, r.Message = rs.Status.String(), rs.Message
			if rs.Error != nil {
				r.Error = rs.Error.Error()
			}
		}
		if err := enc.Encode(&r); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := out.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
