package faults

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseRequest(t *testing.T) {
	tests := []struct {
		method, path, query, contentType string
		want                             requestInfo
		ok                               bool
	}{
		{"GET", "/api/v1/namespaces/ns/configmaps/cm", "", "", requestInfo{verb: verbGet, resource: "configmaps", namespace: "ns", name: "cm"}, true},
		{"GET", "/api/v1/namespaces/ns/configmaps", "", "", requestInfo{verb: verbList, resource: "configmaps", namespace: "ns"}, true},
		{"GET", "/api/v1/configmaps", "watch=true", "", requestInfo{verb: verbWatch, resource: "configmaps"}, true},
		{"POST", "/apis/test.bosun.dev/v1/namespaces/ns/widgets", "", "", requestInfo{verb: verbCreate, group: "test.bosun.dev", resource: "widgets", namespace: "ns"}, true},
		{"PUT", "/apis/test.bosun.dev/v1/namespaces/ns/widgets/w/status", "", "", requestInfo{verb: verbUpdate, group: "test.bosun.dev", resource: "widgets", subresource: "status", namespace: "ns", name: "w"}, true},
		{"PATCH", "/apis/apps/v1/namespaces/ns/deployments/d", "", "application/apply-patch+yaml", requestInfo{verb: verbApply, group: "apps", resource: "deployments", namespace: "ns", name: "d"}, true},
		{"PATCH", "/apis/apps/v1/namespaces/ns/deployments/d", "", "application/merge-patch+json", requestInfo{verb: verbPatch, group: "apps", resource: "deployments", namespace: "ns", name: "d"}, true},
		{"DELETE", "/api/v1/namespaces/ns/secrets/s", "", "", requestInfo{verb: verbDelete, resource: "secrets", namespace: "ns", name: "s"}, true},
		{"DELETE", "/api/v1/namespaces/ns/secrets", "", "", requestInfo{verb: verbDeleteCollection, resource: "secrets", namespace: "ns"}, true},
		{"GET", "/api/v1/namespaces/ns", "", "", requestInfo{verb: verbGet, resource: "namespaces", name: "ns"}, true},
		{"PUT", "/api/v1/namespaces/ns/finalize", "", "", requestInfo{verb: verbUpdate, resource: "namespaces", name: "ns", subresource: "finalize"}, true},
		{"GET", "/version", "", "", requestInfo{}, false},
		{"GET", "/apis/apps", "", "", requestInfo{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			req := &http.Request{Method: tt.method, URL: &url.URL{Path: tt.path, RawQuery: tt.query}, Header: http.Header{}}
			if tt.contentType != "" {
				req.Header.Set("Content-Type", tt.contentType)
			}
			got, ok := parseRequest(req)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(requestInfo{})); diff != "" {
				t.Errorf("parseRequest (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRuleMatches(t *testing.T) {
	write := requestInfo{verb: verbPatch, resource: "widgets", subresource: "status"}
	read := requestInfo{verb: verbGet, resource: "widgets"}
	tests := []struct {
		name string
		rule Rule
		info requestInfo
		want bool
	}{
		{"writes by default", Rule{Fault: Conflict}, write, true},
		{"not reads by default", Rule{Fault: Conflict}, read, false},
		{"reads when named", Rule{Fault: InternalError, Verbs: []string{verbGet}}, read, true},
		{"a lost answer never for a read", Rule{Fault: ResponseLost, Verbs: []string{verbGet}}, read, false},
		{"subresource named", Rule{Fault: Conflict, Resources: []string{"widgets/status"}}, write, true},
		{"other resource", Rule{Fault: Conflict, Resources: []string{"widgets"}}, write, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.rule.matches(tt.info); got != tt.want {
				t.Errorf("matches = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestChanceIsRepeatableAndSpread(t *testing.T) {
	if chance(1, "a", "b") != chance(1, "a", "b") {
		t.Error("same inputs, different chances")
	}
	if chance(1, "a", "b") == chance(2, "a", "b") {
		t.Error("the seed changes nothing")
	}
	below := 0
	for i := range 1000 {
		c := chance(7, "x", string(rune('a'+i%26)), string(rune(i)))
		if c < 0 || c >= 1 {
			t.Fatalf("chance %v out of [0, 1)", c)
		}
		if c < 0.3 {
			below++
		}
	}
	if below < 230 || below > 370 {
		t.Errorf("%d of 1000 chances below 0.3; want about 300", below)
	}
}
